#include "store/sqlite/sqlite_store.h"

#include <algorithm>
#include <exception>
#include <mutex>

#include "store/reading_store.h"
#include "store/sqlite/db.h"
#include "store/sqlite/integrity.h"
#include "store/sqlite/queries.h"
#include "store/sqlite/schema.h"
#include "store/sqlite/writer.h"
#include "store/tail.h"

namespace tether::store {

namespace sqlite {

namespace {

const tether::clock& clock_of(const sqlite_options& o) { return o.clock != nullptr ? *o.clock : real_clock(); }

committed_store_options committed_options(const sqlite_options& o) {
  return {o.max_batch, o.tail_buffer, o.tail_buffer_bytes, o.retry_initial_ms, o.retry_max_ms};
}

class sqlite_event_store final : public reading_store<sqlite_event_store, connection> {
 public:
  sqlite_event_store(sqlite_options options, std::unique_ptr<connection> writer,
                     std::vector<std::unique_ptr<connection>> readers, std::unique_ptr<connection> checkpoints)
      : reading_store(writer_, clock_of(options), committed_options(options), readers.size()),
        options_(std::move(options)),
        clock_(clock_of(options_)),
        free_readers_(std::move(readers)),
        writer_({options_.path, options_.checkpoint_pages, options_.fail_commit}, std::move(writer),
                std::move(checkpoints), clock_) {
    start_writer();
  }

  ~sqlite_event_store() override { stop(); }
  sqlite_event_store(const sqlite_event_store&) = delete;
  sqlite_event_store& operator=(const sqlite_event_store&) = delete;

  // ---- reads: reading_store's, but this one ----

  task<result<std::vector<abandoned_session>>> list_abandoned(std::string node, std::string current_owner,
                                                              std::optional<session_id> after,
                                                              std::size_t limit) override {
    return on_reader<std::vector<abandoned_session>>(
        [now = clock_.now(), node = std::move(node), current_owner = std::move(current_owner), after = std::move(after),
         limit](connection& db) { return sqlite::list_abandoned(db, now, node, current_owner, after, limit); });
  }

  // ---- lifecycle ----

  void stop() override {
    std::lock_guard stop_lock(stop_mu_);
    if (stopped_) return;
    stop_writer();  // commits what is queued, and every commit reaches its waiter
    writer_.stop_checkpoints();
    close_reads();  // finishes reads already posted
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
  friend reading_store;

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
