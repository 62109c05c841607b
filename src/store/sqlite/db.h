// Thin RAII wrappers over the sqlite3 C API, private to the SQLite backend.
//
// A connection is used by one thread at a time (the writer owns one; each
// reader checks one out of the pool). It caches prepared statements by SQL
// text, so `sql` passed to prepare() must have static storage duration (a
// string literal).
//
// Failures are values. Each failed call is classified once, here:
//   SQLITE_CONSTRAINT, TOOBIG, MISMATCH, RANGE  -> store_errc::rejected: the
//       request's own fault; the writer rolls back that request only.
//   SQLITE_CORRUPT, NOTADB                      -> store_errc::corrupt
//   anything else (I/O, full disk, busy, nomem) -> the connection's io code
//       (write_failed for the writer, read_failed for readers).
// Every failure that is not `rejected` is also remembered as fatal: the
// writer checks take_fatal() after each request and abandons the whole batch,
// since SQLite may already have rolled the transaction back.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "store/errors.h"
#include "util/ids.h"
#include "util/result.h"

struct sqlite3;
struct sqlite3_stmt;

namespace tether::store::sqlite {

class connection;

// Bytes bound as a BLOB (text is bound as TEXT, which must be UTF-8).
struct blob {
  std::string_view bytes;
};

// One execution of a cached prepared statement. Binds, steps and reads
// columns; resets the statement when destroyed. If preparing failed, every
// step returns that error.
class query {
 public:
  query(connection* c, sqlite3_stmt* s, std::optional<error> prepare_error);
  query(query&& o) noexcept;
  query& operator=(query&&) = delete;
  query(const query&) = delete;
  ~query();

  // Binds the arguments to parameters 1..N.
  template <class... A>
  query& bind(const A&... args) {
    int i = 0;
    (bind_one(++i, args), ...);
    return *this;
  }

  // One step: true when a row is ready, false when the statement is done.
  result<bool> step();
  // Steps to completion (statements that return no rows).
  result<void> run();

  [[nodiscard]] std::int64_t int64(int col) const;
  [[nodiscard]] double real(int col) const;
  [[nodiscard]] std::string text(int col) const;
  [[nodiscard]] std::optional<std::string> optional_text(int col) const;
  [[nodiscard]] std::string bytes(int col) const;  // a BLOB's (or TEXT's) bytes
  [[nodiscard]] bool is_null(int col) const;

 private:
  void bind_one(int i, std::int64_t v);
  void bind_one(int i, int v) { bind_one(i, static_cast<std::int64_t>(v)); }
  void bind_one(int i, bool v) { bind_one(i, static_cast<std::int64_t>(v ? 1 : 0)); }
  void bind_one(int i, std::string_view v);
  void bind_one(int i, const std::string& v) { bind_one(i, std::string_view(v)); }
  void bind_one(int i, const char* v) { bind_one(i, std::string_view(v)); }
  void bind_one(int i, std::nullopt_t);
  void bind_one(int i, blob v);
  void bind_one(int i, event_seq v) { bind_one(i, v.value); }
  template <class Tag>
  void bind_one(int i, const strong_id<Tag>& v) {
    bind_one(i, std::string_view(v.str()));
  }
  template <class T>
  void bind_one(int i, const std::optional<T>& v) {
    if (v)
      bind_one(i, *v);
    else
      bind_one(i, std::nullopt);
  }

  connection* conn_;
  sqlite3_stmt* stmt_;
  std::optional<error> error_;
};

enum class open_mode { read_write, read_only };

class connection {
 public:
  // Opens (and for read_write creates) the database file. Sets busy_timeout.
  static result<std::unique_ptr<connection>> open(const std::string& path, open_mode mode);
  ~connection();
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  // Runs one or more statements that return no rows we need.
  result<void> exec(const char* sql);
  // A cached prepared statement; `sql` must outlive the connection.
  query prepare(std::string_view sql);
  // Runs one cached statement that returns no rows (BEGIN, SAVEPOINT, …).
  result<void> run(std::string_view sql) { return prepare(sql).run(); }

  // Replaces SQLite's automatic checkpoint: `hook(pages)` runs on the
  // committing thread after each commit with the number of frames now in the
  // WAL. The hook must not use this connection.
  void on_wal_commit(std::function<void(int)> hook);
  // A PASSIVE checkpoint: copies what it can from the WAL into the database
  // without waiting for readers or writers.
  result<void> checkpoint();

  [[nodiscard]] std::int64_t changes() const;
  // False when SQLite is in autocommit mode (e.g. it rolled back on its own).
  [[nodiscard]] bool in_transaction() const;
  // The first fatal failure since the last call, if any.
  std::optional<error> take_fatal();

  // Classifies a failed return code (see the header comment).
  error failure(int rc, std::string_view what);

 private:
  connection(sqlite3* db, store_errc io_code) : db_(db), io_code_(io_code) {}

  sqlite3* db_;
  store_errc io_code_;
  std::unordered_map<std::string_view, sqlite3_stmt*> cache_;
  std::optional<error> fatal_;
  std::function<void(int)> wal_hook_;
};

}  // namespace tether::store::sqlite
