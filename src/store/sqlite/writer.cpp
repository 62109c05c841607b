#include "store/sqlite/writer.h"

#include <pthread.h>

#include <algorithm>

#include <spdlog/spdlog.h>

namespace tether::store::sqlite {

namespace {

constexpr int writer_checkpoint_pages = 65'536;  // 256 MiB of WAL at 4 KiB pages

std::optional<tether::error> begin(connection& db) {
  if (auto r = db.run("BEGIN IMMEDIATE"); !r) {
    (void)db.take_fatal();
    return tether::error(store_errc::write_failed, "cannot start a write transaction: " + r.error().message);
  }
  return std::nullopt;
}

// A failure that is not the request's fault: it dooms the batch.
std::optional<tether::error> checked(connection& db) {
  if (auto fatal = db.take_fatal()) return fatal;
  if (!db.in_transaction()) return tether::error(store_errc::write_failed, "SQLite rolled the transaction back");
  return std::nullopt;
}

tether::error injected() { return {store_errc::write_failed, "commit failed (injected by fail_commit)"}; }

}  // namespace

result<void> configure_writer(connection& db) {
  {
    auto q = db.prepare("PRAGMA journal_mode=WAL");
    auto row = q.step();
    if (!row) return row.error();
    const std::string mode = *row ? q.text(0) : std::string();
    if (mode != "wal")
      return make_error(store_errc::open_failed, "cannot use WAL mode (journal_mode is '" + mode + "')");
  }
  return db.exec(
      "PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON; PRAGMA cache_size=-65536; PRAGMA temp_store=MEMORY;");
}

class checkpointer {
 public:
  explicit checkpointer(std::unique_ptr<connection> db)
      : db_(std::move(db)), thread_([this] {
          pthread_setname_np(pthread_self(), "store-checkpt");
          loop();
        }) {}
  ~checkpointer() { stop(); }
  checkpointer(const checkpointer&) = delete;
  checkpointer& operator=(const checkpointer&) = delete;

  // From the writer's WAL hook: a checkpoint is due.
  void request() {
    {
      std::lock_guard lock(mu_);
      due_ = true;
    }
    cv_.notify_one();
  }

  // Ends the thread and closes its connection. Idempotent.
  void stop() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_one();
    if (thread_.joinable()) thread_.join();
    db_.reset();
  }

 private:
  void loop() {
    for (;;) {
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [this] { return stopping_ || due_; });
        if (stopping_) return;
        due_ = false;
      }
      if (auto r = db_->checkpoint(); !r) spdlog::warn("store: background checkpoint failed: {}", r.error().message);
      (void)db_->take_fatal();
    }
  }

  std::unique_ptr<connection> db_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool due_ = false;
  bool stopping_ = false;
  std::thread thread_;  // last: starts after the members it uses
};

sqlite_writer::sqlite_writer(options o, std::unique_ptr<connection> db, std::unique_ptr<connection> checkpoints,
                             const tether::clock& clock)
    : options_(std::move(o)),
      db_(std::move(db)),
      rows_(*db_, clock),
      checkpointer_(std::make_unique<checkpointer>(std::move(checkpoints))) {
  watch_wal(*db_);
}

sqlite_writer::~sqlite_writer() { close(); }

void sqlite_writer::stop_checkpoints() { checkpointer_->stop(); }

void sqlite_writer::close() {
  stop_checkpoints();
  db_.reset();
}

std::optional<batch_failure> sqlite_writer::commit(write_batch& ops) {
  connection& db = *db_;
  // Nothing was written, so the store is not poisoned; the callers may retry.
  if (auto e = begin(db)) return batch_failure{*e, false};
  bool refused = false;
  for (auto& op : ops) {
    const auto outcome = op->run(rows_);
    if (auto fatal = checked(db)) return doomed(*fatal);
    if (!outcome) {
      refused = true;
      break;
    }
  }
  if (refused) {
    if (auto r = db.run("ROLLBACK"); !r) return doomed(r.error());
    if (auto e = begin(db)) return doomed(*e);
    for (auto& op : ops) {
      if (auto fatal = run_one(*op)) return doomed(*fatal);
    }
  }
  if (options_.fail_commit && options_.fail_commit()) return doomed(injected());
  if (auto r = db.run("COMMIT"); !r) return doomed(r.error());
  if (wal_over_limit_) {
    wal_over_limit_ = false;
    if (auto r = db.checkpoint(); !r) spdlog::warn("store: checkpoint failed: {}", r.error().message);
    (void)db.take_fatal();
  }
  return std::nullopt;
}

// The batch failed as a whole: nothing of it stays written.
std::optional<batch_failure> sqlite_writer::doomed(const tether::error& cause) {
  if (db_->in_transaction()) (void)db_->run("ROLLBACK");
  (void)db_->take_fatal();
  return batch_failure{cause, true};
}

// One request in its own savepoint: its own failure is rolled back to the
// savepoint; a failure that is not its fault is returned.
std::optional<tether::error> sqlite_writer::run_one(write_op& op) {
  connection& db = *db_;
  if (auto r = db.run("SAVEPOINT request"); !r) return r.error();
  const auto outcome = op.run(rows_);
  if (auto fatal = checked(db)) return fatal;
  if (!outcome) {
    if (auto r = db.run("ROLLBACK TO request"); !r) return r.error();
  }
  if (auto r = db.run("RELEASE request"); !r) return r.error();
  return std::nullopt;
}

result<void> sqlite_writer::probe() {
  auto fresh = connection::open(options_.path, open_mode::read_write);
  if (!fresh) return fresh.error();
  connection& db = **fresh;
  if (auto r = configure_writer(db); !r) return r.error();
  if (auto e = begin(db)) return *e;
  auto failed = [&db](const tether::error& e) -> result<void> {
    if (db.in_transaction()) (void)db.run("ROLLBACK");
    return e;
  };
  std::int64_t version = 0;
  {
    auto q = db.prepare("PRAGMA user_version");
    auto row = q.step();
    if (!row) return failed(row.error());
    version = *row ? q.int64(0) : 0;
  }
  const std::string rewrite = "PRAGMA user_version = " + std::to_string(version);
  if (auto r = db.exec(rewrite.c_str()); !r) return failed(r.error());
  if (options_.fail_commit && options_.fail_commit()) return failed(injected());
  if (auto r = db.run("COMMIT"); !r) return failed(r.error());
  (void)db.take_fatal();
  watch_wal(db);
  db_ = std::move(*fresh);
  rows_.use(*db_);
  return ok();
}

void sqlite_writer::watch_wal(connection& db) {
  db.on_wal_commit([this](int pages) {
    if (pages >= options_.checkpoint_pages) checkpointer_->request();
    // Far behind (readers pinning old frames, or a slow disk): the writer
    // helps, so the WAL cannot grow without bound.
    if (pages >= std::max(writer_checkpoint_pages, 4 * options_.checkpoint_pages)) wal_over_limit_ = true;
  });
}

}  // namespace tether::store::sqlite
