// The SQLite side of group commit (store/group_commit.h): the write
// connection, the transaction each batch runs in, the probe of a degraded
// store, and the background WAL checkpoints.
//
// commit() runs the batch's requests optimistically without savepoints
// (they cost the writer about a tenth of its time: every page a request
// touches is copied into the statement journal); if a request is refused,
// its partial writes cannot be undone alone, so the whole transaction is
// rolled back and the batch runs again with each request in its own
// savepoint. Then one COMMIT: one fsync (WAL, synchronous=FULL).
//
// A failure that is not a request's fault (db.h: fatal) dooms the batch.
// probe() reopens the write connection (whatever state the failure left the
// old one in goes with it) and commits PRAGMA user_version rewritten with
// its own value: page 1 through the WAL and an fsync, the shape of any
// commit, changing nothing.
//
// Checkpoints: SQLite would otherwise checkpoint inside the writer's COMMIT
// every few group commits. A thread of its own with its own connection runs
// a PASSIVE checkpoint (never blocking the writer or readers) once the WAL
// holds checkpoint_pages frames; if it falls far behind, the writer
// checkpoints itself so the WAL stays bounded.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "store/group_commit.h"
#include "store/sqlite/db.h"
#include "store/sqlite/rows.h"
#include "util/clock.h"

namespace tether::store::sqlite {

// WAL mode (refused with open_failed when SQLite cannot use it),
// synchronous=FULL and the writer's pragmas.
result<void> configure_writer(connection& db);

class checkpointer;

class sqlite_writer final : public batch_committer {
 public:
  struct options {
    std::string path;
    int checkpoint_pages = 16'384;
    std::function<bool()> fail_commit;  // see sqlite_options::fail_commit
  };
  sqlite_writer(options o, std::unique_ptr<connection> db, std::unique_ptr<connection> checkpoints,
                const tether::clock& clock);
  ~sqlite_writer() override;
  sqlite_writer(const sqlite_writer&) = delete;
  sqlite_writer& operator=(const sqlite_writer&) = delete;

  std::optional<batch_failure> commit(write_batch& ops) override;
  result<void> probe() override;

  // After the writer thread ended. Idempotent.
  void stop_checkpoints();
  // Ends the checkpoints and closes the write connection (after the readers:
  // the last connection to close checkpoints the WAL, and only a read-write
  // one can). Idempotent.
  void close();

 private:
  std::optional<batch_failure> doomed(const tether::error& cause);
  std::optional<tether::error> run_one(write_op& op);
  void watch_wal(connection& db);

  options options_;
  std::unique_ptr<connection> db_;
  sqlite_rows rows_;
  std::unique_ptr<checkpointer> checkpointer_;
  bool wal_over_limit_ = false;  // writer thread only
};

}  // namespace tether::store::sqlite
