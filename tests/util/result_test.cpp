#include "util/result.h"

#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "util/errors.h"

namespace tether {
namespace {

result<int> half(int x) {
  if (x % 2 != 0) return make_error(util_errc::invalid_argument, "odd");
  return x / 2;
}

result<int> quarter(int x) {
  auto h = half(x);
  if (!h) return h.error();
  return half(*h);
}

result<void> must_be_even(int x) {
  TETHER_TRY(half(x));
  return ok();
}

TEST(result, holds_a_value) {
  auto r = half(8);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r.has_value());
  EXPECT_EQ(r.value(), 4);
  EXPECT_EQ(*r, 4);
}

TEST(result, holds_an_error_with_code_and_message) {
  auto r = half(3);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), util_errc::invalid_argument);
  EXPECT_EQ(r.error().code, make_error_code(util_errc::invalid_argument));
  EXPECT_EQ(r.error().message, "odd");
}

TEST(result, errors_propagate_through_callers) {
  EXPECT_EQ(*quarter(8), 2);
  auto r = quarter(6);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), util_errc::invalid_argument);
}

TEST(result, converts_from_an_error_code_enum) {
  result<std::string> r = util_errc::malformed_json;
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), util_errc::malformed_json);
  EXPECT_TRUE(r.error().message.empty());
}

TEST(result, holds_move_only_values) {
  result<std::unique_ptr<int>> r = std::make_unique<int>(7);
  ASSERT_TRUE(r);
  auto p = std::move(r).value();
  EXPECT_EQ(*p, 7);
}

TEST(result, arrow_reaches_the_value) {
  result<std::string> r = std::string("abc");
  EXPECT_EQ(r->size(), 3U);
}

TEST(result_void, default_is_success) {
  result<void> r;
  EXPECT_TRUE(r);
  EXPECT_TRUE(ok());
  r.value();  // does not abort
}

TEST(result_void, holds_an_error) {
  result<void> r = make_error(util_errc::too_large, "big");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), util_errc::too_large);
  EXPECT_EQ(r.error().message, "big");
}

TEST(result_void, try_macro_propagates_the_first_error) {
  EXPECT_TRUE(must_be_even(4));
  auto r = must_be_even(5);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "odd");
}

TEST(error, describe_names_the_category_and_the_message) {
  EXPECT_EQ(error(util_errc::invalid_utf8, "prompt is not valid UTF-8").describe(), "util: prompt is not valid UTF-8");
}

TEST(error, describe_falls_back_to_the_code_text) {
  EXPECT_EQ(error(util_errc::malformed_id).describe(), "util: malformed id");
}

TEST(error, util_codes_have_their_own_category) {
  const std::error_code c = util_errc::too_large;
  EXPECT_STREQ(c.category().name(), "util");
  EXPECT_EQ(c.message(), "too large");
  EXPECT_NE(c, std::make_error_code(std::errc::invalid_argument));
}

TEST(result_death, value_of_an_error_is_a_loud_bug) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        auto r = half(3);
        (void)r.value();
      },
      "TETHER_CHECK failed");
}

TEST(result_death, error_of_a_value_is_a_loud_bug) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        auto r = half(2);
        (void)r.error();
      },
      "error\\(\\) on value");
}

}  // namespace
}  // namespace tether
