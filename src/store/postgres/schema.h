// The PostgreSQL schema and its versioned migrations.
//
// The tables and columns are SQLite's (store/sqlite/schema.cpp), so the
// two backends' statements read alike: integers are BIGINT, text is TEXT,
// flags are integers 0/1, JSON is stored as text. The schema's version is
// kept in tether_schema(version); migrate() applies what is missing inside
// one transaction holding a transaction-scoped advisory lock, so two nodes
// that start together migrate once (the second waits, then finds nothing to
// do). A database whose version is newer than this binary's is refused with
// store_errc::schema_too_new.
#pragma once

#include "store/postgres/pq.h"
#include "util/result.h"

namespace tether::store::postgres {

int latest_schema_version();
// The version stored in the database (0: no schema yet).
result<int> stored_version(connection& db);
result<void> migrate(connection& db);

}  // namespace tether::store::postgres
