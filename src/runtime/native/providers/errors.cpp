#include "runtime/native/providers/errors.h"

#include <string>

#include "http/client.h"
#include "runtime/native/providers/provider.h"
#include "runtime/native/providers/types.h"

namespace tether::runtime::native {

namespace {

class provider_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "provider"; }
  std::string message(int c) const override {
    switch (static_cast<provider_errc>(c)) {
      case provider_errc::rate_limited:
        return "the provider is rate limiting requests";
      case provider_errc::overloaded:
        return "the provider is overloaded";
      case provider_errc::server_error:
        return "the provider had a server error";
      case provider_errc::transport:
        return "the provider could not be reached";
      case provider_errc::incomplete_stream:
        return "the response stream ended before it was complete";
      case provider_errc::timeout:
        return "the provider did not answer in time";
      case provider_errc::auth:
        return "the provider refused the credentials";
      case provider_errc::quota:
        return "the provider account has no quota left";
      case provider_errc::invalid_request:
        return "the provider rejected the request";
      case provider_errc::context_overflow:
        return "the request is longer than the model's context window";
      case provider_errc::bad_response:
        return "the provider's response could not be understood";
      case provider_errc::cancelled:
        return "the request was cancelled";
    }
    return "unknown provider error";
  }
};

}  // namespace

const std::error_category& provider_category() {
  static const provider_category_impl c;
  return c;
}

provider_errc provider_errc_of(std::error_code client_error) {
  if (client_error.category() != http::client_category()) return provider_errc::transport;
  switch (static_cast<http::client_errc>(client_error.value())) {
    case http::client_errc::invalid_request:
      return provider_errc::invalid_request;
    case http::client_errc::transport:
      return provider_errc::transport;
    case http::client_errc::incomplete_stream:
      return provider_errc::incomplete_stream;
    case http::client_errc::timeout:
      return provider_errc::timeout;
    case http::client_errc::bad_response:
      return provider_errc::bad_response;
    case http::client_errc::cancelled:
      return provider_errc::cancelled;
  }
  return provider_errc::transport;
}

std::string_view to_string(wire_api w) {
  switch (w) {
    case wire_api::openai_chat:
      return "openai-chat";
    case wire_api::openai_responses:
      return "openai-responses";
    case wire_api::anthropic:
      return "anthropic";
  }
  return "openai-chat";
}

std::optional<wire_api> parse_wire_api(std::string_view s) {
  if (s == "openai-chat") return wire_api::openai_chat;
  if (s == "openai-responses") return wire_api::openai_responses;
  if (s == "anthropic") return wire_api::anthropic;
  return std::nullopt;
}

std::string_view to_string(finish_reason f) {
  switch (f) {
    case finish_reason::stop:
      return "stop";
    case finish_reason::tool_calls:
      return "tool_calls";
    case finish_reason::length:
      return "length";
    case finish_reason::content_filter:
      return "content_filter";
    case finish_reason::other:
      return "other";
  }
  return "other";
}

}  // namespace tether::runtime::native
