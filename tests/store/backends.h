// The backends the store conformance suite runs against, one factory each.
// A new backend adds its factory here and to `backends`; every typed store
// test then runs against it too.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "store/event_store.h"
#include "store/committed_store.h"
#include "store/postgres/postgres_store.h"
#include "store/sqlite/sqlite_store.h"
#include "support/postgres.h"
#include "store_fixture.h"

namespace tether::store::test {

// Group-commit counters, whatever the backend.
struct writer_counters {
  std::uint64_t commits = 0;
  std::uint64_t requests = 0;
  std::uint64_t largest_batch = 0;
};

// SQLite: one database file in the test's directory.
class sqlite_factory {
 public:
  static constexpr const char* name = "sqlite";

  explicit sqlite_factory(std::filesystem::path dir) : path_((dir / "tether.db").string()) {}

  [[nodiscard]] sqlite_options sqlite(const backend_options& o) const {
    sqlite_options so;
    so.path = path_;
    so.clock = o.clock;
    so.max_batch = o.max_batch;
    so.tail_buffer = o.tail_buffer;
    so.tail_buffer_bytes = o.tail_buffer_bytes;
    so.retry_initial_ms = o.retry_initial_ms;
    so.retry_max_ms = o.retry_max_ms;
    so.fail_commit = o.fail_commit;
    return so;
  }

  [[nodiscard]] result<std::unique_ptr<event_store>> open(const backend_options& o) const {
    return open_sqlite_store(sqlite(o));
  }

  static writer_counters stats(const event_store& s) {
    const auto c = sqlite_stats_of(s);
    return {c.commits, c.requests, c.largest_batch};
  }

  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// PostgreSQL: a database of its own in the test process's throwaway
// cluster (support/postgres.h), dropped with the factory. The store reads
// the fixture's manual clock instead of the database's (postgres_options::clock).
class postgres_factory {
 public:
  static constexpr const char* name = "postgres";

  explicit postgres_factory(const std::filesystem::path& /*dir*/)
      : url_(tether::test::postgres_cluster::get().fresh_database()) {}
  ~postgres_factory() { tether::test::postgres_cluster::get().drop_database(url_); }
  postgres_factory(const postgres_factory&) = delete;
  postgres_factory& operator=(const postgres_factory&) = delete;

  [[nodiscard]] result<std::unique_ptr<event_store>> open(const backend_options& o) const {
    postgres_options po;
    po.url = url_;
    po.clock = o.clock;
    po.max_batch = o.max_batch;
    po.tail_buffer = o.tail_buffer;
    po.tail_buffer_bytes = o.tail_buffer_bytes;
    po.retry_initial_ms = o.retry_initial_ms;
    po.retry_max_ms = o.retry_max_ms;
    po.fail_commit = o.fail_commit;
    return open_postgres_store(std::move(po));
  }

  static writer_counters stats(const event_store& s) {
    const auto* c = dynamic_cast<const committed_store*>(&s);
    if (c == nullptr) return {};
    const auto st = c->writer_stats();
    return {st.commits, st.requests, st.largest_batch};
  }

  [[nodiscard]] const std::string& url() const { return url_; }

 private:
  std::string url_;
};

using backends = ::testing::Types<sqlite_factory, postgres_factory>;

// Names the typed tests after their backend ("leases/sqlite.…").
struct backend_names {
  template <class Factory>
  static std::string GetName(int) {  // NOLINT(readability-identifier-naming): gtest's name
    return Factory::name;
  }
};

}  // namespace tether::store::test
