// The check a database passes before the SQLite backend opens it.
//
// check_integrity() runs PRAGMA quick_check on a connection that has written
// nothing yet: every page of every b-tree and the freelist must be readable
// and well formed. It does not compare indexes with their tables (that is
// PRAGMA integrity_check, which takes much longer). It logs how long it took.
// Errors:
//   damaged    the file is damaged; the message names
//              the first problems and says how to inspect the file, restore
//              it from a backup or salvage it with sqlite3's .recover
//   read_failed / write_failed   it could not be read at all (I/O, locks):
//              no verdict on the file
#pragma once

#include <string>

#include "store/sqlite/db.h"
#include "util/result.h"

namespace tether::store::sqlite {

result<void> check_integrity(connection& db, const std::string& path);

}  // namespace tether::store::sqlite
