// Turning provider error answers into failure_info (docs/architecture.md §5): the HTTP
// status, the error object's type/code and the words of its message decide
// the provider_errc.
//
//   402, insufficient_quota, "exceeded your current quota",
//     "credit balance is too low"                          → quota
//   400/413 or an in-stream error that says context_length_exceeded,
//     "prompt is too long", "maximum context length",
//     "exceeds the context window", "context window"      → context_overflow
//   429, rate_limit_error, rate_limit_exceeded            → rate_limited
//   529, 503, overloaded_error                            → overloaded
//   other 5xx, api_error, server_error                    → server_error
//   408                                                   → timeout (the server gave up waiting)
//   401, 403, authentication_error, permission_error      → auth
//   other 4xx, invalid_request_error                      → invalid_request
//   an in-stream error of unknown type                    → server_error
//
// The provider's own message is kept in provider_message; `message` is one
// line ("HTTP 429 rate_limited: <provider message>") for logs.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/value.hpp>

#include "http/client.h"
#include "runtime/native/providers/provider.h"

namespace tether::runtime::native {

// A non-2xx answer. `body` may be cut (it is read up to a cap) or not JSON
// (an HTML error page from a proxy): its text then becomes the message.
failure_info classify_http_error(const http::http_response_head& head, std::string_view body,
                                 std::chrono::system_clock::time_point now = std::chrono::system_clock::now());

// An error object carried inside a 2xx stream ({"type": "...", "message": ...}
// or {"code": ..., "message": ...}); `status` when the object names one
// (OpenRouter puts the HTTP status in `code`).
failure_info classify_error_object(const boost::json::value& error);

// retry-after-ms (milliseconds), else retry-after (seconds or an HTTP date,
// relative to `now`). Never negative.
std::optional<std::chrono::milliseconds> parse_retry_after(const http::http_response_head& head,
                                                           std::chrono::system_clock::time_point now);

// Replaces every occurrence of `secret` in `text` (no-op for an empty secret).
void redact(std::string& text, std::string_view secret);

}  // namespace tether::runtime::native
