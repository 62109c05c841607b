#include "e2e/json_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <system_error>

#include <fmt/format.h>
#include <boost/json.hpp>

#include "e2e/result.h"

namespace tether::e2e {

namespace json = boost::json;

// ---------------------------------------------------------------- reader

json_reader::json_reader(const json::value& v, std::string where)
    : json_reader(&v, std::move(where), std::make_shared<std::string>()) {
  if (!v.is_object()) *err_ = where_ + ": not a JSON object";
}

json_reader::json_reader(const json::value* v, std::string where, std::shared_ptr<std::string> err)
    : v_(v), where_(std::move(where)), err_(std::move(err)) {}

tether::error json_reader::failure() const { return make_error(e2e_errc::bad_record, *err_); }

void json_reader::fail(const std::string& key, const std::string& what) {
  if (!ok()) return;
  const bool nested = where_.find(": ") != std::string::npos;
  *err_ = where_ + (nested ? "." : ": ") + key + " " + what;
}

const json::value* json_reader::field(std::string_view key, bool required) {
  if (!ok()) return nullptr;
  const auto* o = v_->if_object();
  if (!o) {
    fail(std::string(key), "cannot be read: its parent is not an object");
    return nullptr;
  }
  const auto* f = o->if_contains(key);
  if (!f || f->is_null()) {
    if (required) fail(std::string(key), "is missing");
    return nullptr;
  }
  return f;
}

void json_reader::expect_schema(std::string_view schema) {
  const auto* f = field("schema", true);
  if (!f) return;
  if (!f->is_string() || f->get_string() != schema) {
    const std::string seen = f->is_string() ? std::string(f->get_string()) : json::serialize(*f);
    fail("schema", "is \"" + seen + "\", expected \"" + std::string(schema) + "\"");
  }
}

std::string json_reader::str(std::string_view key) {
  const auto* f = field(key, true);
  if (!f) return {};
  if (!f->is_string()) {
    fail(std::string(key), "is not a string");
    return {};
  }
  return std::string(f->get_string());
}

std::string json_reader::opt_str(std::string_view key, std::string_view fallback) {
  const auto* f = field(key, false);
  if (!f) return std::string(fallback);
  if (!f->is_string()) {
    fail(std::string(key), "is not a string");
    return std::string(fallback);
  }
  return std::string(f->get_string());
}

namespace {
std::optional<std::int64_t> as_integer(const json::value& v) {
  if (v.is_int64()) return v.get_int64();
  if (v.is_uint64() && v.get_uint64() <= static_cast<std::uint64_t>(INT64_MAX))
    return static_cast<std::int64_t>(v.get_uint64());
  if (v.is_double() && std::isfinite(v.get_double()) && std::trunc(v.get_double()) == v.get_double() &&
      std::fabs(v.get_double()) < 9.0e18)
    return static_cast<std::int64_t>(v.get_double());
  return std::nullopt;
}
}  // namespace

std::optional<std::int64_t> json_reader::opt_integer(std::string_view key) {
  const auto* f = field(key, false);
  if (!f) return std::nullopt;
  auto i = as_integer(*f);
  if (!i) fail(std::string(key), "is not a whole number");
  return i;
}

std::int64_t json_reader::integer(std::string_view key) {
  if (!field(key, true)) return 0;
  return opt_integer(key).value_or(0);
}

std::int64_t json_reader::integer(std::string_view key, std::int64_t fallback) {
  return opt_integer(key).value_or(fallback);
}

std::optional<double> json_reader::opt_number(std::string_view key) {
  const auto* f = field(key, false);
  if (!f) return std::nullopt;
  if (!f->is_number()) {
    fail(std::string(key), "is not a number");
    return std::nullopt;
  }
  return f->to_number<double>();
}

bool json_reader::boolean(std::string_view key) {
  const auto* f = field(key, true);
  if (!f) return false;
  if (!f->is_bool()) {
    fail(std::string(key), "is not true or false");
    return false;
  }
  return f->get_bool();
}

std::int64_t json_reader::time(std::string_view key) {
  const std::string s = str(key);
  if (!ok()) return 0;
  auto t = parse_iso8601(s);
  if (!t) fail(std::string(key), "is not an ISO 8601 UTC time (\"" + s + "\")");
  return t.value_or(0);
}

std::optional<json_reader> json_reader::object(std::string_view key, field_presence presence) {
  const auto* f = field(key, presence == required_field);
  if (!f) return std::nullopt;
  if (!f->is_object()) {
    fail(std::string(key), "is not an object");
    return std::nullopt;
  }
  const bool nested = where_.find(": ") != std::string::npos;
  return json_reader(f, where_ + (nested ? "." : ": ") + std::string(key), err_);
}

void json_reader::each(std::string_view key, const std::function<void(json_reader&)>& f, field_presence presence) {
  const auto* a = field(key, presence == required_field);
  if (!a) return;
  if (!a->is_array()) {
    fail(std::string(key), "is not an array");
    return;
  }
  const bool nested = where_.find(": ") != std::string::npos;
  const std::string base = where_ + (nested ? "." : ": ") + std::string(key);
  std::size_t i = 0;
  for (const auto& e : a->get_array()) {
    json_reader r(&e, base + "[" + std::to_string(i++) + "]", err_);
    f(r);
    if (!ok()) return;
  }
}

void json_reader::each_member(const std::function<void(const std::string&, json_reader&)>& f) {
  const auto* o = v_->if_object();
  if (!o || !ok()) return;
  const bool nested = where_.find(": ") != std::string::npos;
  for (const auto& m : *o) {
    const std::string k(m.key());
    json_reader r(&m.value(), where_ + (nested ? "." : ": ") + k, err_);
    f(k, r);
    if (!ok()) return;
  }
}

std::string json_reader::self_str() {
  if (!ok()) return {};
  if (!v_->is_string()) {
    *err_ = where_ + " is not a string";
    return {};
  }
  return std::string(v_->get_string());
}

// ---------------------------------------------------------------- time

std::optional<std::int64_t> parse_iso8601(std::string_view s) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0, consumed = 0;
  const std::string text(s);
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &consumed) != 6)
    return std::nullopt;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return std::nullopt;
  std::string_view rest = s.substr(static_cast<std::size_t>(consumed));
  int ms = 0;
  if (!rest.empty() && rest.front() == '.') {
    rest.remove_prefix(1);
    int digits = 0;
    while (!rest.empty() && rest.front() >= '0' && rest.front() <= '9') {
      if (digits < 3) ms = ms * 10 + (rest.front() - '0');
      ++digits;
      rest.remove_prefix(1);
    }
    if (digits == 0) return std::nullopt;
    for (int i = digits; i < 3; ++i) ms *= 10;
  }
  if (rest != "Z") return std::nullopt;
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = sec;
  return static_cast<std::int64_t>(::timegm(&tm)) * 1000 + ms;
}

// ---------------------------------------------------------------- writing

namespace {

void pretty(const json::value& v, std::string& out, int depth) {
  const auto indent = [&](int d) { out.append(static_cast<std::size_t>(d) * 2, ' '); };
  switch (v.kind()) {
    case json::kind::object: {
      const auto& o = v.get_object();
      if (o.empty()) {
        out += "{}";
        return;
      }
      out += "{\n";
      std::size_t i = 0;
      for (const auto& m : o) {
        indent(depth + 1);
        out += json::serialize(json::string(m.key()));
        out += ": ";
        pretty(m.value(), out, depth + 1);
        out += ++i < o.size() ? ",\n" : "\n";
      }
      indent(depth);
      out += '}';
      return;
    }
    case json::kind::array: {
      const auto& a = v.get_array();
      if (a.empty()) {
        out += "[]";
        return;
      }
      out += "[\n";
      std::size_t i = 0;
      for (const auto& e : a) {
        indent(depth + 1);
        pretty(e, out, depth + 1);
        out += ++i < a.size() ? ",\n" : "\n";
      }
      indent(depth);
      out += ']';
      return;
    }
    case json::kind::double_: {
      // Shortest round-trip form ("0.015", not "1.5E-2"); JSON has no NaN.
      const double d = v.get_double();
      out += std::isfinite(d) ? fmt::format("{}", d) : "null";
      return;
    }
    default:
      out += json::serialize(v);
      return;
  }
}

std::string errno_text(int e) { return std::error_code(e, std::generic_category()).message(); }

}  // namespace

std::string json_escaped(std::string_view text) {
  auto quoted = json::serialize(json::string(text));
  return quoted.substr(1, quoted.size() - 2);
}

std::string pretty_json(const json::value& v) {
  std::string out;
  pretty(v, out, 0);
  out += '\n';
  return out;
}

result<void> write_json_file(const std::filesystem::path& path, const json::value& v) {
  return write_file_atomic(path, pretty_json(v));
}

result<void> write_file_atomic(const std::filesystem::path& path, std::string_view text) {
  std::error_code ec;
  if (path.has_parent_path()) {
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec) return make_error(e2e_errc::io, "cannot create " + path.parent_path().string() + ": " + ec.message());
  }
  // A temp file in the same directory, renamed over the target: a reader sees
  // the old file or the new one, never half of one.
  static std::atomic<unsigned> counter{0};
  const auto tmp = path.parent_path() /
                   (path.filename().string() + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return make_error(e2e_errc::io, "cannot create " + tmp.string() + ": " + errno_text(errno));
  std::size_t done = 0;
  while (done < text.size()) {
    const auto n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return make_error(e2e_errc::io, "cannot write " + tmp.string() + ": " + errno_text(e));
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    return make_error(e2e_errc::io, "cannot sync " + tmp.string() + ": " + errno_text(e));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    return make_error(e2e_errc::io, "cannot rename " + tmp.string() + " to " + path.string() + ": " + errno_text(e));
  }
  return ok();
}

result<json::value> read_json_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return make_error(e2e_errc::not_found, path.string() + " does not exist");
    return make_error(e2e_errc::io, "cannot read " + path.string());
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  boost::system::error_code ec;
  auto v = json::parse(buf.str(), ec);
  if (ec) return make_error(e2e_errc::bad_record, path.string() + " is not valid JSON: " + ec.message());
  return v;
}

}  // namespace tether::e2e
