// The check at open: a database with damaged pages is refused before
// anything is written to it, with a message that says how to inspect and
// recover it; a healthy one opens.
#include "store/sqlite/integrity.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>

#include "sqlite_fixture.h"
#include "store/event_store.h"
#include "store/sqlite/sqlite_store.h"

namespace tether::store::test {
namespace {

namespace fs = std::filesystem;
using integrity = sqlite_store_test;

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Writes garbage over pages first..first+count-1 (1-based) of the file.
void damage_pages(const std::string& path, std::int64_t page_size, std::int64_t first, int count) {
  std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
  ASSERT_TRUE(f.good());
  std::mt19937 rng(42);
  std::string garbage(static_cast<std::size_t>(page_size * count), '\0');
  for (auto& c : garbage) c = static_cast<char>(rng() & 0xff);
  f.seekp((first - 1) * page_size);
  f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  ASSERT_TRUE(f.good());
}

class damaged_database : public integrity {
 protected:
  // A database of 40 sessions × 60 events of 1.5 KB (~1,000 pages), with
  // everything checkpointed into the main file.
  void fill() {
    open();
    const std::string text(1500, 'x');
    for (int i = 0; i < 40; ++i) {
      sessions_.push_back(new_session("session " + std::to_string(i)));
      std::vector<model::payload> events;
      for (int e = 0; e < 60; ++e) events.push_back(notice(text + std::to_string(e)));
      auto r = append(sessions_.back(), std::move(events));
      ASSERT_TRUE(r) << why(r);
    }
    close_store();
    raw_exec(db_path(), "PRAGMA wal_checkpoint(TRUNCATE)");
    page_size_ = 4096;
    pages_ = static_cast<std::int64_t>(fs::file_size(db_path())) / page_size_;
    ASSERT_GT(pages_, 500);
  }

  std::vector<session_id> sessions_;
  std::int64_t page_size_ = 0;
  std::int64_t pages_ = 0;
};

TEST_F(damaged_database, three_garbage_pages_in_the_middle_refuse_the_open_with_how_to_recover) {
  fill();
  damage_pages(db_path(), page_size_, pages_ / 2, 3);
  const auto before = file_bytes(db_path());

  auto r = open_sqlite_store(options());
  ASSERT_FALSE(r) << "a damaged database opened";
  EXPECT_EQ(r.error(), store_errc::damaged);
  const auto& m = r.error().message;
  EXPECT_NE(m.find(db_path()), std::string::npos) << m;
  EXPECT_NE(m.find("PRAGMA integrity_check"), std::string::npos) << m;
  EXPECT_NE(m.find(".recover"), std::string::npos) << m;
  EXPECT_NE(m.find("backup"), std::string::npos) << m;
  EXPECT_EQ(file_bytes(db_path()), before) << "the refused open wrote to the file";
}

TEST_F(damaged_database, the_recovery_the_message_gives_yields_a_database_that_opens) {
  if (std::system("command -v sqlite3 >/dev/null 2>&1") != 0) GTEST_SKIP() << "no sqlite3 command";
  fill();
  damage_pages(db_path(), page_size_, pages_ / 2, 3);
  auto refused = open_sqlite_store(options());
  ASSERT_FALSE(refused);
  const auto& m = refused.error().message;
  const std::string version = "PRAGMA user_version = " + std::to_string(sqlite_schema_version());
  ASSERT_NE(m.find(version), std::string::npos) << m;

  // The message's salvage for a sqlite3 without sqlite_dbpage (this one).
  const std::string db = db_path();
  const std::string fresh = db + ".recovered";
  const std::string salvage = "sqlite3 '" + db +
                              "' .dump 2>/dev/null | sed 's/^ROLLBACK; -- due to errors$/COMMIT;/' | "
                              "sqlite3 '" +
                              fresh + "' && sqlite3 '" + fresh + "' \"" + version + "\"";
  ASSERT_EQ(std::system(salvage.c_str()), 0);
  fs::remove(db + "-wal");
  fs::remove(db + "-shm");
  fs::rename(fresh, db);
  open();
  // The sessions survive; the damaged pages' events are gone.
  std::size_t readable = 0;
  std::size_t events = 0;
  for (const auto& s : sessions_) {
    if (auto row = run(store().get_session(s)); row) ++readable;
    events += all_events(s).size();
  }
  EXPECT_GT(readable, sessions_.size() / 2);
  EXPECT_GT(events, sessions_.size() * 61 / 2);
  EXPECT_LT(events, sessions_.size() * 61) << "the damage cost nothing?";
  const auto s = new_session("after the recovery");
  EXPECT_EQ(all_events(s).size(), 1U);
}

TEST_F(damaged_database, a_healthy_database_opens_after_the_check) {
  fill();
  open();
  EXPECT_EQ(all_events(sessions_.front()).size(), 61U);
  EXPECT_EQ(all_events(sessions_.back()).size(), 61U);
}

TEST_F(integrity, a_new_database_passes_the_check) {
  open();
  const auto s = new_session();
  EXPECT_EQ(all_events(s).size(), 1U);
}

}  // namespace
}  // namespace tether::store::test
