// Error codes of the API layer, and the one place where every layer's error
// code becomes an HTTP status.
#pragma once

#include <string_view>
#include <system_error>

#include "util/result.h"

namespace tether::api {

enum class api_errc {
  unauthorized = 1,        // 401: missing or wrong bearer token
  not_found,               // 404: no such route
  method_not_allowed,      // 405: the route exists, not with this method
  conflict,                // 409
  too_large,               // 413: the body exceeds max_body_bytes
  bad_request,             // 400: the body is not the JSON the route expects
  listen_failed,           // start(): bind or listen failed
  unsupported_media_type,  // 415: a body that is not application/json
  unavailable,             // 503: over the connection limit
  headers_too_large,       // 431: the request's head exceeds the header limit
  forbidden,               // 403: signed in by cookie, without the CSRF header
  too_many_requests,       // 429: too many failed credentials from one address (guard.h)
  misdirected,             // 421: a Host this server does not answer to (guard.h)
};

const std::error_category& api_category();
inline std::error_code make_error_code(api_errc e) { return {static_cast<int>(e), api_category()}; }

// How an error is shown to a client.
struct http_error {
  unsigned status = 500;
  std::string_view code;  // stable, machine-readable ("not_found", "conflict", …)
};

// The mapping for session_errc, store_errc, util_errc, model_errc and api_errc.
// Anything unknown is 500 "internal".
http_error to_http(const error& e);

}  // namespace tether::api

template <>
struct std::is_error_code_enum<tether::api::api_errc> : std::true_type {};
