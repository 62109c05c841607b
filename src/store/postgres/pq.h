// Thin RAII wrappers over libpq, private to the PostgreSQL backend.
//
// A connection is used by one thread at a time (the writer owns one, each
// reader checks one out of its pool, the listener owns one). Statements are
// prepared once per connection, on first use, and cached by SQL text, so
// `sql` passed to query()/run() must have static storage duration (a string
// literal). Parameters are sent as text; a parameter holding a NUL byte
// cannot be sent as text and is refused (store_errc::rejected) before
// anything is sent, so nothing is silently cut.
//
// Failures are values. Each failed call is classified once, here, by its
// SQLSTATE:
//   class 22 (data: invalid UTF-8, out of range), 23 (constraints), 54
//       (too big)                                     -> store_errc::rejected
//   40001, 40P01 (serialization failure, deadlock)   -> rejected, and
//       retryable(): the writer runs the batch again
//   XX001, XX002 (data corrupted)                    -> store_errc::corrupt
//   anything else, and a broken connection           -> the connection's io
//       code (write_failed for the writer, read_failed for readers)
// Every failure that is not `rejected` is also remembered as fatal
// (take_fatal()): the writer abandons the batch, the pools replace the
// connection.
#pragma once

#include <charconv>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "store/errors.h"
#include "util/ids.h"
#include "util/result.h"

struct pg_conn;
struct pg_result;

namespace tether::store::postgres {

// The rows a statement returned, read like a cursor: step() moves to the
// next row (false after the last), then the accessors read its columns.
// Column numbers start at 0. An integer column that does not parse reads 0.
class rows {
 public:
  explicit rows(pg_result* r);
  rows(rows&& o) noexcept;
  rows& operator=(rows&& o) noexcept;
  rows(const rows&) = delete;
  rows& operator=(const rows&) = delete;
  ~rows();

  bool step();
  [[nodiscard]] int count() const;  // rows in all
  // Rows changed by an INSERT/UPDATE/DELETE.
  [[nodiscard]] std::int64_t affected() const;

  [[nodiscard]] std::int64_t int64(int col) const;
  [[nodiscard]] double real(int col) const;
  [[nodiscard]] std::string text(int col) const;
  [[nodiscard]] std::string_view view(int col) const;  // valid while this object lives
  [[nodiscard]] std::optional<std::string> optional_text(int col) const;
  [[nodiscard]] bool is_null(int col) const;

 private:
  pg_result* res_;
  int row_ = -1;
};

// Query parameters, as text (NULL for nullopt).
class params {
 public:
  template <class... A>
  explicit params(const A&... args) {
    (add(args), ...);
  }
  void add(std::int64_t v) { push(std::to_string(v)); }
  void add(int v) { add(static_cast<std::int64_t>(v)); }
  void add(bool v) { add(static_cast<std::int64_t>(v ? 1 : 0)); }
  void add(double v);
  void add(std::string_view v) { push(std::string(v)); }
  void add(const std::string& v) { push(v); }
  void add(const char* v) { push(std::string(v)); }
  void add(std::nullopt_t) { values_.emplace_back(std::nullopt); }
  void add(event_seq v) { add(v.value); }
  template <class Tag>
  void add(const strong_id<Tag>& v) {
    push(v.str());
  }
  template <class T>
  void add(const std::optional<T>& v) {
    if (v)
      add(*v);
    else
      add(std::nullopt);
  }

  [[nodiscard]] const std::vector<std::optional<std::string>>& values() const { return values_; }
  // Whether a value holds a NUL byte (it cannot be sent as text).
  [[nodiscard]] bool has_nul() const { return has_nul_; }

 private:
  void push(std::string v) {
    if (v.find('\0') != std::string::npos) has_nul_ = true;
    values_.emplace_back(std::move(v));
  }
  std::vector<std::optional<std::string>> values_;
  bool has_nul_ = false;
};

class connection {
 public:
  // Connects with `conninfo` (a postgres:// URL or key=value pairs), with a
  // connect timeout and TCP keepalives, client_encoding UTF8 and the
  // session settings the store relies on (synchronous_commit on, UTC).
  static result<std::unique_ptr<connection>> open(const std::string& conninfo, store_errc io_code);
  ~connection();
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  // One or more statements over the simple protocol, rows discarded.
  result<void> exec(std::string_view sql);
  // exec() returning the rows of the last statement: several statements in
  // one round trip.
  result<rows> exec_rows(std::string_view sql);
  // `text` as an SQL string literal (quoted and escaped for this
  // connection), for statements sent with exec().
  [[nodiscard]] std::string literal(std::string_view text) const;
  // A cached prepared statement with its parameters; its rows.
  result<rows> query(const char* sql, const params& p);
  template <class... A>
  result<rows> query(const char* sql, const A&... args) {
    return query(sql, params(args...));
  }
  // query() for statements whose rows are not needed.
  template <class... A>
  result<void> run(const char* sql, const A&... args) {
    auto r = query(sql, params(args...));
    if (!r) return r.error();
    return ok();
  }

  // The first fatal failure since the last call, if any.
  std::optional<error> take_fatal();
  // The SQLSTATE of the last failure ("" when none or not from the server).
  [[nodiscard]] const std::string& last_sqlstate() const { return sqlstate_; }
  // The last failure was a serialization failure or a deadlock: run again.
  [[nodiscard]] bool retryable() const { return sqlstate_ == "40001" || sqlstate_ == "40P01"; }
  // The last failure was a unique violation (a concurrent insert of the same key).
  [[nodiscard]] bool unique_violation() const { return sqlstate_ == "23505"; }
  // False once the connection to the server is lost.
  [[nodiscard]] bool connected() const;

  // For the listener: the socket, and the notifications received so far.
  [[nodiscard]] int socket() const;
  struct notification {
    std::string channel;
    std::string payload;
  };
  // Reads what the socket has (non-blocking) and returns the notifications
  // received; an error when the connection is lost.
  result<std::vector<notification>> take_notifications();

 private:
  connection(pg_conn* c, store_errc io_code) : conn_(c), io_code_(io_code) {}
  error failure(pg_result* r, std::string_view what);

  pg_conn* conn_;
  store_errc io_code_;
  std::unordered_map<const char*, std::string> prepared_;  // sql -> statement name
  std::optional<error> fatal_;
  std::string sqlstate_;
};

// "user:***@host" style: a connection string with its password removed, for logs.
std::string redact(std::string_view conninfo);

}  // namespace tether::store::postgres
