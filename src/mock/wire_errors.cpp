// `Fail with:` error answers, in each wire format's own words.
#include "mock/wire.h"

#include <fmt/format.h>

namespace tether::mock::detail {

namespace json = boost::json;

namespace {

constexpr std::uint64_t openai_context = 128'000;
constexpr std::uint64_t anthropic_context = 200'000;

http_error openai(unsigned status, const std::string& message, std::string_view type, json::value code,
                  json::value param = nullptr) {
  http_error e;
  e.status = status;
  json::object inner;
  inner["message"] = message;
  inner["type"] = type;
  inner["param"] = std::move(param);
  inner["code"] = std::move(code);
  e.body["error"] = std::move(inner);
  return e;
}

http_error anthropic(unsigned status, std::string_view type, const std::string& message) {
  http_error e;
  e.status = status;
  json::object inner;
  inner["type"] = type;
  inner["message"] = message;
  e.body["type"] = "error";
  e.body["error"] = std::move(inner);
  return e;
}

void retry_now(http_error& e) { e.headers.emplace_back("retry-after", "0"); }

}  // namespace

http_error openai_failure(wire_format w, fail_kind k, std::uint64_t input_tokens) {
  switch (k) {
    case fail_kind::rate_limit: {
      auto e =
          openai(429, "Rate limit reached for requests. Please try again in 0s.", "requests", "rate_limit_exceeded");
      retry_now(e);
      return e;
    }
    case fail_kind::overloaded:
      return openai(503, "The server is overloaded or not ready yet.", "server_error", "overloaded");
    case fail_kind::auth:
      return openai(401, "Incorrect API key provided", "invalid_request_error", "invalid_api_key");
    case fail_kind::overflow:
      if (w == wire_format::responses)
        return openai(400,
                      "Your input exceeds the context window of this model. Please adjust your input and try again.",
                      "invalid_request_error", "context_length_exceeded", "input");
      return openai(400,
                    fmt::format("This model's maximum context length is {} tokens. However, your messages resulted in "
                                "{} tokens. Please reduce the length of the messages.",
                                openai_context, std::max(input_tokens, openai_context + 1)),
                    "invalid_request_error", "context_length_exceeded", "messages");
    case fail_kind::server_error:
    case fail_kind::disconnect:
      break;
  }
  return openai(500, "The server had an error while processing your request. Sorry about that!", "server_error",
                nullptr);
}

http_error anthropic_failure(fail_kind k, std::uint64_t input_tokens) {
  switch (k) {
    case fail_kind::rate_limit: {
      auto e = anthropic(429, "rate_limit_error", "Number of requests has exceeded your rate limit.");
      retry_now(e);
      return e;
    }
    case fail_kind::overloaded:
      return anthropic(529, "overloaded_error", "Overloaded");
    case fail_kind::auth:
      return anthropic(401, "authentication_error", "invalid x-api-key");
    case fail_kind::overflow:
      return anthropic(400, "invalid_request_error",
                       fmt::format("prompt is too long: {} tokens > {} maximum",
                                   std::max(input_tokens, anthropic_context + 1), anthropic_context));
    case fail_kind::server_error:
    case fail_kind::disconnect:
      break;
  }
  return anthropic(500, "api_error", "Internal server error");
}

}  // namespace tether::mock::detail
