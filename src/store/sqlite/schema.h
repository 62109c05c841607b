// Versioned schema of the SQLite backend.
//
// The database's version lives in PRAGMA user_version. Migrations are an
// ordered list of steps (schema.cpp); migrate() applies every step above the
// stored version in one transaction, then records the new version. A database
// whose version is above this binary's is refused with schema_too_new and is
// left untouched.
#pragma once

#include "store/sqlite/db.h"
#include "util/result.h"

namespace tether::store::sqlite {

// The version this binary writes (the last migration step).
int latest_schema_version();

// Brings the database up to latest_schema_version(). Errors: schema_too_new,
// open_failed.
result<void> migrate(connection& db);
// Brings it up to `target` only: for tests that build an old database and
// check what a later step does to it.
result<void> migrate(connection& db, int target);

}  // namespace tether::store::sqlite
