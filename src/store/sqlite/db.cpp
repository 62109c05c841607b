#include "store/sqlite/db.h"

#include <mutex>

#include <sqlite3.h>

namespace tether::store::sqlite {

namespace {
constexpr int busy_timeout_ms = 5000;
}

query::query(connection* c, sqlite3_stmt* s, std::optional<error> prepare_error)
    : conn_(c), stmt_(s), error_(std::move(prepare_error)) {}

query::query(query&& o) noexcept : conn_(o.conn_), stmt_(o.stmt_), error_(std::move(o.error_)) { o.stmt_ = nullptr; }

query::~query() {
  if (stmt_ != nullptr) {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
}

void query::bind_one(int i, std::int64_t v) {
  if (stmt_ == nullptr || error_) return;
  if (const int rc = sqlite3_bind_int64(stmt_, i, v); rc != SQLITE_OK) error_ = conn_->failure(rc, "bind");
}

void query::bind_one(int i, std::string_view v) {
  if (stmt_ == nullptr || error_) return;
  // SQLITE_TRANSIENT: SQLite copies the text, so temporaries may be bound.
  // An empty view may have a null data pointer, which SQLite would bind as NULL.
  const char* data = v.data() != nullptr ? v.data() : "";
  if (const int rc = sqlite3_bind_text64(stmt_, i, data, v.size(), SQLITE_TRANSIENT, SQLITE_UTF8); rc != SQLITE_OK)
    error_ = conn_->failure(rc, "bind");
}

void query::bind_one(int i, std::nullopt_t) {
  if (stmt_ == nullptr || error_) return;
  if (const int rc = sqlite3_bind_null(stmt_, i); rc != SQLITE_OK) error_ = conn_->failure(rc, "bind");
}

result<bool> query::step() {
  if (error_) return *error_;
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  error_ = conn_->failure(rc, "step");
  return *error_;
}

result<void> query::run() {
  for (;;) {
    auto r = step();
    if (!r) return r.error();
    if (!*r) return ok();
  }
}

std::int64_t query::int64(int col) const { return sqlite3_column_int64(stmt_, col); }
double query::real(int col) const { return sqlite3_column_double(stmt_, col); }

std::string query::text(int col) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
  if (p == nullptr) return {};
  return {p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col))};
}

std::string query::bytes(int col) const {
  const auto* p = static_cast<const char*>(sqlite3_column_blob(stmt_, col));
  if (p == nullptr) return {};
  return {p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col))};
}

void query::bind_one(int i, blob v) {
  if (stmt_ == nullptr || error_) return;
  // A zero-length blob (not NULL) for an empty view.
  const int rc = v.bytes.empty() ? sqlite3_bind_zeroblob(stmt_, i, 0)
                                 : sqlite3_bind_blob64(stmt_, i, v.bytes.data(), v.bytes.size(), SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) error_ = conn_->failure(rc, "bind");
}

std::optional<std::string> query::optional_text(int col) const {
  if (is_null(col)) return std::nullopt;
  return text(col);
}

bool query::is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

namespace {
// Process-wide settings, applied once before SQLite initializes: no memory
// statistics (they take a global mutex on every allocation, which the writer
// pays for every page it touches). If SQLite was already initialized by
// someone else, the call is refused and the defaults stay: harmless.
void configure_sqlite_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    (void)sqlite3_initialize();
  });
}
}  // namespace

result<std::unique_ptr<connection>> connection::open(const std::string& path, open_mode mode) {
  configure_sqlite_once();
  const int flags =
      (mode == open_mode::read_write ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY) |
      SQLITE_OPEN_NOMUTEX;
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = "cannot open " + path + ": " + (db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
    sqlite3_close_v2(db);
    return make_error(store_errc::open_failed, std::move(msg));
  }
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, busy_timeout_ms);
  return std::unique_ptr<connection>(
      new connection(db, mode == open_mode::read_write ? store_errc::write_failed : store_errc::read_failed));
}

connection::~connection() {
  for (auto& [sql, stmt] : cache_) sqlite3_finalize(stmt);
  sqlite3_close_v2(db_);
}

void connection::on_wal_commit(std::function<void(int)> hook) {
  wal_hook_ = std::move(hook);
  sqlite3_wal_hook(
      db_,
      [](void* self, sqlite3*, const char*, int pages) {
        static_cast<connection*>(self)->wal_hook_(pages);
        return SQLITE_OK;
      },
      this);
}

result<void> connection::checkpoint() {
  // A connection that has not read the database yet has not opened its WAL,
  // and its checkpoint would do nothing.
  if (auto r = exec("PRAGMA schema_version"); !r) return r;
  const int rc = sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
  if (rc != SQLITE_OK && rc != SQLITE_BUSY) return failure(rc, "checkpoint");
  return ok();
}

result<void> connection::exec(const char* sql) {
  const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return failure(rc, "exec");
  return ok();
}

query connection::prepare(std::string_view sql) {
  if (auto it = cache_.find(sql); it != cache_.end()) return {this, it->second, std::nullopt};
  sqlite3_stmt* stmt = nullptr;
  const int rc =
      sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return {this, nullptr, failure(rc, "prepare")};
  }
  cache_.emplace(sql, stmt);
  return {this, stmt, std::nullopt};
}

std::int64_t connection::changes() const { return sqlite3_changes64(db_); }

bool connection::in_transaction() const { return sqlite3_get_autocommit(db_) == 0; }

std::optional<error> connection::take_fatal() { return std::exchange(fatal_, std::nullopt); }

error connection::failure(int rc, std::string_view what) {
  std::string msg = "sqlite " + std::string(what) + ": " + sqlite3_errmsg(db_);
  store_errc code = io_code_;
  switch (rc & 0xff) {
    case SQLITE_CONSTRAINT:
    case SQLITE_TOOBIG:
    case SQLITE_MISMATCH:
    case SQLITE_RANGE:
      return {store_errc::rejected, std::move(msg)};
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      code = store_errc::corrupt;
      break;
    default:
      break;
  }
  error e(code, std::move(msg));
  if (!fatal_) fatal_ = e;
  return e;
}

}  // namespace tether::store::sqlite
