// Request bodies: what the API accepts before a route looks at a field.
//
//   if (auto r = check_media_type(content_type, body); !r) → 415
//   auto o = parse_body(body);                       // result<json::object>
//   if (auto r = only_fields(*o, {"id", "text"}); !r) → 400
//
// The rules (docs/openapi.json, "additionalProperties": false):
//   - a non-empty body must be sent as `application/json` (parameters such as
//     `; charset=utf-8` allowed, the media type compared case-insensitively);
//     an empty body may come without a Content-Type (the bodiless POSTs:
//     interrupt, reset, resume) — api_errc::unsupported_media_type otherwise;
//   - the body is valid UTF-8 (util_errc::invalid_utf8), one JSON object
//     (util_errc::malformed_json), nested at most 32 deep;
//   - no number in it is out of the range of a double (1e400 would read as
//     infinity and be stored as `Infinity`, which is not JSON), and no
//     object in it, at any depth, has the same key twice, and no string
//     or key contains U+0000 (api_errc::bad_request, naming the field: a
//     duplicate key is ambiguous and the last-one-wins rule of one parser is
//     the first-one-wins of another; NUL ends strings in C APIs, file names
//     and terminals downstream);
//   - a route names the fields it knows; any other top-level field is
//     api_errc::bad_request naming it (a typo such as "delivry" would
//     otherwise be silently ignored).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "session/types.h"
#include "util/result.h"

namespace tether::api {

result<void> check_media_type(std::string_view content_type, std::string_view body);
result<boost::json::object> parse_body(std::string_view body);
result<void> only_fields(const boost::json::object& o, std::span<const std::string_view> known);

// A field of a parsed body: absent or null is nullopt; another type is
// api_errc::bad_request naming the field.
result<std::optional<std::string>> string_field(const boost::json::object& o, std::string_view name);
result<std::optional<bool>> bool_field(const boost::json::object& o, std::string_view name);

// The body of POST …/inputs (and of a task's messages): {id?, text,
// delivery?, resume?}.
result<session::input_request> parse_input(const std::string& body);

}  // namespace tether::api
