// Every wire mapper, fed a recorded stream cut at every byte offset, reports
// the same events, the same end and the same completion as when fed at once.
#include <gtest/gtest.h>

#include <boost/json/serialize.hpp>

#include "runtime/native/providers/provider.h"
#include "runtime/native/providers/cassette.h"

namespace tether::runtime::native {
namespace {

struct split_case {
  const char* cassette;
  wire_api api;
};

std::string summary(const testing::fed_stream& f) {
  std::string s = f.ended ? "ended" : "open";
  s += f.failure ? " failed:" + f.failure->message : "";
  s += " text=" + f.done.text + " reasoning=" + f.done.reasoning + " calls=" + std::to_string(f.done.calls.size());
  s += " usage=" + std::to_string(f.done.usage.input_tokens) + "/" + std::to_string(f.done.usage.cached_input_tokens) +
       "/" + std::to_string(f.done.usage.output_tokens);
  s += " finish=" + std::string(to_string(f.done.finish)) + "(" + f.done.raw_finish + ") id=" + f.done.response_id;
  if (f.done.reasoning_meta) s += " meta=" + boost::json::serialize(f.done.reasoning_meta->data);
  return s;
}

class split_every_byte : public ::testing::TestWithParam<split_case> {};

TEST_P(split_every_byte, the_same_events_at_every_cut) {
  const auto body = testing::load_cassette(GetParam().cassette).body;
  const auto whole = testing::feed_mapper(GetParam().api, body);
  ASSERT_TRUE(!whole.events.empty() || whole.failure);
  const auto expected = summary(whole);
  for (std::size_t cut = 1; cut < body.size(); ++cut) {
    const auto split = testing::feed_mapper(GetParam().api, body, {cut});
    ASSERT_EQ(split.events, whole.events) << "cut at " << cut;
    ASSERT_EQ(summary(split), expected) << "cut at " << cut;
  }
  std::vector<std::size_t> every;
  for (std::size_t i = 1; i < body.size(); ++i) every.push_back(i);
  const auto bytewise = testing::feed_mapper(GetParam().api, body, every);
  EXPECT_EQ(bytewise.events, whole.events);
  EXPECT_EQ(summary(bytewise), expected);
}

INSTANTIATE_TEST_SUITE_P(recorded, split_every_byte,
                         ::testing::Values(split_case{"openai_chat_text", wire_api::openai_chat},
                                           split_case{"openai_chat_tool_call", wire_api::openai_chat},
                                           split_case{"openai_chat_reasoning", wire_api::openai_chat},
                                           split_case{"openai_responses_text", wire_api::openai_responses},
                                           split_case{"openai_responses_tool_call", wire_api::openai_responses},
                                           split_case{"openai_responses_reasoning", wire_api::openai_responses},
                                           split_case{"openai_responses_web_search", wire_api::openai_responses},
                                           split_case{"openai_responses_failed", wire_api::openai_responses},
                                           split_case{"anthropic_text", wire_api::anthropic},
                                           split_case{"anthropic_tool_call", wire_api::anthropic},
                                           split_case{"anthropic_thinking", wire_api::anthropic},
                                           split_case{"anthropic_web_search", wire_api::anthropic},
                                           split_case{"anthropic_stream_overloaded", wire_api::anthropic}),
                         [](const auto& info) { return std::string(info.param.cassette); });

}  // namespace
}  // namespace tether::runtime::native
