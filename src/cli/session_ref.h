// How a person names a session on the command line, in every verb that
// takes one: its id; any unique prefix of it, with or without the "ses_"
// and, for generated ids, in any case ("01m8x6" finds ses_01M8X6…); or
// `last`, the most recently active session.
//
//   auto id = resolve_session(c, "last");   // via GET /v1/sessions?prefix=…
//   auto id = resolve_session_with("01m8", [&](const std::string& prefix, std::size_t limit) {
//     return ids_from_my_store(prefix, limit);  // most recent first
//   });
//
// A session whose id is exactly the text wins over longer ones it starts.
// Errors: util_errc::invalid_argument when the text cannot be part of an
// id; util_errc::not_found when no session matches ("names no session";
// "no sessions yet" for `last`) or several do ("… is ambiguous: it starts
// A, B"); or the lister's.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/client.h"
#include "util/result.h"

namespace tether::cli {

// The ids of at most `limit` sessions whose id starts with `prefix` ("":
// any), the most recently active first.
using session_lister = std::function<result<std::vector<std::string>>(const std::string& prefix, std::size_t limit)>;

result<std::string> resolve_session_with(std::string_view arg, const session_lister& list);

// resolve_session_with over GET /v1/sessions?prefix=P&limit=N.
result<std::string> resolve_session(client& c, std::string_view arg);

}  // namespace tether::cli
