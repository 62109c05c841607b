// The PostgreSQL backend of event_store: one database shared by several
// Tether nodes.
//
// Writes go through the shared group-committing writer and rules
// (store/committed_store.h) over this backend's rows (store/postgres/rows.h)
// and transaction (store/postgres/writer.h): many appends in one
// transaction, synchronous_commit on, each caller resumed after COMMIT
// returned. Rows a request depends on are locked (the session row for an
// append, the lease row for lease decisions and fences), so nodes writing
// the same session are serialized by the database. Reads run on their own
// connections in REPEATABLE READ READ ONLY transactions on a small pool of
// threads: no io thread ever waits on the database.
//
// Time: the database's clock (clock_timestamp()) for every event time,
// lease and fence decision, and for list_abandoned; never a node's. Tests
// may give `clock` instead (the conformance suite moves time by hand).
//
// Several nodes: every commit that inserts events NOTIFYs channel
// tether_events with "<instance> <session> <seq> <wake>" lines, delivered
// to the other nodes when the transaction commits. A listener thread per
// store (its own connection, LISTEN) hands another instance's commits to the
// session tails (which re-read the new events from the database, in order)
// and to the watcher set with watch_foreign(); signal() sends a control
// message (an interrupt) the same way on tether_control. The global tail
// (tail_all) and ephemeral events (deltas) stay node-local. When the
// listener loses its connection it reconnects with backoff and reports a
// resync (notifications may have been missed).
//
// Failures: a lost connection fails the batch (write_failed) and degrades
// the store (event_store.h, Storage failures); the writer's probe reconnects
// with backoff. A read on a lost connection fails with read_failed and the
// next read reconnects. Serialization failures and deadlocks between nodes
// run the batch again; a unique violation (two nodes inserting the same
// input id or lease row at once) runs that request again, which then sees
// the other's row (duplicate_input, lease_held).
//
// open_postgres_store() connects, applies the schema migrations under an
// advisory lock (store/postgres/schema.h) and refuses a newer schema.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "store/event_store.h"
#include "util/clock.h"

namespace tether::store {

struct postgres_options {
  std::string url;                       // postgres://… or key=value conninfo
  const tether::clock* clock = nullptr;  // tests only: replaces the database's clock
  std::size_t readers = 4;               // reader threads/connections
  std::size_t max_batch = 1024;
  std::size_t tail_buffer = 4096;
  std::size_t tail_buffer_bytes = 1U << 20U;
  int retry_initial_ms = 100;
  int retry_max_ms = 5'000;
  // Test hook, as sqlite_options::fail_commit.
  std::function<bool()> fail_commit;
};

// Whether a store setting names a PostgreSQL database.
bool is_postgres_url(std::string_view store);

int postgres_schema_version();

// The URL with its password replaced by ***, for messages and logs.
std::string redacted_url(std::string_view url);

result<std::unique_ptr<event_store>> open_postgres_store(postgres_options options);

// What `tether doctor` checks: the connection, the schema version and the
// database's clock against this machine's.
struct postgres_check {
  std::string server_version;
  int schema_version = 0;     // stored (0: none yet)
  time_ms clock_skew_ms = 0;  // the database's now minus this machine's
};
result<postgres_check> check_postgres(const std::string& url);

}  // namespace tether::store
