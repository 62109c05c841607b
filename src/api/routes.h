// Every route the server answers, in one table (routes.cpp): its method, its
// path pattern as docs/openapi.json spells it, who may call it, and its
// handler. handle() (handler.h) finds a request's route here and checks the
// caller before the handler runs; tests/api/openapi_test checks the table
// against docs/openapi.json both ways.
//
// A pattern is the path's segments: a literal, "{name}" (any one segment),
// "prefix{name}suffix" (a segment with that prefix and suffix around at
// least one byte) or, last, "{name*}" (one or more segments). "/ui/" and
// "/ui" are the same pattern (segments, not bytes). A HEAD request is
// answered as its GET, without the body.
//
// The handlers live beside their kind: session_routes.h, work_routes.h,
// web_routes.h.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "api/handler.h"

namespace tether::api {

// Who may call a route.
enum class access {
  open,     // anyone, no credential asked or counted: /v1/health, the interface's files
  sign_in,  // anyone; a wrong credential counts against the address (api/guard.h)
  token,    // the bearer token, or the sign-in cookie (with X-Tether-CSRF unless GET/HEAD)
};

// One call of a route: the request, and what the pattern's {…} matched, in
// order ({name*}: each segment), owned by the call.
struct route_call {
  const handler_context* ctx = nullptr;
  http_request req;
  std::vector<std::string> params;
};

using route_handler = boost::asio::awaitable<http_reply> (*)(route_call);

struct route {
  std::string_view method;   // "GET", "POST", "PATCH", "DELETE"
  std::string_view pattern;  // "/v1/sessions/{id}/inputs"
  access who = access::token;
  route_handler handle = nullptr;
  // Why the route is not in docs/openapi.json (the interface's files, an
  // alias); empty: it is, with exactly this method.
  std::string_view unlisted = {};
};

// The table, in the order a 405's "use GET or POST" names the methods.
std::span<const route> route_table();

// What the table says of a request's method and path.
struct route_match {
  const route* found = nullptr;     // the route of this method and path
  std::optional<access> path_who;   // set when some route has this path (in any method)
  std::string allowed;              // that path's methods, "GET or POST"
  std::vector<std::string> params;  // what found's pattern matched
};
route_match match_route(std::string_view method, std::string_view target);

}  // namespace tether::api
