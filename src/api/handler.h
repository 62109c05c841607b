// The API's routes, independent of the socket: a parsed request in, a reply
// out. server.cpp owns the connections and calls handle() once per request.
#pragma once

#include <array>
#include <memory>
#include <utility>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>

#include "api/server.h"

namespace tether::api {

class web_auth;
class credential_throttle;

struct http_request {
  std::string method;         // "GET", "POST", …
  std::string target;         // path and optional query
  std::string authorization;  // the Authorization header, empty when absent
  std::string accept;         // the Accept header
  std::string last_event_id;  // the Last-Event-ID header (SSE resume)
  std::string content_type;   // the Content-Type header, empty when absent
  std::string cookie;         // the Cookie header (the web interface's sign-in)
  std::string csrf;           // the X-Tether-CSRF header
  std::string if_none_match;  // the If-None-Match header (the interface's files)
  std::string host;           // the Host header (guard.h)
  std::string peer;           // the client's address, for the credential throttle
  std::string body;
};

// An SSE stream the server should run instead of a one-shot reply: one
// session's events after `after`, or (no session) every session's, live.
struct event_stream {
  std::optional<session_id> session;
  event_seq after;
};

struct http_reply {
  unsigned status = 200;
  std::string body;  // JSON, or the text of content_type
  std::string content_type = "application/json";
  std::optional<event_stream> stream;  // set: body is unused, the server streams
  // More header fields (Set-Cookie, ETag, Location, a Content-Security-Policy
  // replacing the default one, …).
  std::vector<std::pair<std::string, std::string>> headers;
};

// The fields each request body may have (anything else is 400); the
// schemas of docs/openapi.json name exactly these (tests/api/openapi_test).
inline constexpr std::array<std::string_view, 5> create_session_fields{"id", "title", "profile", "workspace",
                                                                       "metadata"};
inline constexpr std::array<std::string_view, 4> create_input_fields{"id", "text", "delivery", "resume"};
inline constexpr std::array<std::string_view, 1> answer_fields{"answers"};
inline constexpr std::array<std::string_view, 3> fork_session_fields{"at", "id", "title"};

// What the routes act on; owned by the server, outlives every handle().
struct handler_context {
  session::session_service* service = nullptr;
  store::event_store* store = nullptr;
  work::work_service* work = nullptr;  // options.work
  server_options options;
  std::shared_ptr<web_auth> auth;  // the web interface's sign-in (api/web_auth.h); null: bearer only
  std::shared_ptr<credential_throttle> throttle;  // failed credentials per address (api/guard.h); null: none
};

// Never fails: errors become JSON error replies (errors.h maps the codes).
boost::asio::awaitable<http_reply> handle(const handler_context* ctx, http_request req);

// The path's segments (the query dropped, empty segments skipped): views into `target`.
std::vector<std::string_view> split_path(std::string_view target);
// A JSON reply with this status.
http_reply json_reply(unsigned status, const boost::json::value& v);
// The raw value of query parameter `name` (nullopt when absent), and that
// value as a whole number (api_errc::bad_request when it is not one).
std::optional<std::string_view> query_value(std::string_view target, std::string_view name);
result<std::optional<std::int64_t>> query_number(std::string_view target, std::string_view name);
std::optional<std::int64_t> whole_number(std::string_view text);

// The reply for an error, {"error":{"code","message"}}.
http_reply error_reply(const error& e);

// Constant-time comparison of an Authorization header with "Bearer <token>"
// (the scheme in any case, RFC 7235).
bool bearer_matches(std::string_view header, std::string_view token);

}  // namespace tether::api
