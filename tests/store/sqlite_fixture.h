// The fixture of the SQLite-only store tests (schema migrations, integrity
// check, WAL checkpoints, query plans, rows damaged behind the store's
// back): the conformance fixture on the SQLite factory, plus the database
// file and a raw connection to it.
#pragma once

#include <optional>
#include <string>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "backends.h"
#include "store/sqlite/sqlite_store.h"
#include "store_fixture.h"

namespace tether::store::test {

// Runs SQL on the database file through a separate raw connection (to
// corrupt rows or fake a newer schema behind the store's back).
inline void raw_exec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_busy_timeout(db, 5000);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  const std::string msg = err != nullptr ? err : "";
  sqlite3_free(err);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << msg;
}

class sqlite_store_test : public store_test<sqlite_factory> {
 protected:
  [[nodiscard]] std::string db_path() const { return factory_->path(); }

  // The SQLite options of a store on this test's database (hides the
  // backend-neutral options()).
  sqlite_options options() { return factory_->sqlite(store_test::options()); }

  event_store& open(std::optional<sqlite_options> o = std::nullopt) {
    return adopt(open_sqlite_store(o ? std::move(*o) : options()));
  }

  event_store& reopen(std::optional<sqlite_options> o = std::nullopt) {
    close_store();
    return open(std::move(o));
  }
};

}  // namespace tether::store::test
