#include "cli/session_ref.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <boost/json.hpp>

#include "cli/json_fields.h"
#include "util/errors.h"

namespace tether::cli {

namespace {

constexpr std::string_view id_head = "ses_";
constexpr std::size_t max_id_body = 64;  // util/ids.h

bool id_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-'; }

error no_such(std::string_view arg, std::string_view why) {
  return make_error(util_errc::not_found, fmt::format("'{}' {}", arg, why));
}

}  // namespace

result<std::string> resolve_session_with(std::string_view arg, const session_lister& list) {
  if (arg == "last") {
    auto ids = list("", 1);
    if (!ids) return ids.error();
    if (ids->empty()) return make_error(util_errc::not_found, "`last`: there are no sessions yet");
    return ids->front();
  }
  std::string_view body = arg;
  if (body.starts_with(id_head)) body.remove_prefix(id_head.size());
  if (body.empty() || body.size() > max_id_body || !std::all_of(body.begin(), body.end(), id_char))
    return make_error(util_errc::invalid_argument,
                      fmt::format("'{}' is not a session id, a prefix of one, or `last`", arg));
  const std::string given = std::string(id_head) + std::string(body);
  std::string upper = given;
  std::transform(upper.begin() + static_cast<std::ptrdiff_t>(id_head.size()), upper.end(),
                 upper.begin() + static_cast<std::ptrdiff_t>(id_head.size()),
                 [](char c) { return static_cast<char>(std::toupper(static_cast<unsigned char>(c))); });
  std::vector<std::string> tries{given};
  if (upper != given) tries.push_back(upper);  // generated ids are upper case
  for (const auto& prefix : tries) {
    auto ids = list(prefix, 3);
    if (!ids) return ids.error();
    if (std::find(ids->begin(), ids->end(), prefix) != ids->end()) return prefix;  // the whole id
    if (ids->size() == 1) return ids->front();
    if (ids->size() > 1)
      return no_such(arg, fmt::format("is ambiguous: it starts {} (give more of the id)", fmt::join(*ids, ", ")));
  }
  return no_such(arg, "names no session (no session id starts with it)");
}

result<std::string> resolve_session(client& c, std::string_view arg) {
  return resolve_session_with(arg, [&c](const std::string& prefix, std::size_t limit) -> result<std::vector<std::string>> {
    auto listed = c.get(fmt::format("/v1/sessions?prefix={}&limit={}", prefix, limit));
    if (!listed) return listed.error();
    std::vector<std::string> ids;
    const auto& sessions = member(*listed, "sessions");
    if (sessions.is_array())
      for (const auto& s : sessions.as_array()) ids.push_back(str_of(s, "id"));
    return ids;
  });
}

}  // namespace tether::cli
