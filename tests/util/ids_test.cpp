#include "util/ids.h"

#include <string>
#include <unordered_set>
#include <vector>

#include <gtest/gtest.h>

#include "util/errors.h"

namespace tether {
namespace {

TEST(ids, generated_ids_start_with_their_kind_prefix) {
  EXPECT_TRUE(session_id::generate().str().starts_with("ses_"));
  EXPECT_TRUE(input_id::generate().str().starts_with("msg_"));
  EXPECT_TRUE(execution_id::generate().str().starts_with("exe_"));
  EXPECT_TRUE(event_id::generate().str().starts_with("evt_"));
  EXPECT_TRUE(call_id::generate().str().starts_with("call_"));
  EXPECT_TRUE(interaction_id::generate().str().starts_with("int_"));
}

TEST(ids, generated_body_is_26_crockford_base32_characters) {
  const auto id = input_id::generate().str();
  const auto body = std::string_view(id).substr(4);
  ASSERT_EQ(body.size(), 26U);
  for (char c : body)
    EXPECT_NE(std::string_view("0123456789ABCDEFGHJKMNPQRSTVWXYZ").find(c), std::string_view::npos) << c;
}

TEST(ids, generated_ids_parse_back) {
  const auto id = session_id::generate();
  auto parsed = session_id::parse(id.str());
  ASSERT_TRUE(parsed);
  EXPECT_EQ(*parsed, id);
}

TEST(ids, generated_ids_are_unique_over_100k) {
  std::unordered_set<std::string> seen;
  seen.reserve(100'000);
  for (int i = 0; i < 100'000; ++i) ASSERT_TRUE(seen.insert(event_id::generate().str()).second) << "duplicate at " << i;
}

TEST(ids, generated_ids_sort_by_creation_millisecond) {
  // The first 10 body characters encode the millisecond clock.
  const auto a = input_id::generate().str().substr(4, 10);
  const auto b = input_id::generate().str().substr(4, 10);
  EXPECT_LE(a, b);
}

TEST(ids, parse_accepts_client_ids_of_letters_digits_underscore_and_dash) {
  EXPECT_TRUE(input_id::parse("msg_1"));
  EXPECT_TRUE(input_id::parse("msg_client-retry_42"));
  EXPECT_TRUE(input_id::parse("msg_" + std::string(64, 'a')));
  EXPECT_TRUE(session_id::parse("ses_ABCxyz09"));
}

TEST(ids, parse_rejects_a_missing_or_wrong_prefix) {
  for (const char* text : {"abc", "ses_abc", "MSG_abc", "msg", "_msg_abc", ""}) {
    auto r = input_id::parse(text);
    ASSERT_FALSE(r) << text;
    EXPECT_EQ(r.error(), util_errc::malformed_id) << text;
  }
}

TEST(ids, parse_rejects_an_empty_body) {
  auto r = session_id::parse("ses_");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), util_errc::malformed_id);
}

TEST(ids, parse_rejects_a_body_longer_than_64) {
  auto r = input_id::parse("msg_" + std::string(65, 'a'));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), util_errc::malformed_id);
}

TEST(ids, parse_rejects_forbidden_characters) {
  for (const std::string& text : std::vector<std::string>{"msg_a b", "msg_a/b", "msg_a.b", "msg_../x", "msg_a\nb",
                                                          "msg_\xc3\xa9", "msg_a%20", std::string("msg_a\0b", 7)}) {
    auto r = input_id::parse(text);
    ASSERT_FALSE(r) << text;
    EXPECT_EQ(r.error(), util_errc::malformed_id) << text;
    EXPECT_FALSE(r.error().message.empty());
  }
}

TEST(ids, ids_of_different_kinds_are_different_types) {
  static_assert(!std::is_convertible_v<session_id, input_id>);
  static_assert(!std::is_convertible_v<input_id, session_id>);
  static_assert(!std::is_constructible_v<session_id, std::string>);
  SUCCEED();
}

TEST(ids, equal_ids_hash_equally) {
  const auto a = call_id::trusted("call_x");
  const auto b = *call_id::parse("call_x");
  EXPECT_EQ(a, b);
  EXPECT_EQ(std::hash<call_id>{}(a), std::hash<call_id>{}(b));
}

TEST(ids, event_seqs_order_by_value) {
  EXPECT_LT(event_seq{1}, event_seq{2});
  EXPECT_EQ(event_seq{3}, event_seq{3});
}

}  // namespace
}  // namespace tether
