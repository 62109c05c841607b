#include "mock/usage.h"

#include <gtest/gtest.h>

namespace tether::mock {
namespace {

conversation with_messages(std::vector<std::string> texts) {
  conversation c;
  for (auto& t : texts) {
    message m;
    m.role = role::user;
    m.text = std::move(t);
    c.messages.push_back(std::move(m));
  }
  return c;
}

TEST(usage, tokens_are_code_points_divided_by_four_rounded_up) {
  EXPECT_EQ(count_tokens(""), 0U);
  EXPECT_EQ(count_tokens("abcd"), 1U);
  EXPECT_EQ(count_tokens("abcde"), 2U);
  EXPECT_EQ(count_tokens("\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9"), 1U);  // four é
}

TEST(usage, input_counts_messages_and_tools) {
  auto c = with_messages({"hello"});
  const auto without_tools = input_tokens(c);
  tool_offer t;
  t.name = "bash";
  t.description = "run a shell command with a long description";
  c.tools.push_back(t);
  EXPECT_GT(input_tokens(c), without_tools);
}

TEST(usage, output_counts_text_or_the_call) {
  model_output o;
  o.text = "12345678";
  EXPECT_EQ(output_tokens(o), 2U);
  o.call = tool_call{"id", "bash", R"({"command":"ls"})"};
  EXPECT_EQ(output_tokens(o), 5U);  // "bash" + 16 characters
}

TEST(prompt_cache, the_first_request_has_nothing_cached) {
  prompt_cache cache;
  EXPECT_EQ(cache.lookup_and_remember(canonical_messages(with_messages({"a", "b"}))), 0U);
}

TEST(prompt_cache, a_repeated_prefix_is_cached_up_to_the_last_shared_message) {
  prompt_cache cache;
  const auto first = canonical_messages(with_messages({"system prompt that is long", "question one"}));
  cache.lookup_and_remember(first);
  const auto second = canonical_messages(with_messages({"system prompt that is long", "question one", "more"}));
  std::string prefix = first[0] + first[1];
  EXPECT_EQ(cache.lookup_and_remember(second), count_tokens(prefix));
  // The same request again is cached whole.
  EXPECT_EQ(cache.lookup_and_remember(second), count_tokens(prefix + second[2]));
  // A different first message shares nothing.
  EXPECT_EQ(cache.lookup_and_remember(canonical_messages(with_messages({"other", "question one"}))), 0U);
}

TEST(prompt_cache, tools_come_first_so_other_tools_share_nothing) {
  prompt_cache cache;
  auto c = with_messages({"a long system prompt", "hi"});
  cache.lookup_and_remember(canonical_segments(c));
  EXPECT_GT(cache.lookup_and_remember(canonical_segments(c)), 0U);
  tool_offer t;
  t.name = "bash";
  c.tools.push_back(t);
  EXPECT_EQ(cache.lookup_and_remember(canonical_segments(c)), 0U);
  EXPECT_EQ(cache.lookup_and_remember(canonical_segments(c)), input_tokens(c));
}

TEST(prompt_cache, memory_is_bounded_and_forgets_the_oldest_prefixes) {
  prompt_cache cache(2);
  const auto a = canonical_messages(with_messages({"a"}));
  cache.lookup_and_remember(a);
  cache.lookup_and_remember(canonical_messages(with_messages({"b"})));
  cache.lookup_and_remember(canonical_messages(with_messages({"c"})));
  EXPECT_EQ(cache.lookup_and_remember(a), 0U);
}

}  // namespace
}  // namespace tether::mock
