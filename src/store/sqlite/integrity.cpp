#include "store/sqlite/integrity.h"

#include <chrono>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "store/sqlite/schema.h"

namespace tether::store::sqlite {

namespace {

std::string damaged_message(const std::string& path, const std::vector<std::string>& problems, std::int64_t version) {
  std::string found;
  for (std::size_t i = 0; i < problems.size() && i < 3; ++i) found += (i > 0 ? "; " : "") + problems[i];
  if (problems.size() > 3) found += "; …";
  const std::string& db = path;
  const std::string fresh = path + ".recovered";
  return db + " is damaged (PRAGMA quick_check: " + found + ").\n" +
         "Tether does not start on a damaged database. To recover:\n"
         "  1. stop every process that uses it and copy " +
         db + ", " + db + "-wal and " + db + "-shm aside;\n" + "  2. inspect it: sqlite3 " + db +
         " \"PRAGMA integrity_check\"\n" + "  3. restore " + db +
         " from a backup, or salvage what is readable into a new file:\n" + "       sqlite3 " + db +
         " .recover | sqlite3 " + fresh + "\n" +
         "     or, with a sqlite3 whose library lacks .recover's sqlite_dbpage table (Debian 12's):\n" +
         "       sqlite3 " + db + " .dump | sed 's/^ROLLBACK; -- due to errors$/COMMIT;/' | sqlite3 " + fresh + "\n" +
         "       sqlite3 " + fresh + " \"PRAGMA user_version = " + std::to_string(version) + "\"\n" +
         "  4. check the copy (sqlite3 " + fresh + " \"PRAGMA integrity_check\" prints ok), delete " + db +
         "-wal and " + db + "-shm, and move " + fresh + " to " + db + ".";
}

// The schema version in the file's header (page 1), or this binary's when
// even that cannot be read.
std::int64_t stored_version(connection& db) {
  auto q = db.prepare("PRAGMA user_version");
  if (auto row = q.step(); row && *row) return q.int64(0);
  return latest_schema_version();
}

}  // namespace

result<void> check_integrity(connection& db, const std::string& path) {
  const auto started = std::chrono::steady_clock::now();
  std::vector<std::string> problems;
  {
    auto q = db.prepare("PRAGMA quick_check(20)");
    for (;;) {
      auto row = q.step();
      if (!row) {
        // A page so broken that SQLite stops reading it is damage too; any
        // other failure (I/O, locks) is not a verdict on the file.
        if (row.error().code != store_errc::corrupt) return row.error();
        problems.push_back(row.error().message);
        break;
      }
      if (!*row) break;
      if (auto line = q.text(0); line != "ok") problems.push_back(std::move(line));
    }
  }
  std::int64_t pages = 0;
  {
    auto q = db.prepare("PRAGMA page_count");
    if (auto row = q.step(); row && *row) pages = q.int64(0);
  }
  (void)db.take_fatal();
  const auto took = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  spdlog::info("store: PRAGMA quick_check of {} ({} pages) took {:.1f} ms: {}", path, pages, took,
               problems.empty() ? "ok" : "damaged");
  if (problems.empty()) return ok();
  const auto version = stored_version(db);
  (void)db.take_fatal();
  return make_error(store_errc::damaged, damaged_message(path, problems, version));
}

}  // namespace tether::store::sqlite
