// The SQLite backend of event_store: the embedded default.
//
// One database file in WAL mode with synchronous=FULL, so an acknowledged
// append survives kill -9 and power loss. Writes go through the shared
// group-committing writer (store/group_commit.h) and the shared projection
// and lease rules (store/projector.h, store/leases.h); this backend gives
// them its rows (store/sqlite/rows.h) and its transaction, commit and probe
// (store/sqlite/writer.h: one write connection, savepoints only when a
// request of the batch is refused, background WAL checkpoints, see
// checkpoint_pages). Reads use separate connections on a small reader pool,
// so they never wait for the writer. Live tails are the shared hub's
// (store/tail.h).
//
// Time: every event time, lease and fence decision uses `clock` (the system
// clock by default), so tests move time by giving a manual_clock.
//
// open() applies the versioned schema migrations (store/sqlite/schema.cpp);
// a database whose schema version is newer than this binary's is refused
// with store_errc::schema_too_new.
//
// A failed COMMIT (full disk, I/O error) fails its batch with write_failed
// and makes the store degraded (event_store.h, Storage failures): writes are
// refused at once with storage_unavailable, and the writer retries after
// 100 ms, then after twice as long each time up to 5 s (retry_initial_ms,
// retry_max_ms): it reopens its connection and commits a probe. The first
// probe that commits makes the store ok again. The metrics
// tether_store_degraded and tether_store_write_failures_total follow it.
//
// open() first runs PRAGMA quick_check and logs how long it
// took. A damaged database (a page that is not a valid b-tree page, a broken
// freelist) is refused with
// store_errc::damaged and a message that says how to inspect and recover it,
// before anything is written to it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "store/event_store.h"
#include "util/clock.h"

namespace tether::store {

struct sqlite_options {
  std::string path;                      // database file; created if missing
  const tether::clock* clock = nullptr;  // event times, leases and fences; the real clock when null
  std::size_t readers = 2;               // reader threads/connections
  std::size_t max_batch = 1024;          // write requests per group commit
  std::size_t tail_buffer = 4096;        // items a session tail buffers before re-reading (tail_all() takes its own)
  std::size_t tail_buffer_bytes = 1U << 20U;  // bytes any tail buffers (deltas dropped first; see store/tail.h)
  // WAL frames after which a background thread checkpoints the WAL into the
  // database. Large, so a page rewritten by many commits is copied once.
  int checkpoint_pages = 16'384;
  // Degraded: the first retry after retry_initial_ms, each next one after
  // twice as long, at most retry_max_ms.
  int retry_initial_ms = 100;
  int retry_max_ms = 5'000;
  // Test hook, called by the writer before each COMMIT (the retry probes'
  // too): returning true makes that commit fail as if the disk had failed.
  std::function<bool()> fail_commit;
};

// The schema version this binary writes.
int sqlite_schema_version();

result<std::unique_ptr<event_store>> open_sqlite_store(sqlite_options options);

// Counters of the writer, for tests and benchmarks.
struct sqlite_stats {
  std::uint64_t commits = 0;        // successful group commits
  std::uint64_t requests = 0;       // write requests in those commits (rejected ones included)
  std::uint64_t largest_batch = 0;  // most requests in one commit
  std::uint64_t writer_cpu_us = 0;  // CPU time the writer thread spent committing
};
// The counters of a store made by open_sqlite_store; zeroes for any other store.
sqlite_stats sqlite_stats_of(const event_store& store);

}  // namespace tether::store
