#include "store/postgres/postgres_store.h"

#include <algorithm>
#include <exception>
#include <mutex>

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

#include "store/async.h"
#include "store/committed_store.h"
#include "store/postgres/listener.h"
#include "store/postgres/pq.h"
#include "store/postgres/queries.h"
#include "store/postgres/schema.h"
#include "store/postgres/writer.h"

namespace tether::store {

namespace postgres {

namespace {

tether::error closed_error() { return {store_errc::closed, "the store is stopped"}; }

const tether::clock& clock_of(const postgres_options& o) { return o.clock != nullptr ? *o.clock : real_clock(); }

committed_store_options committed_options(const postgres_options& o) {
  return {o.max_batch, o.tail_buffer, o.tail_buffer_bytes, o.retry_initial_ms, o.retry_max_ms};
}

class postgres_event_store final : public committed_store {
 public:
  postgres_event_store(postgres_options options, std::string instance, std::unique_ptr<connection> writer,
                       std::vector<std::unique_ptr<connection>> readers)
      : committed_store(writer_, clock_of(options), committed_options(options)),
        options_(std::move(options)),
        free_readers_(std::move(readers)),
        reader_count_(std::max<std::size_t>(options_.readers, 1)),
        pool_(reader_count_),
        listener_(options_.url, instance, hub()),
        writer_({options_.url, instance, options_.clock, options_.fail_commit}, std::move(writer)) {}

  ~postgres_event_store() override { stop(); }
  postgres_event_store(const postgres_event_store&) = delete;
  postgres_event_store& operator=(const postgres_event_store&) = delete;

  result<void> start() {
    TETHER_TRY(listener_.start());
    start_writer();
    return ok();
  }

  // ---- several nodes ----

  void watch_foreign(std::function<void(const foreign_change&)> watcher) override {
    listener_.watch(std::move(watcher));
  }
  void signal(session_id s, std::string control) override { listener_.signal(s, std::move(control)); }
  [[nodiscard]] bool shared() const override { return true; }

  // ---- reads ----

  task<result<event_page>> read(session_id s, event_seq after, std::size_t limit) override {
    return on_reader<event_page>(
        [s = std::move(s), after, limit](connection& db) { return read_events(db, s, after, limit); });
  }
  task<result<session_row>> get_session(session_id s) override {
    return on_reader<session_row>([s = std::move(s)](connection& db) { return postgres::get_session(db, s); });
  }
  task<result<session_snapshot>> snapshot(session_id s) override {
    return on_reader<session_snapshot>([s = std::move(s)](connection& db) -> result<session_snapshot> {
      auto session = postgres::get_session(db, s);
      if (!session) return session.error();
      auto inputs = postgres::pending_inputs(db, s);
      if (!inputs) return inputs.error();
      auto asking = postgres::pending_interactions(db, s);
      if (!asking) return asking.error();
      auto usage = postgres::session_usage(db, s);
      if (!usage) return usage.error();
      return session_snapshot{std::move(*session), std::move(*inputs), std::move(*asking), std::move(*usage)};
    });
  }
  task<result<std::vector<session_row>>> list_sessions(std::size_t limit) override {
    return on_reader<std::vector<session_row>>([limit](connection& db) { return postgres::list_sessions(db, limit); });
  }
  task<result<std::vector<session_overview>>> list_overviews(std::size_t limit, std::string id_prefix) override {
    return on_reader<std::vector<session_overview>>([limit, id_prefix = std::move(id_prefix)](connection& db) {
      return postgres::list_overviews(db, limit, id_prefix);
    });
  }
  task<result<input_row>> get_input(input_id id) override {
    return on_reader<input_row>([id = std::move(id)](connection& db) { return postgres::get_input(db, id); });
  }
  task<result<std::vector<input_row>>> pending_inputs(session_id s) override {
    return on_reader<std::vector<input_row>>(
        [s = std::move(s)](connection& db) { return postgres::pending_inputs(db, s); });
  }
  task<result<std::vector<input_row>>> list_inputs(session_id s) override {
    return on_reader<std::vector<input_row>>(
        [s = std::move(s)](connection& db) { return postgres::list_inputs(db, s); });
  }
  task<result<std::vector<message_row>>> context(session_id s) override {
    return on_reader<std::vector<message_row>>([s = std::move(s)](connection& db) { return postgres::context(db, s); });
  }
  task<result<std::vector<message_row>>> transcript(session_id s) override {
    return on_reader<std::vector<message_row>>(
        [s = std::move(s)](connection& db) { return postgres::transcript(db, s); });
  }
  task<result<execution_row>> get_execution(execution_id id) override {
    return on_reader<execution_row>([id = std::move(id)](connection& db) { return postgres::get_execution(db, id); });
  }
  task<result<std::vector<execution_row>>> list_executions(session_id s) override {
    return on_reader<std::vector<execution_row>>(
        [s = std::move(s)](connection& db) { return postgres::list_executions(db, s); });
  }
  task<result<std::vector<tool_call_row>>> unsettled_calls(session_id s) override {
    return on_reader<std::vector<tool_call_row>>(
        [s = std::move(s)](connection& db) { return postgres::unsettled_calls(db, s); });
  }
  task<result<interaction_row>> get_interaction(interaction_id id) override {
    return on_reader<interaction_row>(
        [id = std::move(id)](connection& db) { return postgres::get_interaction(db, id); });
  }
  task<result<std::vector<interaction_row>>> pending_interactions(session_id s) override {
    return on_reader<std::vector<interaction_row>>(
        [s = std::move(s)](connection& db) { return postgres::pending_interactions(db, s); });
  }
  task<result<std::vector<interaction_row>>> list_interactions(session_id s) override {
    return on_reader<std::vector<interaction_row>>(
        [s = std::move(s)](connection& db) { return postgres::list_interactions(db, s); });
  }
  task<result<std::vector<abandoned_session>>> list_abandoned(std::string node, std::string current_owner,
                                                              std::optional<session_id> after,
                                                              std::size_t limit) override {
    return on_reader<std::vector<abandoned_session>>(
        [clock = options_.clock, node = std::move(node), current_owner = std::move(current_owner),
         after = std::move(after), limit](connection& db) -> result<std::vector<abandoned_session>> {
          // The database's clock decides what has expired, as for the writer.
          time_ms now = 0;
          if (clock != nullptr) {
            now = clock->now();
          } else {
            auto t = database_now(db);
            if (!t) return t.error();
            now = *t;
          }
          return postgres::list_abandoned(db, now, node, current_owner, after, limit);
        });
  }
  task<result<std::vector<session_id>>> list_stranded(std::optional<session_id> after, std::size_t limit) override {
    return on_reader<std::vector<session_id>>(
        [after = std::move(after), limit](connection& db) { return postgres::list_stranded(db, after, limit); });
  }

  // ---- the work layer ----

  task<result<project_row>> get_project(project_id id) override {
    return on_reader<project_row>([id = std::move(id)](connection& db) { return postgres::get_project(db, id); });
  }
  task<result<std::vector<project_row>>> list_projects(std::size_t limit) override {
    return on_reader<std::vector<project_row>>([limit](connection& db) { return postgres::list_projects(db, limit); });
  }
  task<result<task_row>> get_task(task_id id) override {
    return on_reader<task_row>([id = std::move(id)](connection& db) { return postgres::get_task(db, id); });
  }
  task<result<std::optional<task_row>>> task_of_session(session_id s) override {
    return on_reader<std::optional<task_row>>(
        [s = std::move(s)](connection& db) { return postgres::task_of_session(db, s); });
  }
  task<result<std::vector<task_row>>> list_tasks(task_filter f) override {
    return on_reader<std::vector<task_row>>([f = std::move(f)](connection& db) { return postgres::list_tasks(db, f); });
  }
  task<result<std::vector<comment_row>>> list_comments(task_id t) override {
    return on_reader<std::vector<comment_row>>(
        [t = std::move(t)](connection& db) { return postgres::list_comments(db, t); });
  }
  task<result<std::vector<revision_row>>> list_revisions(task_id t) override {
    return on_reader<std::vector<revision_row>>(
        [t = std::move(t)](connection& db) { return postgres::list_revisions(db, t); });
  }
  task<result<std::vector<preparation_row>>> list_preparations(task_id t) override {
    return on_reader<std::vector<preparation_row>>(
        [t = std::move(t)](connection& db) { return postgres::list_preparations(db, t); });
  }

  // ---- lifecycle ----

  void stop() override {
    std::lock_guard stop_lock(stop_mu_);
    if (stopped_) return;
    stop_writer();  // commits what is queued, and every commit reaches its waiter
    listener_.stop();
    {
      std::lock_guard lock(read_mu_);
      reads_closed_ = true;
    }
    pool_.join();  // finishes reads already posted
    hub().close_all();
    free_readers_.clear();
    writer_.close();
    stopped_ = true;
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

  // A reader connection for this pool thread: a free one, or a new one when
  // a failure took it (the database restarted).
  result<std::unique_ptr<connection>> checkout() {
    {
      std::lock_guard lock(readers_mu_);
      if (!free_readers_.empty()) {
        auto db = std::move(free_readers_.back());
        free_readers_.pop_back();
        return db;
      }
    }
    return connection::open(options_.url, store_errc::read_failed);
  }

  void checkin(std::unique_ptr<connection> db) {
    if (db->take_fatal() || !db->connected()) return;  // dropped: the next read reconnects
    std::lock_guard lock(readers_mu_);
    if (free_readers_.size() < reader_count_) free_readers_.push_back(std::move(db));
  }

  // One read in one snapshot; once more on a new connection when the
  // database failed it (it restarted since the connection was last used: a
  // read changes nothing, so running it again is safe).
  template <class T, class Fn>
  result<T> run_read(Fn& fn) {
    auto out = read_once<T>(fn, false);
    if (!out && out.error() == store_errc::read_failed) {
      {
        // The database went away: the other idle connections are gone too.
        std::lock_guard lock(readers_mu_);
        free_readers_.clear();
      }
      out = read_once<T>(fn, true);
    }
    return out;
  }

  template <class T, class Fn>
  result<T> read_once(Fn& fn, bool fresh) {
    auto db = fresh ? connection::open(options_.url, store_errc::read_failed) : checkout();
    if (!db) return db.error();
    auto out = [&]() -> result<T> {
      if (auto r = (*db)->exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"); !r) return r.error();
      try {
        auto r = fn(**db);
        (void)(*db)->exec(r ? "COMMIT" : "ROLLBACK");
        return r;
      } catch (const std::exception& e) {
        (void)(*db)->exec("ROLLBACK");
        return tether::error(store_errc::read_failed, std::string("unexpected failure: ") + e.what());
      }
    }();
    checkin(std::move(*db));
    return out;
  }

  postgres_options options_;

  std::mutex readers_mu_;
  std::vector<std::unique_ptr<connection>> free_readers_;
  std::size_t reader_count_;
  std::mutex read_mu_;
  bool reads_closed_ = false;
  boost::asio::thread_pool pool_;

  listener listener_;
  pg_writer writer_;  // last: the writer thread (started by start()) uses the members above

  std::mutex stop_mu_;
  bool stopped_ = false;
};

}  // namespace

}  // namespace postgres

bool is_postgres_url(std::string_view store) {
  return store.starts_with("postgres://") || store.starts_with("postgresql://");
}

int postgres_schema_version() { return postgres::latest_schema_version(); }

std::string redacted_url(std::string_view url) { return postgres::redact(url); }

result<std::unique_ptr<event_store>> open_postgres_store(postgres_options options) {
  using postgres::connection;
  if (options.url.empty()) return make_error(store_errc::open_failed, "no PostgreSQL database given");
  auto opened = [&](const tether::error& e) -> tether::error {
    if (e.code == store_errc::schema_too_new) return e;
    return {store_errc::open_failed, e.message};
  };
  auto writer = connection::open(options.url, store_errc::write_failed);
  if (!writer) return opened(writer.error());
  if (auto r = postgres::migrate(**writer); !r) return opened(r.error());
  (void)(*writer)->take_fatal();

  // One reader connection now (the database takes readers); the pool opens
  // the others when reads first run side by side.
  std::vector<std::unique_ptr<connection>> readers;
  auto reader = connection::open(options.url, store_errc::read_failed);
  if (!reader) return opened(reader.error());
  readers.push_back(std::move(*reader));
  // Names this process in notifications (its own are skipped).
  std::string instance = session_id::generate().str().substr(4);
  auto store = std::make_unique<postgres::postgres_event_store>(std::move(options), std::move(instance),
                                                                std::move(*writer), std::move(readers));
  if (auto r = store->start(); !r) return opened(r.error());
  return std::unique_ptr<event_store>(std::move(store));
}

result<postgres_check> check_postgres(const std::string& url) {
  auto db = postgres::connection::open(url, store_errc::read_failed);
  if (!db) return db.error();
  postgres_check out;
  {
    auto v = (*db)->query("SELECT current_setting('server_version')");
    if (!v) return v.error();
    if (v->step()) out.server_version = v->text(0);
  }
  auto version = postgres::stored_version(**db);
  if (!version) return version.error();
  out.schema_version = *version;
  auto now = postgres::database_now(**db);
  if (!now) return now.error();
  out.clock_skew_ms = *now - real_clock().now();
  return out;
}

}  // namespace tether::store
