#include "store/sqlite/sqlite_store.h"

#include <algorithm>
#include <exception>
#include <mutex>

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

#include "store/async.h"
#include "store/committed_store.h"
#include "store/sqlite/db.h"
#include "store/sqlite/integrity.h"
#include "store/sqlite/queries.h"
#include "store/sqlite/schema.h"
#include "store/sqlite/writer.h"
#include "store/tail.h"

namespace tether::store {

namespace sqlite {

namespace {

tether::error closed_error() { return {store_errc::closed, "the store is stopped"}; }

const tether::clock& clock_of(const sqlite_options& o) { return o.clock != nullptr ? *o.clock : real_clock(); }

committed_store_options committed_options(const sqlite_options& o) {
  return {o.max_batch, o.tail_buffer, o.tail_buffer_bytes, o.retry_initial_ms, o.retry_max_ms};
}

class sqlite_event_store final : public committed_store {
 public:
  sqlite_event_store(sqlite_options options, std::unique_ptr<connection> writer,
                     std::vector<std::unique_ptr<connection>> readers, std::unique_ptr<connection> checkpoints)
      : committed_store(writer_, clock_of(options), committed_options(options)),
        options_(std::move(options)),
        clock_(clock_of(options_)),
        free_readers_(std::move(readers)),
        pool_(free_readers_.size()),
        writer_({options_.path, options_.checkpoint_pages, options_.fail_commit}, std::move(writer),
                std::move(checkpoints), clock_) {
    start_writer();
  }

  ~sqlite_event_store() override { stop(); }
  sqlite_event_store(const sqlite_event_store&) = delete;
  sqlite_event_store& operator=(const sqlite_event_store&) = delete;

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
      auto usage = sqlite::session_usage(db, s);
      if (!usage) return usage.error();
      return session_snapshot{std::move(*session), std::move(*inputs), std::move(*asking), std::move(*usage)};
    });
  }
  task<result<std::vector<session_row>>> list_sessions(std::size_t limit) override {
    return on_reader<std::vector<session_row>>([limit](connection& db) { return sqlite::list_sessions(db, limit); });
  }
  task<result<std::vector<session_overview>>> list_overviews(std::size_t limit, std::string id_prefix) override {
    return on_reader<std::vector<session_overview>>(
        [limit, id_prefix = std::move(id_prefix)](connection& db) { return sqlite::list_overviews(db, limit, id_prefix); });
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
  task<result<std::vector<abandoned_session>>> list_abandoned(std::string node, std::string current_owner,
                                                              std::optional<session_id> after,
                                                              std::size_t limit) override {
    return on_reader<std::vector<abandoned_session>>(
        [now = clock_.now(), node = std::move(node), current_owner = std::move(current_owner), after = std::move(after),
         limit](connection& db) { return sqlite::list_abandoned(db, now, node, current_owner, after, limit); });
  }
  task<result<std::vector<session_id>>> list_stranded(std::optional<session_id> after, std::size_t limit) override {
    return on_reader<std::vector<session_id>>(
        [after = std::move(after), limit](connection& db) { return sqlite::list_stranded(db, after, limit); });
  }

  // ---- the work layer ----

  task<result<project_row>> get_project(project_id id) override {
    return on_reader<project_row>([id = std::move(id)](connection& db) { return sqlite::get_project(db, id); });
  }
  task<result<std::vector<project_row>>> list_projects(std::size_t limit) override {
    return on_reader<std::vector<project_row>>([limit](connection& db) { return sqlite::list_projects(db, limit); });
  }
  task<result<task_row>> get_task(task_id id) override {
    return on_reader<task_row>([id = std::move(id)](connection& db) { return sqlite::get_task(db, id); });
  }
  task<result<std::optional<task_row>>> task_of_session(session_id s) override {
    return on_reader<std::optional<task_row>>(
        [s = std::move(s)](connection& db) { return sqlite::task_of_session(db, s); });
  }
  task<result<std::vector<task_row>>> list_tasks(task_filter f) override {
    return on_reader<std::vector<task_row>>([f = std::move(f)](connection& db) { return sqlite::list_tasks(db, f); });
  }
  task<result<std::vector<comment_row>>> list_comments(task_id t) override {
    return on_reader<std::vector<comment_row>>(
        [t = std::move(t)](connection& db) { return sqlite::list_comments(db, t); });
  }
  task<result<std::vector<revision_row>>> list_revisions(task_id t) override {
    return on_reader<std::vector<revision_row>>(
        [t = std::move(t)](connection& db) { return sqlite::list_revisions(db, t); });
  }

  task<result<std::vector<preparation_row>>> list_preparations(task_id t) override {
    return on_reader<std::vector<preparation_row>>(
        [t = std::move(t)](connection& db) { return sqlite::list_preparations(db, t); });
  }

  // ---- lifecycle ----

  void stop() override {
    std::lock_guard stop_lock(stop_mu_);
    if (stopped_) return;
    stop_writer();  // commits what is queued, and every commit reaches its waiter
    writer_.stop_checkpoints();
    {
      std::lock_guard lock(read_mu_);
      reads_closed_ = true;
    }
    pool_.join();  // finishes reads already posted
    hub().close_all();
    // Readers first: the last connection to close checkpoints the WAL, and
    // only the read-write one can.
    free_readers_.clear();
    writer_.close();
    stopped_ = true;
  }

  [[nodiscard]] sqlite_stats stats() const {
    const auto c = writer_stats();
    return {c.commits, c.requests, c.largest_batch, c.writer_cpu_us};
  }

 private:
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

  sqlite_options options_;
  const tether::clock& clock_;

  // Readers: one connection per pool thread.
  std::mutex readers_mu_;
  std::vector<std::unique_ptr<connection>> free_readers_;
  std::mutex read_mu_;
  bool reads_closed_ = false;
  boost::asio::thread_pool pool_;

  sqlite_writer writer_;  // last: the writer thread (started in the constructor) uses the members above

  std::mutex stop_mu_;
  bool stopped_ = false;
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
