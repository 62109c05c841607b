#include "store/postgres/postgres_store.h"

#include <algorithm>
#include <exception>
#include <mutex>

#include "store/postgres/listener.h"
#include "store/postgres/pq.h"
#include "store/postgres/queries.h"
#include "store/postgres/schema.h"
#include "store/postgres/writer.h"
#include "store/reading_store.h"

namespace tether::store {

namespace postgres {

namespace {

const tether::clock& clock_of(const postgres_options& o) { return o.clock != nullptr ? *o.clock : real_clock(); }

committed_store_options committed_options(const postgres_options& o) {
  return {o.max_batch, o.tail_buffer, o.tail_buffer_bytes, o.retry_initial_ms, o.retry_max_ms};
}

class postgres_event_store final : public reading_store<postgres_event_store, connection> {
 public:
  postgres_event_store(postgres_options options, std::string instance, std::unique_ptr<connection> writer,
                       std::vector<std::unique_ptr<connection>> readers)
      : reading_store(writer_, clock_of(options), committed_options(options),
                      std::max<std::size_t>(options.readers, 1)),
        options_(std::move(options)),
        free_readers_(std::move(readers)),
        reader_count_(std::max<std::size_t>(options_.readers, 1)),
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

  // ---- reads: reading_store's, but this one ----

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

  // ---- lifecycle ----

  void stop() override {
    std::lock_guard stop_lock(stop_mu_);
    if (stopped_) return;
    stop_writer();  // commits what is queued, and every commit reaches its waiter
    listener_.stop();
    close_reads();  // finishes reads already posted
    hub().close_all();
    free_readers_.clear();
    writer_.close();
    stopped_ = true;
  }

 private:
  friend reading_store;

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
