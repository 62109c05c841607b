// relay_meter: the usage a response reports, read from its bytes as the
// relay passes them on, whatever the pieces' boundaries.
#include "runtime/agent/relay/meter.h"

#include <gtest/gtest.h>

namespace tether::runtime::agent {
namespace {

// Feeds `body` one byte at a time: a meter must not depend on where the pieces end.
std::optional<model::usage> metered(std::string_view content_type, std::string_view body) {
  relay_meter m(content_type);
  for (const char c : body) m.feed(std::string_view(&c, 1));
  return m.finish();
}

TEST(RelayMeter, ReadsTheResponsesStreamsCompletedEvent) {
  const auto u = metered("text/event-stream; charset=utf-8",
                         "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{}}\n\n"
                         "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"usage\":"
                         "{\"input_tokens\":120,\"output_tokens\":9,\"input_tokens_details\":{\"cached_tokens\":64}}}}\n\n");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->input_tokens, 120);
  EXPECT_EQ(u->output_tokens, 9);
  EXPECT_EQ(u->cached_input_tokens, 64);
}

TEST(RelayMeter, ReadsAWholeResponsesBody) {
  const auto u = metered("application/json",
                         R"({"object":"response","usage":{"input_tokens":5,"output_tokens":2}})");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->input_tokens, 5);
  EXPECT_EQ(u->output_tokens, 2);
}

TEST(RelayMeter, ReadsTheChatStreamsUsageChunk) {
  const auto u = metered("text/event-stream",
                         "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n"
                         "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":40,\"completion_tokens\":3,"
                         "\"prompt_tokens_details\":{\"cached_tokens\":32}}}\n\ndata: [DONE]\n\n");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->input_tokens, 40);
  EXPECT_EQ(u->output_tokens, 3);
  EXPECT_EQ(u->cached_input_tokens, 32);
}

TEST(RelayMeter, ReadsAnthropicsInputFromMessageStartAndOutputFromMessageDelta) {
  const auto u = metered("text/event-stream",
                         "event: message_start\r\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":"
                         "{\"input_tokens\":10,\"cache_read_input_tokens\":20,\"cache_creation_input_tokens\":5,"
                         "\"output_tokens\":1}}}\r\n\r\n"
                         "event: message_delta\r\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":12}}\r\n\r\n");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->input_tokens, 35);
  EXPECT_EQ(u->cached_input_tokens, 20);
  EXPECT_EQ(u->output_tokens, 12);
}

TEST(RelayMeter, ReadsAWholeAnthropicMessage) {
  const auto u = metered("application/json",
                         R"({"type":"message","usage":{"input_tokens":7,"cache_read_input_tokens":3,"output_tokens":4}})");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->input_tokens, 10);
  EXPECT_EQ(u->cached_input_tokens, 3);
  EXPECT_EQ(u->output_tokens, 4);
}

TEST(RelayMeter, AResponseWithoutUsageReportsNone) {
  EXPECT_FALSE(metered("text/event-stream", "data: {\"choices\":[]}\n\ndata: [DONE]\n\n"));
  EXPECT_FALSE(metered("application/json", R"({"error":{"message":"no"}})"));
  EXPECT_FALSE(metered("application/json", R"({"data":[{"id":"m"}]})"));
  EXPECT_FALSE(metered("application/json", "not json at all"));
  EXPECT_FALSE(metered("text/event-stream", "data: {\"type\":\"response.completed\",\"response\":{}}\n\n"));
  // An event cut off by the end of the stream is dropped, not guessed at.
  EXPECT_FALSE(metered("text/event-stream", "data: {\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":1}}"));
}

TEST(RelayMeter, AnOverlongBodyIsNotParsed) {
  relay_meter m("application/json");
  const std::string head = R"({"usage":{"prompt_tokens":1,"completion_tokens":1},"pad":")";
  m.feed(head);
  m.feed(std::string(relay_meter::max_body_bytes, 'x'));
  m.feed("\"}");
  EXPECT_FALSE(m.finish());
}

}  // namespace
}  // namespace tether::runtime::agent
