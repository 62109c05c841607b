#include "store/postgres/writer.h"

#include <map>

#include <spdlog/spdlog.h>

namespace tether::store::postgres {

namespace {

constexpr int batch_attempts = 5;            // serialization failures and deadlocks
constexpr int request_attempts = 3;          // unique violations of one request
constexpr std::size_t notify_bytes = 7'900;  // under PostgreSQL's 8,000-byte payload limit

tether::error injected() { return {store_errc::write_failed, "commit failed (injected by fail_commit)"}; }

tether::error lost(const std::string& why) { return {store_errc::write_failed, "postgres: " + why}; }

}  // namespace

result<time_ms> database_now(connection& db) {
  auto r = db.query("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint");
  if (!r) return r.error();
  if (!r->step()) return make_error(store_errc::read_failed, "postgres: clock_timestamp() returned no row");
  return r->int64(0);
}

pg_writer::pg_writer(options o, std::unique_ptr<connection> db)
    : options_(std::move(o)), db_(std::move(db)), rows_(*db_, [this] { return now(); }) {}

pg_writer::~pg_writer() { close(); }

time_ms pg_writer::now() {
  if (options_.clock != nullptr) return options_.clock->now();
  const auto elapsed = std::chrono::steady_clock::now() - batch_started_;
  return batch_time_ + std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count();
}

std::optional<batch_failure> pg_writer::doomed(const tether::error& cause) {
  if (db_ && db_->connected()) {
    (void)db_->exec("ROLLBACK");
    (void)db_->take_fatal();
  }
  if (db_ && !db_->connected()) db_.reset();  // probe() reconnects
  return batch_failure{cause, true};
}

std::optional<tether::error> pg_writer::begin() {
  // One round trip: the transaction and the database's clock.
  if (options_.clock != nullptr) {
    if (auto r = db_->exec("BEGIN"); !r) return r.error();
  } else {
    auto r = db_->exec_rows("BEGIN; SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint");
    if (!r) return r.error();
    if (!r->step()) return tether::error(store_errc::write_failed, "postgres: clock_timestamp() returned no row");
    batch_time_ = r->int64(0);
    batch_started_ = std::chrono::steady_clock::now();
  }
  rows_.touched().clear();
  return std::nullopt;
}

pg_writer::pass pg_writer::run_all(write_batch& ops) {
  for (auto& op : ops) {
    if (!op->run(rows_)) return db_->retryable() ? pass::retry_batch : pass::refused;
    // A statement failed without the request refusing (it should not):
    // the transaction is aborted either way.
    if (db_->last_sqlstate() != "") return db_->retryable() ? pass::retry_batch : pass::refused;
  }
  return pass::ok;
}

std::optional<tether::error> pg_writer::run_saved(write_batch& ops, bool& again) {
  for (auto& op : ops) {
    for (int tries = 1;; ++tries) {
      if (auto r = db_->exec("SAVEPOINT request"); !r) return r.error();
      const auto mark = rows_.touched().size();
      const auto outcome = op->run(rows_);
      if (auto fatal = db_->take_fatal()) return fatal;
      if (outcome && db_->last_sqlstate().empty()) {
        if (auto r = db_->exec("RELEASE SAVEPOINT request"); !r) return r.error();
        break;
      }
      const bool retry_batch = db_->retryable();
      const bool collided = db_->unique_violation();
      if (auto r = db_->exec("ROLLBACK TO SAVEPOINT request"); !r) return r.error();
      rows_.touched().resize(mark);
      if (retry_batch) {
        again = true;
        return std::nullopt;
      }
      // Another node inserted the same key since the request looked: run
      // it again, it now sees that row and decides by the rules.
      if (!collided || tries >= request_attempts) break;
    }
  }
  return std::nullopt;
}

std::string pg_writer::notifications() const {
  // The last seq of each session, and whether any of its events may give it work.
  std::map<std::string, std::pair<std::int64_t, bool>> last;
  for (const auto& t : rows_.touched()) {
    auto& [seq, wakes] = last[t.id];
    seq = std::max(seq, t.seq);
    wakes = wakes || t.wakes;
  }
  std::string statements;
  std::string payload;
  auto flush = [&] {
    if (payload.empty()) return;
    statements += std::string("SELECT pg_notify('") + events_channel + "', " + db_->literal(payload) + "); ";
    payload.clear();
  };
  for (const auto& [id, v] : last) {
    std::string line = options_.instance + " " + id + " " + std::to_string(v.first) + (v.second ? " 1\n" : " 0\n");
    if (payload.size() + line.size() > notify_bytes) flush();
    payload += line;
  }
  flush();
  return statements;
}

std::optional<batch_failure> pg_writer::attempt(write_batch& ops, bool& again) {
  again = false;
  if (auto e = begin()) {
    // Nothing was written. A live connection leaves the store ok (the
    // callers may retry); a lost one degrades it until a probe reconnects.
    if (!db_->connected()) return doomed(lost("the connection is lost: " + e->message));
    (void)db_->exec("ROLLBACK");
    (void)db_->take_fatal();
    return batch_failure{tether::error(store_errc::write_failed, "cannot start a transaction: " + e->message), false};
  }
  const auto first = run_all(ops);
  if (auto fatal = db_->take_fatal()) return doomed(*fatal);
  if (first != pass::ok) {
    if (auto r = db_->exec("ROLLBACK"); !r) return doomed(r.error());
    if (first == pass::retry_batch) {
      again = true;
      return std::nullopt;
    }
    if (auto e = begin()) return doomed(*e);
    if (auto e = run_saved(ops, again)) return doomed(*e);
    if (again) {
      if (auto r = db_->exec("ROLLBACK"); !r) return doomed(r.error());
      return std::nullopt;
    }
  }
  if (options_.fail_commit && options_.fail_commit()) return doomed(injected());
  // The notifications go out when the transaction commits, in the same
  // round trip as the COMMIT.
  if (auto r = db_->exec(notifications() + "COMMIT"); !r) return doomed(r.error());
  return std::nullopt;
}

std::optional<batch_failure> pg_writer::commit(write_batch& ops) {
  if (!db_) return doomed(lost("no connection to the database"));
  for (int i = 1;; ++i) {
    bool again = false;
    auto failure = attempt(ops, again);
    if (failure || !again) return failure;
    if (i >= batch_attempts) return doomed(lost("the batch kept conflicting with another node's writes"));
    spdlog::debug("store: batch conflicted with another node (attempt {}), running it again", i);
  }
}

result<void> pg_writer::probe() {
  if (!db_ || !db_->connected()) {
    db_.reset();
    auto c = connection::open(options_.url, store_errc::write_failed);
    if (!c) return c.error();
    db_ = std::move(*c);
    rows_.use(*db_);
  }
  auto fail = [this](tether::error e) -> result<void> {
    (void)db_->exec("ROLLBACK");
    (void)db_->take_fatal();
    if (!db_->connected()) db_.reset();
    return e;
  };
  if (auto r = db_->exec("BEGIN; UPDATE tether_schema SET version = version"); !r) return fail(r.error());
  if (options_.fail_commit && options_.fail_commit()) return fail(injected());
  if (auto r = db_->exec("COMMIT"); !r) return fail(r.error());
  return ok();
}

}  // namespace tether::store::postgres
