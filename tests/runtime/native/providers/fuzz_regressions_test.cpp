// Inputs the fuzz targets (fuzz/) found crashing, kept as tests of the g++
// build; the crashing inputs themselves are in fuzz/regressions/.
#include <cstdint>
#include <limits>

#include <gtest/gtest.h>

#include "model/reported.h"
#include "runtime/native/providers/provider.h"
#include "runtime/native/providers/cassette.h"
#include "util/text.h"

namespace tether::runtime::native {
namespace {

// fuzz/regressions/provider_streams/event-name-not-utf8: the failure message
// named the `event:` field's raw bytes, and step.failed stored them.
TEST(provider_stream_failures, name_an_event_only_when_its_name_is_utf8) {
  for (const auto api : {wire_api::openai_chat, wire_api::openai_responses, wire_api::anthropic}) {
    const auto bad = testing::feed_mapper(api, "event: caf\xC3\n\xFF\ndata: not json\n\n");
    ASSERT_TRUE(bad.failure.has_value()) << to_string(api);
    EXPECT_EQ(bad.failure->kind, provider_errc::bad_response);
    EXPECT_TRUE(is_valid_utf8(bad.failure->message)) << bad.failure->message;
    EXPECT_EQ(bad.failure->message, "a stream event is not a JSON object");

    const auto huge = testing::feed_mapper(api, "event: " + std::string(100'000, 'x') + "\ndata: [\n\n");
    ASSERT_TRUE(huge.failure.has_value());
    EXPECT_LT(huge.failure->message.size(), 200U);

    const auto named = testing::feed_mapper(api, "event: content_block_delta\ndata: {\n\n");
    ASSERT_TRUE(named.failure.has_value());
    EXPECT_EQ(named.failure->message, "a stream event content_block_delta is not a JSON object");
  }
}

// fuzz/regressions/provider_streams/usage-count-double-out-of-range: a token
// count sent as a huge double was converted to int64 out of range
// (undefined behaviour). Counts are clamped to [0, max_reported_tokens].
TEST(provider_stream_usage, a_token_count_out_of_the_int64_range_is_clamped) {
  const auto fed = testing::feed_mapper(
      wire_api::openai_chat,
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}],"
      "\"usage\":{\"prompt_tokens\":2.2e95,\"completion_tokens\":18446744073709551615,"
      "\"prompt_tokens_details\":{\"cached_tokens\":-7}}}\n\ndata: [DONE]\n\n");
  EXPECT_EQ(fed.done.usage.input_tokens, model::max_reported_tokens);
  EXPECT_EQ(fed.done.usage.output_tokens, model::max_reported_tokens);
  EXPECT_EQ(fed.done.usage.cached_input_tokens, 0);  // negative: none
}

// fuzz/regressions/provider_streams/anthropic-usage-overflow: Anthropic's
// input side is the sum of three counts, and 12 + INT64_MAX overflowed
// (undefined behaviour, UBSan's report in the fuzzer).
TEST(provider_stream_usage, anthropic_input_counts_add_up_without_overflow) {
  const auto fed = testing::feed_mapper(
      wire_api::anthropic,
      "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"model\":\"x\","
      "\"usage\":{\"input_tokens\":12,\"cache_read_input_tokens\":9223372036854775807,"
      "\"cache_creation_input_tokens\":-3}}}\n\n"
      "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},"
      "\"usage\":{\"output_tokens\":5}}\n\n"
      "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
  ASSERT_FALSE(fed.failure.has_value()) << fed.failure->message;
  EXPECT_EQ(fed.done.usage.input_tokens, 12 + model::max_reported_tokens);
  EXPECT_EQ(fed.done.usage.cached_input_tokens, model::max_reported_tokens);
  EXPECT_EQ(fed.done.usage.output_tokens, 5);
}

// JSON's 1e400 reads as infinity, which Boost.JSON writes back as
// `Infinity` (not JSON): a stream event or tool arguments holding one are a
// bad response, and a reported cost is used only when finite and not negative.
TEST(provider_stream_numbers, a_number_out_of_range_is_a_bad_response_and_a_cost_must_be_sane) {
  const auto event = testing::feed_mapper(
      wire_api::openai_chat,
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}],\"x\":1e400}\n\ndata: [DONE]\n\n");
  ASSERT_TRUE(event.failure.has_value());
  EXPECT_EQ(event.failure->kind, provider_errc::bad_response);
  EXPECT_EQ(event.failure->message, "a stream event holds a number out of range");

  const auto args = testing::feed_mapper(
      wire_api::openai_chat,
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"type\":\"function\","
      "\"function\":{\"name\":\"shell\",\"arguments\":\"{\\\"n\\\":-1e999}\"}}]},\"finish_reason\":\"tool_calls\"}]}"
      "\n\ndata: [DONE]\n\n");
  ASSERT_TRUE(args.failure.has_value());
  EXPECT_EQ(args.failure->message, "the arguments of the tool call shell hold a number out of range");

  const auto cost = [](std::string_view value) {
    return testing::feed_mapper(wire_api::openai_chat,
                                "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":"
                                "\"stop\"}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1,\"cost\":" +
                                    std::string(value) + "}}\n\ndata: [DONE]\n\n")
        .done.reported_cost_usd;
  };
  EXPECT_EQ(cost("0.25"), 0.25);
  EXPECT_EQ(cost("-3"), std::nullopt);
  EXPECT_EQ(cost("5e300"), model::max_reported_cost_usd);
}

}  // namespace
}  // namespace tether::runtime::native
