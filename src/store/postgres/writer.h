// The PostgreSQL side of group commit (store/group_commit.h): the write
// connection, the transaction each batch runs in, the notifications its
// commit sends, and the probe of a degraded store.
//
// commit() runs the batch's requests without savepoints first; PostgreSQL
// aborts the whole transaction at a request's first failed statement, so if
// a request is refused the transaction is rolled back and the batch runs
// again with each request in its own savepoint. A request refused by a
// unique violation (another node inserted the same key meanwhile) runs once
// more inside its savepoint, and then sees the other node's row. A
// serialization failure or deadlock runs the whole batch again (a few
// times). With the COMMIT (one round trip), one pg_notify per 7,900 bytes
// of "<instance> <session> <seq> <wake>" lines names the sessions the batch
// appended to; PostgreSQL delivers them when the transaction commits.
//
// The batch's time is the database's clock_timestamp() read when its
// transaction begins, advanced by this machine's monotonic clock while the
// batch runs (a test clock replaces both).
//
// A lost connection dooms the batch; probe() reconnects and commits an
// update that changes nothing.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "store/group_commit.h"
#include "store/postgres/pq.h"
#include "store/postgres/rows.h"
#include "util/clock.h"

namespace tether::store::postgres {

// The database's clock, in ms since the epoch.
result<time_ms> database_now(connection& db);

// The channels of notifications between nodes.
inline constexpr const char* events_channel = "tether_events";
inline constexpr const char* control_channel = "tether_control";

class pg_writer final : public batch_committer {
 public:
  struct options {
    std::string url;
    std::string instance;                  // this process, in notifications
    const tether::clock* clock = nullptr;  // tests only
    std::function<bool()> fail_commit;
  };
  pg_writer(options o, std::unique_ptr<connection> db);
  ~pg_writer() override;
  pg_writer(const pg_writer&) = delete;
  pg_writer& operator=(const pg_writer&) = delete;

  std::optional<batch_failure> commit(write_batch& ops) override;
  result<void> probe() override;

  // Closes the write connection (after the writer thread ended). Idempotent.
  void close() { db_.reset(); }

 private:
  enum class pass { ok, refused, retry_batch };
  std::optional<batch_failure> doomed(const tether::error& cause);
  // One attempt of the whole batch; nullopt and `again` set when a
  // serialization failure asks for another.
  std::optional<batch_failure> attempt(write_batch& ops, bool& again);
  std::optional<tether::error> begin();
  pass run_all(write_batch& ops);
  std::optional<tether::error> run_saved(write_batch& ops, bool& again);
  // The pg_notify statements that name the sessions the batch appended to.
  [[nodiscard]] std::string notifications() const;
  time_ms now();

  options options_;
  std::unique_ptr<connection> db_;
  pg_rows rows_;
  time_ms batch_time_ = 0;
  std::chrono::steady_clock::time_point batch_started_;
};

}  // namespace tether::store::postgres
