// Error kinds of the model providers, as the retry policy sees them
// (docs/architecture.md §5): which failures are retried, which end the step, which ask for
// a compaction.
#pragma once

#include <system_error>

namespace tether::runtime::native {

enum class provider_errc {
  rate_limited = 1,   // 429: retried, honouring retry-after
  overloaded,         // 529 / 503: retried
  server_error,       // other 5xx: retried
  transport,          // connect/TLS/proxy failure before the request was sent: retried
  incomplete_stream,  // the stream ended or broke before its end marker: retried if no output was seen
  timeout,            // a deadline passed (connect, first byte, idle): as transport/incomplete_stream
  auth,               // 401 / 403: not retried
  quota,              // insufficient quota / billing: not retried
  invalid_request,    // other 4xx: not retried
  context_overflow,   // the request is longer than the model's context: compact once, then rebuild
  bad_response,       // the response could not be parsed: not retried
  cancelled,          // stop was requested
};

const std::error_category& provider_category();

// The provider's kind of an HTTP client failure (http::client_errc, whose
// kinds keep the same names); transport for any other error.
provider_errc provider_errc_of(std::error_code client_error);
inline std::error_code make_error_code(provider_errc e) { return {static_cast<int>(e), provider_category()}; }

}  // namespace tether::runtime::native

template <>
struct std::is_error_code_enum<tether::runtime::native::provider_errc> : std::true_type {};
