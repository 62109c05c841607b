#include "runtime/agent/json_lines.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <boost/json/parse.hpp>

#include "util/json_finite.h"
#include "runtime/agent/errors.h"
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

result<void> write_private_file(const std::filesystem::path& path, std::string_view content) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) return make_error(agent_errc::io, "cannot create " + path.parent_path().string() + ": " + ec.message());
  std::filesystem::permissions(path.parent_path(), std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::replace, ec);
  const auto tmp = path.string() + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return make_error(agent_errc::io, "cannot write " + tmp + ": " + std::strerror(errno));
  std::size_t done = 0;
  while (done < content.size()) {
    const auto n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      return make_error(agent_errc::io, "cannot write " + tmp + ": " + std::strerror(err));
    }
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  std::filesystem::rename(tmp, path, ec);
  if (ec) return make_error(agent_errc::io, "cannot replace " + path.string() + ": " + ec.message());
  return ok();
}

}  // namespace tether::runtime::agent
