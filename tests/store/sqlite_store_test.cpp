// SQLite only: opening (schema version, files that are no database), the
// background WAL checkpoints, rows damaged behind the store's back, and the
// probe of a degraded store.
#include "store/sqlite/sqlite_store.h"

#include <atomic>
#include <fstream>

#include "model/errors.h"
#include "sqlite_fixture.h"
#include "store/sqlite/db.h"
#include "store/sqlite/schema.h"

namespace tether::store::test {
namespace {

using open_sqlite = sqlite_store_test;
using wal_sqlite = sqlite_store_test;
using damaged_rows_sqlite = sqlite_store_test;

TEST_F(open_sqlite, a_database_from_a_newer_tether_is_refused) {
  open();
  close_store();
  raw_exec(db_path(), "PRAGMA user_version = " + std::to_string(sqlite_schema_version() + 1));
  auto r = open_sqlite_store(options());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::schema_too_new);
  EXPECT_NE(r.error().message.find("database schema version " + std::to_string(sqlite_schema_version() + 1) +
                                   " is newer than this Tether (" + std::to_string(sqlite_schema_version()) + ")"),
            std::string::npos)
      << r.error().message;
}

TEST_F(open_sqlite, a_new_database_gets_the_current_schema_version) {
  open();
  close_store();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path().c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(st, 0), sqlite_schema_version());
  sqlite3_finalize(st);
  sqlite3_close(db);
  open();  // reopening an up-to-date database migrates nothing
}

TEST_F(open_sqlite, a_file_that_is_not_a_database_fails_to_open) {
  {
    std::ofstream f(db_path());
    f << "this is not a database, just some text that is long enough to fill a header. "
         "this is not a database, just some text that is long enough to fill a header.";
  }
  auto r = open_sqlite_store(options());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::open_failed);
}

TEST_F(open_sqlite, a_path_in_a_missing_directory_fails_to_open) {
  auto o = options();
  o.path = (dir_ / "missing" / "tether.db").string();
  auto r = open_sqlite_store(std::move(o));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::open_failed);
  EXPECT_FALSE(r.error().message.empty());
}

TEST_F(wal_sqlite, the_wal_is_copied_into_the_database_in_the_background_while_the_store_is_open) {
  auto o = options();
  o.checkpoint_pages = 1'000;
  open(o);
  const auto before = std::filesystem::file_size(db_path());
  const auto s = new_session();
  // Enough commits to pass the checkpoint threshold (1,000 WAL pages).
  const std::string big(3'000, 'x');
  for (int i = 0; i < 1'500; ++i) ASSERT_TRUE(append(s, {notice(big + std::to_string(i))}));
  bool grew = false;
  for (int i = 0; i < 10'000 && !grew; ++i) {
    grew = std::filesystem::file_size(db_path()) > before + 1'000'000;
    if (!grew) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_TRUE(grew) << "the database file holds the checkpointed pages before the store closes";
  EXPECT_EQ(last_seq(s), 1'501);
}

TEST_F(damaged_rows_sqlite, a_row_whose_data_is_not_json_is_corrupt_not_a_crash) {
  open();
  const auto s = new_session();
  ASSERT_TRUE(append(s, {notice("fine")}));
  raw_exec(db_path(), "UPDATE events SET data = 'not json' WHERE seq = 2");
  auto r = run(store().read(s, event_seq{0}, 10));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::corrupt);
  EXPECT_NE(r.error().message.find(s.str() + "/2"), std::string::npos) << r.error().message;
  auto before = run(store().read(s, event_seq{0}, 1));
  ASSERT_TRUE(before) << "rows before the bad one still read";
}

TEST_F(damaged_rows_sqlite, a_row_of_unknown_type_is_undecodable) {
  open();
  const auto s = new_session();
  ASSERT_TRUE(append(s, {notice("fine")}));
  raw_exec(db_path(), "UPDATE events SET type = 'bogus.type' WHERE seq = 2");
  auto r = run(store().read(s, event_seq{1}, 10));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), model::model_errc::undecodable);
  raw_exec(db_path(), "UPDATE events SET type = 'synthetic', data = '[1,2]' WHERE seq = 2");
  auto shape = run(store().read(s, event_seq{1}, 10));
  ASSERT_FALSE(shape);
  EXPECT_EQ(shape.error(), store_errc::corrupt);
  raw_exec(db_path(), "UPDATE events SET data = '{\"text\": 5}' WHERE seq = 2");
  auto field = run(store().read(s, event_seq{1}, 10));
  ASSERT_FALSE(field);
  EXPECT_EQ(field.error(), model::model_errc::undecodable);
}

TEST_F(damaged_rows_sqlite, a_corrupt_projection_row_is_corrupt) {
  open();
  const auto s = new_session();
  const auto id = input_id::generate();
  ASSERT_TRUE(append(s, {admitted(id, "hi")}));
  raw_exec(db_path(), "UPDATE inputs SET delivery = 'sideways'");
  auto r = run(store().get_input(id));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::corrupt);
}

TEST_F(damaged_rows_sqlite, a_tail_of_a_corrupt_session_reports_the_error) {
  open();
  const auto s = new_session();
  raw_exec(db_path(), "UPDATE events SET data = 'garbage'");
  auto tail = store().tail(s, event_seq{0});
  auto r = run(tail->next());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::corrupt);
}

using probe_sqlite = sqlite_store_test;

std::int64_t user_version(const std::string& path) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, nullptr), SQLITE_OK);
  std::int64_t v = -1;
  if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return v;
}

TEST_F(probe_sqlite, the_probe_of_a_degraded_store_commits_and_changes_nothing) {
  std::atomic<bool> fail{false};
  std::atomic<int> probes{0};
  auto o = options();
  o.fail_commit = [&] {
    probes.fetch_add(1);
    return fail.load();
  };
  o.retry_initial_ms = 1;
  o.retry_max_ms = 10;
  open(std::move(o));
  const auto s = new_session();
  fail = true;
  ASSERT_FALSE(append(s, {notice("lost")}));
  const int seen = probes.load();
  fail = false;
  ASSERT_TRUE(eventually([&] { return store().health().state == store_state::ok; })) << "never recovered";
  EXPECT_GT(probes.load(), seen) << "a probe committed";
  close_store();
  EXPECT_EQ(user_version(db_path()), sqlite_schema_version()) << "the probe rewrites the schema version unchanged";
}

}  // namespace
}  // namespace tether::store::test
