#include "store/sqlite/sqlite_store.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <ctime>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <type_traits>

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

#include "store/sqlite/async.h"
#include "store/sqlite/db.h"
#include "store/sqlite/integrity.h"
#include "store/sqlite/leases.h"
#include "store/sqlite/projections.h"
#include "store/sqlite/queries.h"
#include "store/sqlite/schema.h"
#include "store/sqlite/tail.h"
#include "util/metrics.h"

namespace tether::store {

namespace sqlite {

namespace {

tether::error closed_error() { return {store_errc::closed, "the store is stopped"}; }

tether::error unexpected(const std::exception& e) {
  return {store_errc::rejected, std::string("unexpected failure: ") + e.what()};
}

// One queued write request. The writer calls run() inside the batch's
// transaction (perhaps twice: see commit()), then exactly one of committed() (the batch committed; the
// request's own outcome goes to its waiter) or fail() (the batch did not).
class write_op {
 public:
  virtual ~write_op() = default;
  virtual result<void> run(connection& db) = 0;
  virtual void committed(tail_hub& hub) = 0;
  virtual void fail(const tether::error& e) = 0;
};

// A write's outcome on its way to whoever awaits it, or to nobody: writes are
// queued when they are called, not when they are awaited, so a caller may
// drop the awaitable of a write it need not wait for and the write still
// happens, in order.
template <class T>
class write_slot {
 public:
  void deliver(result<T> v) {
    std::unique_lock lock(mu_);
    if (!waiter_) {
      value_.emplace(std::move(v));
      return;
    }
    auto w = std::move(waiter_);
    lock.unlock();
    w(std::move(v));
  }
  void await(completion<result<T>> done) {
    std::unique_lock lock(mu_);
    if (!value_) {
      waiter_ = std::move(done);
      return;
    }
    auto v = std::move(*value_);
    lock.unlock();
    done(std::move(v));
  }

 private:
  std::mutex mu_;
  std::optional<result<T>> value_;
  completion<result<T>> waiter_;
};

template <class T, class Fn>
class typed_write final : public write_op {
 public:
  typed_write(Fn fn, std::shared_ptr<write_slot<T>> done) : fn_(std::move(fn)), done_(std::move(done)) {}

  result<void> run(connection& db) override {
    try {
      out_.emplace(fn_(db));
    } catch (const std::exception& e) {
      out_.emplace(unexpected(e));
    }
    if (!*out_) return out_->error();
    return ok();
  }
  void committed(tail_hub& hub) override {
    if constexpr (std::is_same_v<T, append_result>) {
      if (*out_) hub.publish_durable((*out_)->events);
    }
    done_->deliver(std::move(*out_));
  }
  void fail(const tether::error& e) override { done_->deliver(result<T>(e)); }

 private:
  Fn fn_;
  std::shared_ptr<write_slot<T>> done_;
  std::optional<result<T>> out_;
};

using batch = std::vector<std::unique_ptr<write_op>>;

// Hands committed batches to their waiters on a thread of its own, in commit
// order: publishing to tails, posting each waiter's handler (a futex wake per
// idle io thread) and freeing the requests would otherwise cost the writer,
// the store's bottleneck, about a tenth of its time.
class completer {
 public:
  explicit completer(std::shared_ptr<tail_hub> hub)
      : hub_(std::move(hub)), thread_([this] {
          pthread_setname_np(pthread_self(), "store-complete");
          loop();
        }) {}
  ~completer() { stop(); }
  completer(const completer&) = delete;
  completer& operator=(const completer&) = delete;

  void push(batch committed) {
    {
      std::lock_guard lock(mu_);
      queue_.push_back(std::move(committed));
    }
    cv_.notify_one();
  }

  // Completes everything pushed so far, then ends the thread. Idempotent.
  void stop() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_one();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void loop() {
    for (;;) {
      std::deque<batch> ready;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;
        ready.swap(queue_);
      }
      for (auto& ops : ready)
        for (auto& op : ops) op->committed(*hub_);
    }
  }

  std::shared_ptr<tail_hub> hub_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<batch> queue_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts after the members it uses
};

// Copies the WAL back into the database on a thread of its own, with its own
// connection, when the writer's commits have grown the WAL past a threshold.
// SQLite would otherwise checkpoint inside the writer's COMMIT, every few
// group commits, and the writer is the store's bottleneck. A PASSIVE
// checkpoint never blocks the writer or readers; if the checkpointer falls
// far behind, the writer checkpoints itself so the WAL stays bounded.
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

class sqlite_event_store final : public event_store {
 public:
  sqlite_event_store(sqlite_options options, std::unique_ptr<connection> writer,
                     std::vector<std::unique_ptr<connection>> readers, std::unique_ptr<connection> checkpoints)
      : options_(std::move(options)),
        clock_(options_.clock != nullptr ? *options_.clock : real_clock()),
        max_batch_(std::max<std::size_t>(options_.max_batch, 1)),
        writer_db_(std::move(writer)),
        free_readers_(std::move(readers)),
        pool_(free_readers_.size()),
        hub_(std::make_shared<tail_hub>(options_.tail_buffer, options_.tail_buffer_bytes, clock_)),
        completer_(hub_),
        checkpointer_(std::move(checkpoints)) {
    watch_wal(*writer_db_);
    writer_ = std::thread([this] {
      pthread_setname_np(pthread_self(), "store-writer");  // names it in top, perf and gdb
      writer_loop();
    });
  }

  ~sqlite_event_store() override { stop(); }
  sqlite_event_store(const sqlite_event_store&) = delete;
  sqlite_event_store& operator=(const sqlite_event_store&) = delete;

  // ---- writes ----

  task<result<append_result>> append(append_request req) override {
    // Encoding and validation happen here, on the caller's thread; the writer
    // is the bottleneck under load and only runs SQL.
    auto data = encode_append(req);
    return on_writer<append_result>([this, req = std::move(req), data = std::move(data)](connection& db) {
      if (!data) return result<append_result>(data.error());
      return apply_append(db, req, data.value(), clock_);
    });
  }

  task<result<lease>> claim_lease(session_id s, std::string owner, time_ms now, time_ms ttl_ms) override {
    return on_writer<lease>([s = std::move(s), owner = std::move(owner), now, ttl_ms](connection& db) {
      return sqlite::claim_lease(db, s, owner, now, ttl_ms);
    });
  }

  task<result<lease>> renew_lease(session_id s, std::string owner, time_ms now, time_ms ttl_ms) override {
    return on_writer<lease>([s = std::move(s), owner = std::move(owner), now, ttl_ms](connection& db) {
      return sqlite::renew_lease(db, s, owner, now, ttl_ms);
    });
  }

  task<result<void>> release_lease(session_id s, std::string owner, time_ms now) override {
    return on_writer<void>([s = std::move(s), owner = std::move(owner), now](connection& db) {
      return sqlite::release_lease(db, s, owner, now);
    });
  }

  task<result<std::size_t>> expire_owned_leases(std::string owner) override {
    return on_writer<std::size_t>([this, owner = std::move(owner)](connection& db) {
      return sqlite::expire_owned_leases(db, owner, clock_.now());
    });
  }

  task<result<std::int64_t>> bump_attempts(session_id s, std::string owner, time_ms now) override {
    return on_writer<std::int64_t>([s = std::move(s), owner = std::move(owner), now](connection& db) {
      return sqlite::bump_attempts(db, s, owner, now);
    });
  }

  task<result<void>> quarantine(session_id s, std::string reason) override {
    return on_writer<void>(
        [s = std::move(s), reason = std::move(reason)](connection& db) { return sqlite::quarantine(db, s, reason); });
  }

  // ---- live events ----

  void publish(session_id s, model::payload ephemeral) override { hub_->publish_ephemeral(s, std::move(ephemeral)); }

  std::unique_ptr<event_tail> tail(session_id s, event_seq after) override {
    return hub_->subscribe(*this, std::move(s), after);
  }

  std::unique_ptr<event_tail> tail_all(std::size_t buffer) override { return hub_->subscribe_all(buffer); }

  // ---- reads ----

  task<result<event_page>> read(session_id s, event_seq after, std::size_t limit) override {
    return on_reader<event_page>(
        [s = std::move(s), after, limit](connection& db) { return read_events(db, s, after, limit); });
  }
  task<result<session_row>> get_session(session_id s) override {
    return on_reader<session_row>([s = std::move(s)](connection& db) { return sqlite::get_session(db, s); });
  }
  task<result<session_snapshot>> snapshot(session_id s) override {
    return on_reader<session_snapshot>([s = std::move(s)](connection& db) -> result<session_snapshot> {
      auto session = sqlite::get_session(db, s);
      if (!session) return session.error();
      auto inputs = sqlite::pending_inputs(db, s);
      if (!inputs) return inputs.error();
      auto asking = sqlite::pending_interactions(db, s);
      if (!asking) return asking.error();
      return session_snapshot{std::move(*session), std::move(*inputs), std::move(*asking)};
    });
  }
  task<result<std::vector<session_row>>> list_sessions(std::size_t limit) override {
    return on_reader<std::vector<session_row>>([limit](connection& db) { return sqlite::list_sessions(db, limit); });
  }
  task<result<input_row>> get_input(input_id id) override {
    return on_reader<input_row>([id = std::move(id)](connection& db) { return sqlite::get_input(db, id); });
  }
  task<result<std::vector<input_row>>> pending_inputs(session_id s) override {
    return on_reader<std::vector<input_row>>(
        [s = std::move(s)](connection& db) { return sqlite::pending_inputs(db, s); });
  }
  task<result<std::vector<input_row>>> list_inputs(session_id s) override {
    return on_reader<std::vector<input_row>>([s = std::move(s)](connection& db) { return sqlite::list_inputs(db, s); });
  }
  task<result<std::vector<message_row>>> context(session_id s) override {
    return on_reader<std::vector<message_row>>([s = std::move(s)](connection& db) { return sqlite::context(db, s); });
  }
  task<result<std::vector<message_row>>> transcript(session_id s) override {
    return on_reader<std::vector<message_row>>(
        [s = std::move(s)](connection& db) { return sqlite::transcript(db, s); });
  }
  task<result<execution_row>> get_execution(execution_id id) override {
    return on_reader<execution_row>([id = std::move(id)](connection& db) { return sqlite::get_execution(db, id); });
  }
  task<result<std::vector<execution_row>>> list_executions(session_id s) override {
    return on_reader<std::vector<execution_row>>(
        [s = std::move(s)](connection& db) { return sqlite::list_executions(db, s); });
  }
  task<result<std::vector<tool_call_row>>> unsettled_calls(session_id s) override {
    return on_reader<std::vector<tool_call_row>>(
        [s = std::move(s)](connection& db) { return sqlite::unsettled_calls(db, s); });
  }
  task<result<interaction_row>> get_interaction(interaction_id id) override {
    return on_reader<interaction_row>([id = std::move(id)](connection& db) { return sqlite::get_interaction(db, id); });
  }
  task<result<std::vector<interaction_row>>> pending_interactions(session_id s) override {
    return on_reader<std::vector<interaction_row>>(
        [s = std::move(s)](connection& db) { return sqlite::pending_interactions(db, s); });
  }
  task<result<std::vector<interaction_row>>> list_interactions(session_id s) override {
    return on_reader<std::vector<interaction_row>>(
        [s = std::move(s)](connection& db) { return sqlite::list_interactions(db, s); });
  }
  task<result<std::vector<abandoned_session>>> list_abandoned(time_ms now, std::string node, std::string current_owner,
                                                              std::optional<session_id> after,
                                                              std::size_t limit) override {
    return on_reader<std::vector<abandoned_session>>(
        [now, node = std::move(node), current_owner = std::move(current_owner), after = std::move(after),
         limit](connection& db) { return sqlite::list_abandoned(db, now, node, current_owner, after, limit); });
  }
  task<result<std::vector<session_id>>> list_stranded(std::optional<session_id> after, std::size_t limit) override {
    return on_reader<std::vector<session_id>>(
        [after = std::move(after), limit](connection& db) { return sqlite::list_stranded(db, after, limit); });
  }

  // ---- lifecycle ----

  [[nodiscard]] store_health health() const override {
    std::lock_guard lock(write_mu_);
    if (!degraded_) return {};
    return {store_state::degraded, degraded_->reason, degraded_->since};
  }

  void stop() override {
    std::lock_guard stop_lock(stop_mu_);
    if (stopped_) return;
    {
      std::lock_guard lock(write_mu_);
      stopping_ = true;
    }
    write_cv_.notify_all();
    if (writer_.joinable()) writer_.join();  // drains the queue first
    completer_.stop();                       // and every commit reaches its waiter
    checkpointer_.stop();
    {
      std::lock_guard lock(read_mu_);
      reads_closed_ = true;
    }
    pool_.join();  // finishes reads already posted
    hub_->close_all();
    // Readers first: the last connection to close checkpoints the WAL, and
    // only the read-write one can.
    free_readers_.clear();
    writer_db_.reset();
    stopped_ = true;
  }

  [[nodiscard]] sqlite_stats stats() const {
    return {commits_.load(), requests_.load(), largest_batch_.load(), writer_cpu_ns_.load() / 1000};
  }

 private:
  // Queues the write now (see write_slot); the awaitable waits for its outcome.
  template <class T, class Fn>
  task<result<T>> on_writer(Fn fn) {
    auto slot = std::make_shared<write_slot<T>>();
    {
      std::unique_lock lock(write_mu_);
      if (stopping_) {
        lock.unlock();
        slot->deliver(result<T>(closed_error()));
      } else if (degraded_) {
        auto e = unavailable(*degraded_);
        lock.unlock();
        slot->deliver(result<T>(std::move(e)));
      } else {
        queue_.push_back(std::make_unique<typed_write<T, Fn>>(std::move(fn), slot));
        lock.unlock();
        write_cv_.notify_one();
      }
    }
    return async_op<result<T>>([slot](completion<result<T>> done) { slot->await(std::move(done)); });
  }

  template <class T, class Fn>
  task<result<T>> on_reader(Fn fn) {
    return async_op<result<T>>([this, fn = std::move(fn)](completion<result<T>> done) mutable {
      std::unique_lock lock(read_mu_);
      if (reads_closed_) {
        lock.unlock();
        done(result<T>(closed_error()));
        return;
      }
      boost::asio::post(pool_, [this, fn = std::move(fn), done = std::move(done)]() mutable { done(run_read<T>(fn)); });
    });
  }

  // One read in one snapshot, on a connection checked out for this thread.
  template <class T, class Fn>
  result<T> run_read(Fn& fn) {
    std::unique_ptr<connection> db;
    {
      std::lock_guard lock(readers_mu_);
      TETHER_CHECK(!free_readers_.empty(), "more concurrent reads than reader connections");
      db = std::move(free_readers_.back());
      free_readers_.pop_back();
    }
    auto out = [&]() -> result<T> {
      if (auto r = db->run("BEGIN"); !r) return r.error();
      try {
        auto r = fn(*db);
        (void)db->run("COMMIT");
        return r;
      } catch (const std::exception& e) {
        (void)db->run("ROLLBACK");
        return tether::error(store_errc::read_failed, std::string("unexpected failure: ") + e.what());
      }
    }();
    (void)db->take_fatal();
    std::lock_guard lock(readers_mu_);
    free_readers_.push_back(std::move(db));
    return out;
  }

  void writer_loop() {
    for (;;) {
      batch ops;
      std::optional<tether::error> refused;
      {
        std::unique_lock lock(write_mu_);
        write_cv_.wait(lock, [this] { return stopping_ || !queue_.empty() || degraded_; });
        if (degraded_) {
          // Queued behind the failed batch, before callers could be refused
          // at the door: refused the same way, untried.
          ops.assign(std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.end()));
          queue_.clear();
          refused = unavailable(*degraded_);
        } else {
          if (queue_.empty()) return;  // stopping, and everything queued is done
          const auto n = static_cast<std::ptrdiff_t>(std::min(queue_.size(), max_batch_));
          ops.assign(std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.begin() + n));
          queue_.erase(queue_.begin(), queue_.begin() + n);
        }
      }
      if (refused) {
        for (auto& op : ops) op->fail(*refused);
        if (!recover()) return;  // stopping; writes are refused, so nothing is queued
        continue;
      }
      const auto cpu0 = thread_cpu_ns();
      commit(ops, std::chrono::steady_clock::now());
      writer_cpu_ns_.fetch_add(thread_cpu_ns() - cpu0);
    }
  }

  static std::uint64_t thread_cpu_ns() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000U + static_cast<std::uint64_t>(ts.tv_nsec);
  }

  // Runs the batch's requests and commits once. Optimistically without
  // savepoints (they cost the writer about a tenth of its time: every page a
  // request touches is copied into the statement journal); if a request is
  // refused, its partial writes cannot be undone alone, so the whole
  // transaction is rolled back and the batch runs again with each request in
  // its own savepoint. Requests are safe to run twice: they keep their
  // inputs and overwrite their outcome.
  void commit(batch& ops, std::chrono::steady_clock::time_point started) {
    connection& db = *writer_db_;
    if (auto e = begin(db)) {
      // Nothing was written, so the store is not poisoned; the callers may retry.
      observe_commit(started);
      for (auto& op : ops) op->fail(*e);
      return;
    }
    bool refused = false;
    for (auto& op : ops) {
      const auto outcome = op->run(db);
      if (auto fatal = checked(db)) return abort(ops, started, *fatal);
      if (!outcome) {
        refused = true;
        break;
      }
    }
    if (refused) {
      if (auto r = db.run("ROLLBACK"); !r) return abort(ops, started, r.error());
      if (auto e = begin(db)) return abort(ops, started, *e);
      for (auto& op : ops) {
        if (auto fatal = run_one(db, *op)) return abort(ops, started, *fatal);
      }
    }
    if (options_.fail_commit && options_.fail_commit())
      return abort(ops, started, tether::error(store_errc::write_failed, "commit failed (injected by fail_commit)"));
    if (auto r = db.run("COMMIT"); !r) return abort(ops, started, r.error());
    if (wal_over_limit_) {
      wal_over_limit_ = false;
      if (auto r = db.checkpoint(); !r) spdlog::warn("store: checkpoint failed: {}", r.error().message);
      (void)db.take_fatal();
    }

    commits_.fetch_add(1);
    requests_.fetch_add(ops.size());
    std::uint64_t largest = largest_batch_.load();
    while (ops.size() > largest && !largest_batch_.compare_exchange_weak(largest, ops.size())) {
    }
    observe_commit(started);
    completer_.push(std::move(ops));
  }

  // Observed before any caller hears of the commit, so a caller that reads
  // the metric after its write sees that write's commit counted.
  static void observe_commit(std::chrono::steady_clock::time_point started) {
    metrics::store_commit_seconds().observe(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }

  static std::optional<tether::error> begin(connection& db) {
    if (auto r = db.run("BEGIN IMMEDIATE"); !r) {
      (void)db.take_fatal();
      return tether::error(store_errc::write_failed, "cannot start a write transaction: " + r.error().message);
    }
    return std::nullopt;
  }

  // A failure that is not the request's fault: it dooms the batch.
  static std::optional<tether::error> checked(connection& db) {
    if (auto fatal = db.take_fatal()) return fatal;
    if (!db.in_transaction()) return tether::error(store_errc::write_failed, "SQLite rolled the transaction back");
    return std::nullopt;
  }

  // One request in its own savepoint: its own failure is rolled back to the
  // savepoint; a failure that is not its fault is returned.
  static std::optional<tether::error> run_one(connection& db, write_op& op) {
    if (auto r = db.run("SAVEPOINT request"); !r) return r.error();
    const auto outcome = op.run(db);
    if (auto fatal = checked(db)) return fatal;
    if (!outcome) {
      if (auto r = db.run("ROLLBACK TO request"); !r) return r.error();
    }
    if (auto r = db.run("RELEASE request"); !r) return r.error();
    return std::nullopt;
  }

  // The batch failed as a whole: nothing of it is written, its callers hear
  // write_failed, and the store is degraded until recover() commits a probe.
  // Degraded before any caller hears, so a caller that then asks health()
  // sees it.
  void abort(batch& ops, std::chrono::steady_clock::time_point started, const tether::error& cause) {
    connection& db = *writer_db_;
    if (db.in_transaction()) (void)db.run("ROLLBACK");
    (void)db.take_fatal();
    const tether::error e(store_errc::write_failed, "a commit failed and nothing of it was written (" + cause.message +
                                                        "); writes are refused until a retry succeeds");
    spdlog::error("store: {}", e.message);
    metrics::store_write_failures_total().inc();
    {
      std::lock_guard lock(write_mu_);
      degraded_ = degradation{cause.message, clock_.now()};
    }
    metrics::store_degraded().set(1);
    observe_commit(started);
    for (auto& op : ops) op->fail(e);
  }

  struct degradation {
    std::string reason;
    time_ms since = 0;
  };

  static tether::error unavailable(const degradation& d) {
    return {store_errc::storage_unavailable,
            "the store cannot write (" + d.reason + "); it retries by itself and takes writes again once one succeeds"};
  }

  // Degraded: waits, reopens the write connection and commits a probe, with
  // backoff, until a probe commits (true) or the store stops (false).
  bool recover() {
    const auto first = std::chrono::milliseconds(std::max(1, options_.retry_initial_ms));
    const auto most = std::max(first, std::chrono::milliseconds(options_.retry_max_ms));
    auto delay = first;
    std::string last_reason;
    for (std::uint64_t failed = 0;; ++failed) {
      {
        std::unique_lock lock(write_mu_);
        if (write_cv_.wait_for(lock, delay, [this] { return stopping_; })) return false;
      }
      auto probed = probe();
      if (probed) {
        spdlog::info("store: writes resumed: a retry committed after {} failed retr{}", failed,
                     failed == 1 ? "y" : "ies");
        {
          std::lock_guard lock(write_mu_);
          degraded_.reset();
        }
        metrics::store_degraded().set(0);
        return true;
      }
      metrics::store_write_failures_total().inc();
      if (probed.error().message != last_reason) {
        last_reason = probed.error().message;
        spdlog::warn("store: still cannot write: {}; retrying every {} ms at most", last_reason, most.count());
      }
      {
        std::lock_guard lock(write_mu_);
        degraded_->reason = probed.error().message;
      }
      delay = std::min(delay * 2, most);
    }
  }

  // A fresh write connection (whatever state the failure left the old one
  // in goes with it) and one real commit: PRAGMA user_version rewritten with
  // its own value writes page 1 through the WAL and syncs, like any commit,
  // and changes nothing. On success the fresh connection becomes the writer's.
  result<void> probe() {
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
    if (options_.fail_commit && options_.fail_commit())
      return failed(tether::error(store_errc::write_failed, "commit failed (injected by fail_commit)"));
    if (auto r = db.run("COMMIT"); !r) return failed(r.error());
    (void)db.take_fatal();
    watch_wal(db);
    writer_db_ = std::move(*fresh);
    return ok();
  }

  void watch_wal(connection& db) {
    db.on_wal_commit([this](int pages) {
      if (pages >= options_.checkpoint_pages) checkpointer_.request();
      // Far behind (readers pinning old frames, or a slow disk): the writer
      // helps, so the WAL cannot grow without bound.
      if (pages >= std::max(writer_checkpoint_pages, 4 * options_.checkpoint_pages)) wal_over_limit_ = true;
    });
  }

  sqlite_options options_;
  const tether::clock& clock_;
  const std::size_t max_batch_;

  // Writer: the queue and the degradation, under write_mu_.
  std::unique_ptr<connection> writer_db_;
  mutable std::mutex write_mu_;
  std::condition_variable write_cv_;
  std::deque<std::unique_ptr<write_op>> queue_;
  bool stopping_ = false;
  std::optional<degradation> degraded_;
  std::thread writer_;

  // Readers: one connection per pool thread.
  std::mutex readers_mu_;
  std::vector<std::unique_ptr<connection>> free_readers_;
  std::mutex read_mu_;
  bool reads_closed_ = false;
  boost::asio::thread_pool pool_;

  std::shared_ptr<tail_hub> hub_;
  completer completer_;
  checkpointer checkpointer_;
  static constexpr int writer_checkpoint_pages = 65'536;  // 256 MiB of WAL at 4 KiB pages
  bool wal_over_limit_ = false;                           // writer thread only

  std::mutex stop_mu_;
  bool stopped_ = false;

  std::atomic<std::uint64_t> commits_{0};
  std::atomic<std::uint64_t> requests_{0};
  std::atomic<std::uint64_t> largest_batch_{0};
  std::atomic<std::uint64_t> writer_cpu_ns_{0};
};

tether::error open_error(const std::string& path, const tether::error& e) {
  if (e.code == store_errc::schema_too_new || e.code == store_errc::damaged) return e;
  return {store_errc::open_failed, path + ": " + e.message};
}

}  // namespace

}  // namespace sqlite

result<std::unique_ptr<event_store>> open_sqlite_store(sqlite_options options) {
  using sqlite::connection;
  using sqlite::open_mode;
  if (options.path.empty()) return make_error(store_errc::open_failed, "no database path given");
  const std::string& path = options.path;

  auto writer = connection::open(path, open_mode::read_write);
  if (!writer) return sqlite::open_error(path, writer.error());
  // A file that is not a database at all fails here (open_failed), before the check.
  if (auto r = sqlite::configure_writer(**writer); !r) return sqlite::open_error(path, r.error());
  if (auto r = sqlite::check_integrity(**writer, path); !r) return sqlite::open_error(path, r.error());
  if (auto r = sqlite::migrate(**writer); !r) return sqlite::open_error(path, r.error());
  (void)(*writer)->take_fatal();

  auto checkpoints = connection::open(path, open_mode::read_write);
  if (!checkpoints) return sqlite::open_error(path, checkpoints.error());

  std::vector<std::unique_ptr<connection>> readers;
  const std::size_t n = std::max<std::size_t>(options.readers, 1);
  for (std::size_t i = 0; i < n; ++i) {
    auto reader = connection::open(path, open_mode::read_only);
    if (!reader) return sqlite::open_error(path, reader.error());
    readers.push_back(std::move(*reader));
  }
  return std::unique_ptr<event_store>(std::make_unique<sqlite::sqlite_event_store>(
      std::move(options), std::move(*writer), std::move(readers), std::move(*checkpoints)));
}

sqlite_stats sqlite_stats_of(const event_store& store) {
  if (const auto* s = dynamic_cast<const sqlite::sqlite_event_store*>(&store)) return s->stats();
  return {};
}

}  // namespace tether::store
