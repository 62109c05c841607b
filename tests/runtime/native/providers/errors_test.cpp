#include "runtime/native/providers/errors.h"

#include <gtest/gtest.h>

#include "runtime/native/providers/cassette.h"
#include "runtime/native/providers/classify.h"
#include "runtime/native/providers/provider.h"
#include "util/result.h"

namespace tether::runtime::native {
namespace {

using namespace std::chrono_literals;
using testing::play;
using testing::play_options;

TEST(provider_errors, codes_belong_to_the_provider_category_and_have_messages) {
  const std::error_code c = provider_errc::rate_limited;
  EXPECT_STREQ(c.category().name(), "provider");
  for (int i = static_cast<int>(provider_errc::rate_limited); i <= static_cast<int>(provider_errc::cancelled); ++i)
    EXPECT_NE(std::error_code(i, provider_category()).message(), "unknown provider error") << i;
  const tether::error e(provider_errc::quota, "no credit");
  EXPECT_EQ(e.describe(), "provider: no credit");
}

TEST(provider_errors, names_are_stable) {
  EXPECT_EQ(to_string(wire_api::openai_chat), "openai-chat");
  EXPECT_EQ(to_string(wire_api::openai_responses), "openai-responses");
  EXPECT_EQ(to_string(wire_api::anthropic), "anthropic");
  for (auto w : {wire_api::openai_chat, wire_api::openai_responses, wire_api::anthropic})
    EXPECT_EQ(parse_wire_api(to_string(w)), w);
  EXPECT_FALSE(parse_wire_api("openai"));
  EXPECT_EQ(to_string(finish_reason::tool_calls), "tool_calls");
  EXPECT_EQ(to_string(finish_reason::content_filter), "content_filter");
}

// The HTTP client's failures keep their meaning as provider failures: the
// retry policy tells a timeout from a transport failure from a cancel.
TEST(provider_errors, each_http_client_failure_is_the_provider_failure_of_its_name) {
  EXPECT_EQ(provider_errc_of(http::client_errc::invalid_request), provider_errc::invalid_request);
  EXPECT_EQ(provider_errc_of(http::client_errc::transport), provider_errc::transport);
  EXPECT_EQ(provider_errc_of(http::client_errc::incomplete_stream), provider_errc::incomplete_stream);
  EXPECT_EQ(provider_errc_of(http::client_errc::timeout), provider_errc::timeout);
  EXPECT_EQ(provider_errc_of(http::client_errc::bad_response), provider_errc::bad_response);
  EXPECT_EQ(provider_errc_of(http::client_errc::cancelled), provider_errc::cancelled);
  // Another category's error with the same number is not taken for one.
  EXPECT_EQ(provider_errc_of(std::make_error_code(std::errc::timed_out)), provider_errc::transport);
  EXPECT_EQ(provider_errc_of(provider_errc::timeout), provider_errc::transport);
}

http::http_response_head head(int status, std::vector<http::http_header> headers = {}) {
  http::http_response_head h;
  h.status = status;
  h.headers = std::move(headers);
  return h;
}

TEST(classify, statuses_and_words_pick_the_kind) {
  EXPECT_EQ(
      classify_http_error(head(429), R"({"error":{"type":"tokens","code":"rate_limit_exceeded","message":"slow"}})")
          .kind,
      provider_errc::rate_limited);
  EXPECT_EQ(classify_http_error(
                head(429), R"({"error":{"code":"insufficient_quota","message":"You exceeded your current quota"}})")
                .kind,
            provider_errc::quota);
  EXPECT_EQ(classify_http_error(head(402), R"({"error":{"message":"Insufficient credits","code":402}})").kind,
            provider_errc::quota);
  EXPECT_EQ(
      classify_http_error(
          head(400),
          R"({"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API."}})")
          .kind,
      provider_errc::quota);
  EXPECT_EQ(classify_http_error(head(503), "Service Unavailable").kind, provider_errc::overloaded);
  EXPECT_EQ(classify_http_error(head(529), "").kind, provider_errc::overloaded);
  EXPECT_EQ(classify_http_error(head(502), "").kind, provider_errc::server_error);
  EXPECT_EQ(classify_http_error(head(403), R"({"error":{"message":"forbidden"}})").kind, provider_errc::auth);
  EXPECT_EQ(classify_http_error(head(404), R"({"error":{"message":"The model `gpt-9` does not exist"}})").kind,
            provider_errc::invalid_request);
  EXPECT_EQ(classify_http_error(head(400),
                                R"({"error":{"message":"Requested 300000 tokens, which exceeds the context window"}})")
                .kind,
            provider_errc::context_overflow);
  EXPECT_EQ(classify_http_error(head(408), "").kind, provider_errc::timeout);
}

TEST(classify, retry_after_in_milliseconds_seconds_or_an_http_date) {
  const auto now = std::chrono::system_clock::from_time_t(784111777);  // Sun, 06 Nov 1994 08:49:37 GMT
  EXPECT_EQ(parse_retry_after(head(429, {{"retry-after-ms", "1750"}, {"retry-after", "2"}}), now), 1750ms);
  EXPECT_EQ(parse_retry_after(head(429, {{"Retry-After", "17"}}), now), 17000ms);
  EXPECT_EQ(parse_retry_after(head(429, {{"retry-after", "0.5"}}), now), 500ms);
  EXPECT_EQ(parse_retry_after(head(429, {{"retry-after", "Sun, 06 Nov 1994 08:50:07 GMT"}}), now), 30000ms);
  EXPECT_EQ(parse_retry_after(head(429, {{"retry-after", "Sun, 06 Nov 1994 08:00:00 GMT"}}), now), 0ms);
  EXPECT_FALSE(parse_retry_after(head(429, {{"retry-after", "soon"}}), now));
  EXPECT_FALSE(parse_retry_after(head(429), now));
}

struct error_case {
  const char* cassette;
  wire_api api;
  provider_errc kind;
  int status;
  std::optional<std::chrono::milliseconds> retry_after;
  const char* provider_message_start;
};

class error_cassettes : public ::testing::TestWithParam<error_case> {};

TEST_P(error_cassettes, error_answers_are_classified_with_the_providers_message) {
  const auto& c = GetParam();
  model_request r;
  r.model = c.api == wire_api::anthropic ? "claude-sonnet-4-20250514" : "gpt-4o";
  r.messages.push_back(chat_message{.role = chat_role::user, .text = "hi"});
  play_options opts;
  opts.record = testing::recordable::no;
  const auto run = play(c.cassette, c.api, r, opts);
  ASSERT_FALSE(run.outcome);
  const auto& f = run.outcome.failure;
  EXPECT_EQ(f.kind, c.kind) << f.message;
  EXPECT_EQ(f.http_status, c.status);
  EXPECT_EQ(f.retry_after, c.retry_after);
  EXPECT_TRUE(f.request_sent);
  EXPECT_FALSE(f.output_seen);
  EXPECT_TRUE(f.provider_message.starts_with(c.provider_message_start)) << f.provider_message;
  EXPECT_NE(f.message.find(std::to_string(c.status)), std::string::npos) << f.message;
  EXPECT_EQ(f.message.find("sk-test-0123456789"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    recorded, error_cassettes,
    ::testing::Values(
        error_case{"openai_chat_429_rate_limit", wire_api::openai_chat, provider_errc::rate_limited, 429, 1750ms,
                   "Rate limit reached for gpt-4o"},
        error_case{"openai_chat_429_insufficient_quota", wire_api::openai_chat, provider_errc::quota, 429, std::nullopt,
                   "You exceeded your current quota"},
        error_case{"openai_chat_500", wire_api::openai_chat, provider_errc::server_error, 500, std::nullopt,
                   "The server had an error"},
        error_case{"openai_chat_401", wire_api::openai_chat, provider_errc::auth, 401, std::nullopt,
                   "Incorrect API key provided"},
        error_case{"openai_chat_400_context_length", wire_api::openai_chat, provider_errc::context_overflow, 400,
                   std::nullopt, "This model's maximum context length is 128000 tokens."},
        error_case{"openai_responses_400_context_length", wire_api::openai_responses, provider_errc::context_overflow,
                   400, std::nullopt, "Your input exceeds the context window"},
        error_case{"anthropic_529_overloaded", wire_api::anthropic, provider_errc::overloaded, 529, std::nullopt,
                   "Overloaded"},
        error_case{"anthropic_429_rate_limit", wire_api::anthropic, provider_errc::rate_limited, 429, 17000ms,
                   "This request would exceed the rate limit"},
        error_case{"anthropic_400_prompt_too_long", wire_api::anthropic, provider_errc::context_overflow, 400,
                   std::nullopt, "prompt is too long: 208310 tokens > 200000 maximum"},
        error_case{"anthropic_401", wire_api::anthropic, provider_errc::auth, 401, std::nullopt, "invalid x-api-key"},
        error_case{"html_502_bad_gateway", wire_api::openai_chat, provider_errc::server_error, 502, std::nullopt,
                   "502 Bad Gateway"}),
    [](const auto& info) { return std::string(info.param.cassette); });

}  // namespace
}  // namespace tether::runtime::native
