#include "mock/types.h"

namespace tether::mock {

std::string_view to_string(wire_format w) {
  switch (w) {
    case wire_format::chat:
      return "chat";
    case wire_format::responses:
      return "responses";
    case wire_format::anthropic:
      return "anthropic";
  }
  return "chat";
}

std::string_view to_string(role r) {
  switch (r) {
    case role::system:
      return "system";
    case role::user:
      return "user";
    case role::assistant:
      return "assistant";
    case role::tool_result:
      return "tool_result";
  }
  return "user";
}

std::string_view to_string(fail_kind k) {
  switch (k) {
    case fail_kind::rate_limit:
      return "rate_limit";
    case fail_kind::server_error:
      return "server_error";
    case fail_kind::overloaded:
      return "overloaded";
    case fail_kind::auth:
      return "auth";
    case fail_kind::overflow:
      return "overflow";
    case fail_kind::disconnect:
      return "disconnect";
  }
  return "server_error";
}

std::optional<fail_kind> parse_fail_kind(std::string_view s) {
  for (const auto k : {fail_kind::rate_limit, fail_kind::server_error, fail_kind::overloaded, fail_kind::auth,
                       fail_kind::overflow, fail_kind::disconnect})
    if (to_string(k) == s) return k;
  return std::nullopt;
}

}  // namespace tether::mock
