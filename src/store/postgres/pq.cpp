#include "store/postgres/pq.h"

#include <array>
#include <cstdio>

#include <libpq-fe.h>

namespace tether::store::postgres {

// ---- rows ----

rows::rows(pg_result* r) : res_(r) {}
rows::rows(rows&& o) noexcept : res_(std::exchange(o.res_, nullptr)), row_(o.row_) {}
rows& rows::operator=(rows&& o) noexcept {
  if (this != &o) {
    if (res_ != nullptr) PQclear(res_);
    res_ = std::exchange(o.res_, nullptr);
    row_ = o.row_;
  }
  return *this;
}
rows::~rows() {
  if (res_ != nullptr) PQclear(res_);
}

bool rows::step() {
  if (res_ == nullptr || row_ + 1 >= PQntuples(res_)) return false;
  ++row_;
  return true;
}

int rows::count() const { return res_ == nullptr ? 0 : PQntuples(res_); }

std::int64_t rows::affected() const {
  if (res_ == nullptr) return 0;
  const std::string_view n = PQcmdTuples(res_);
  std::int64_t v = 0;
  std::from_chars(n.data(), n.data() + n.size(), v);
  return v;
}

std::int64_t rows::int64(int col) const {
  const auto v = view(col);
  std::int64_t out = 0;
  std::from_chars(v.data(), v.data() + v.size(), out);
  return out;
}

double rows::real(int col) const {
  const auto v = view(col);
  if (v.empty()) return 0;
  return std::strtod(std::string(v).c_str(), nullptr);
}

std::string_view rows::view(int col) const {
  if (res_ == nullptr || row_ < 0 || PQgetisnull(res_, row_, col) != 0) return {};
  return {PQgetvalue(res_, row_, col), static_cast<std::size_t>(PQgetlength(res_, row_, col))};
}

std::string rows::text(int col) const { return std::string(view(col)); }

std::optional<std::string> rows::optional_text(int col) const {
  if (is_null(col)) return std::nullopt;
  return text(col);
}

bool rows::is_null(int col) const { return res_ == nullptr || row_ < 0 || PQgetisnull(res_, row_, col) != 0; }

// ---- params ----

void params::add(double v) {
  std::array<char, 32> buf{};
  const auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  push(ec == std::errc{} ? std::string(buf.data(), end) : std::string("0"));
}

// ---- connection ----

namespace {

// Parameters applied before the caller's connection string, which may
// override any of them.
constexpr std::array<const char*, 6> default_keys{"connect_timeout",     "keepalives",       "keepalives_idle",
                                                  "keepalives_interval", "keepalives_count", "application_name"};
constexpr std::array<const char*, 6> default_values{"5", "1", "10", "5", "3", "tether"};

bool is_rejection(std::string_view state) {
  if (state.size() != 5) return false;
  const auto cls = state.substr(0, 2);
  return cls == "22" || cls == "23" || cls == "54" || state == "40001" || state == "40P01";
}

}  // namespace

result<std::unique_ptr<connection>> connection::open(const std::string& conninfo, store_errc io_code) {
  std::array<const char*, default_keys.size() + 2> keys{};
  std::array<const char*, default_keys.size() + 2> values{};
  for (std::size_t i = 0; i < default_keys.size(); ++i) {
    keys[i] = default_keys[i];
    values[i] = default_values[i];
  }
  keys[default_keys.size()] = "dbname";
  values[default_keys.size()] = conninfo.c_str();
  PGconn* c = PQconnectdbParams(keys.data(), values.data(), 1);
  if (c == nullptr) return make_error(io_code, "postgres: out of memory connecting");
  if (PQstatus(c) != CONNECTION_OK) {
    std::string msg = PQerrorMessage(c);
    PQfinish(c);
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    return make_error(io_code, "postgres: cannot connect to " + redact(conninfo) + ": " + msg);
  }
  // The server's notices ("relation already exists, skipping") are not
  // errors; they stay out of the node's stderr.
  PQsetNoticeProcessor(
      c, [](void*, const char*) {}, nullptr);
  std::unique_ptr<connection> conn(new connection(c, io_code));
  // The store relies on durable commits and on one time zone.
  if (auto r = conn->exec("SET synchronous_commit = on; SET TIME ZONE 'UTC'; SET client_encoding = 'UTF8'"); !r)
    return r.error();
  return conn;
}

connection::~connection() {
  if (conn_ != nullptr) PQfinish(conn_);
}

bool connection::connected() const { return conn_ != nullptr && PQstatus(conn_) == CONNECTION_OK; }

int connection::socket() const { return PQsocket(conn_); }

error connection::failure(pg_result* r, std::string_view what) {
  sqlstate_.clear();
  std::string msg;
  if (r != nullptr) {
    if (const char* st = PQresultErrorField(r, PG_DIAG_SQLSTATE)) sqlstate_ = st;
    if (const char* m = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY)) msg = m;
  }
  if (msg.empty()) msg = PQerrorMessage(conn_);
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
  if (r != nullptr) PQclear(r);
  std::string text = "postgres: " + std::string(what) + ": " + msg;
  if (!sqlstate_.empty()) text += " (" + sqlstate_ + ")";
  if (is_rejection(sqlstate_)) return {store_errc::rejected, std::move(text)};
  const bool damaged = sqlstate_ == "XX001" || sqlstate_ == "XX002";
  error e{damaged ? store_errc::corrupt : io_code_, std::move(text)};
  if (!fatal_) fatal_ = e;
  return e;
}

result<rows> connection::exec_rows(std::string_view sql) {
  const std::string text(sql);
  if (text.find('\0') != std::string::npos)
    return make_error(store_errc::rejected, "postgres: a statement holds a NUL byte");
  PGresult* r = PQexec(conn_, text.c_str());
  const auto st = r == nullptr ? PGRES_FATAL_ERROR : PQresultStatus(r);
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) return failure(r, text.substr(0, 60));
  sqlstate_.clear();
  return rows(r);
}

result<void> connection::exec(std::string_view sql) {
  auto r = exec_rows(sql);
  if (!r) return r.error();
  return ok();
}

std::string connection::literal(std::string_view text) const {
  char* quoted = PQescapeLiteral(conn_, text.data(), text.size());
  if (quoted == nullptr) return "''";
  std::string out(quoted);
  PQfreemem(quoted);
  return out;
}

result<rows> connection::query(const char* sql, const params& p) {
  if (p.has_nul())
    return make_error(store_errc::rejected, "postgres: a text value holds a NUL byte, which PostgreSQL cannot store");
  auto it = prepared_.find(sql);
  if (it == prepared_.end()) {
    std::string name = "t" + std::to_string(prepared_.size() + 1);
    PGresult* r = PQprepare(conn_, name.c_str(), sql, 0, nullptr);
    if (r == nullptr || PQresultStatus(r) != PGRES_COMMAND_OK) return failure(r, std::string_view(sql).substr(0, 60));
    PQclear(r);
    it = prepared_.emplace(sql, std::move(name)).first;
  }
  const auto& values = p.values();
  std::vector<const char*> ptrs;
  ptrs.reserve(values.size());
  for (const auto& v : values) ptrs.push_back(v ? v->c_str() : nullptr);
  PGresult* r =
      PQexecPrepared(conn_, it->second.c_str(), static_cast<int>(ptrs.size()), ptrs.data(), nullptr, nullptr, 0);
  const auto st = r == nullptr ? PGRES_FATAL_ERROR : PQresultStatus(r);
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) return failure(r, std::string_view(sql).substr(0, 60));
  sqlstate_.clear();
  return rows(r);
}

std::optional<error> connection::take_fatal() { return std::exchange(fatal_, std::nullopt); }

result<std::vector<connection::notification>> connection::take_notifications() {
  if (PQconsumeInput(conn_) == 0) {
    std::string msg = PQerrorMessage(conn_);
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    return make_error(io_code_, "postgres: listening: " + msg);
  }
  std::vector<notification> out;
  while (PGnotify* n = PQnotifies(conn_)) {
    out.push_back({n->relname, n->extra});
    PQfreemem(n);
  }
  return out;
}

std::string redact(std::string_view conninfo) {
  std::string s(conninfo);
  // URL: scheme://user:password@host → scheme://user:***@host
  if (const auto scheme = s.find("://"); scheme != std::string::npos) {
    const auto at = s.find('@', scheme + 3);
    const auto colon = s.find(':', scheme + 3);
    if (at != std::string::npos && colon != std::string::npos && colon < at)
      s.replace(colon + 1, at - colon - 1, "***");
    // ?password=… in the query string
  }
  for (std::string key : {"password="}) {
    for (auto pos = s.find(key); pos != std::string::npos; pos = s.find(key, pos + key.size())) {
      auto end = s.find_first_of(" &", pos + key.size());
      if (end == std::string::npos) end = s.size();
      s.replace(pos + key.size(), end - pos - key.size(), "***");
    }
  }
  return s;
}

}  // namespace tether::store::postgres
