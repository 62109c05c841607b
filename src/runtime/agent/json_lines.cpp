#include "runtime/agent/json_lines.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <boost/json/parse.hpp>

#include "util/json_finite.h"
#include "runtime/agent/dialect.h"
#include "runtime/agent/errors.h"
#include "util/beneath.h"
#include "util/text.h"

namespace tether::runtime::agent {

namespace json = boost::json;

namespace {

constexpr std::size_t quoted_bytes = 200;

std::string quoted(std::string_view line) {
  std::string head(line.substr(0, quoted_bytes));
  if (!is_valid_utf8(head)) head = "(binary)";
  return line.size() > quoted_bytes ? head + "…" : head;
}

}  // namespace

result<json::object> parse_object(std::string_view line) {
  boost::system::error_code ec;
  auto v = json::parse(line, ec);
  if (ec || !v.is_object()) return make_error(agent_errc::protocol, "not a JSON object: \"" + quoted(line) + "\"");
  if (!all_numbers_finite(v))
    return make_error(agent_errc::protocol, "a number out of range in: \"" + quoted(line) + "\"");
  return std::move(v.as_object());
}

std::string str(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
}

std::int64_t integer(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  if (v == nullptr) return 0;
  if (v->is_int64()) return v->as_int64();
  if (v->is_uint64()) return static_cast<std::int64_t>(std::min<std::uint64_t>(v->as_uint64(), INT64_MAX));
  if (v->is_double() && v->as_double() >= 0 && v->as_double() < 9.0e18)
    return static_cast<std::int64_t>(v->as_double());
  return 0;
}

const json::object* object_at(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_object() ? &v->as_object() : nullptr;
}

std::string toml_string(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7f) {
      out += fmt::format("\\u{:04x}", u);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

result<void> write_private_file(const std::filesystem::path& home, const std::filesystem::path& rel,
                                std::string_view content) {
  const auto fail = [&](const tether::error& e) {
    return make_error(agent_errc::io, "cannot write " + (home / rel).string() + ": " + e.message);
  };
  auto root = beneath::open_root(home);
  if (!root) return fail(root.error());
  auto dir = beneath::open_dir(root->get(), rel.parent_path().string(), beneath::missing_dirs::make, 0700);
  if (!dir) return fail(dir.error());
  if (::fchmod(dir->get(), 0700) != 0) return make_error(agent_errc::io, "cannot set the mode of " + (home / rel).parent_path().string());
  auto w = beneath::replace_file(dir->get(), rel.filename().string(), content, 0600, rel.string());
  if (!w) return fail(w.error());
  return ok();
}

result<void> write_home_file(const launch_input& in, const std::string& rel, std::string content) {
  if (in.home_files != nullptr) {
    in.home_files->emplace_back(rel, std::move(content));
    return ok();
  }
  return write_private_file(in.home, rel, content);
}

}  // namespace tether::runtime::agent
