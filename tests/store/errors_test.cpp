#include "store/errors.h"

#include <gtest/gtest.h>

#include "store/types.h"
#include "util/result.h"

namespace tether::store {
namespace {

TEST(store_errors, codes_belong_to_the_store_category_and_have_messages) {
  const std::error_code c = store_errc::fence_failed;
  EXPECT_STREQ(c.category().name(), "store");
  EXPECT_EQ(c.message(), "the append's fence did not hold");
  for (int i = static_cast<int>(store_errc::closed); i <= static_cast<int>(store_errc::lagged); ++i)
    EXPECT_NE(std::error_code(i, store_category()).message(), "unknown store error") << i;
  const tether::error e(store_errc::lease_held, "held by node-b/1");
  EXPECT_EQ(e.describe(), "store: held by node-b/1");
}

TEST(store_errors, status_and_role_names_are_stable) {
  EXPECT_EQ(to_string(input_status::pending), "pending");
  EXPECT_EQ(to_string(input_status::promoted), "promoted");
  EXPECT_EQ(to_string(input_status::cancelled), "cancelled");
  EXPECT_EQ(to_string(message_role::user), "user");
  EXPECT_EQ(to_string(message_role::assistant), "assistant");
  EXPECT_EQ(to_string(message_role::tool_call), "tool_call");
  EXPECT_EQ(to_string(message_role::tool_result), "tool_result");
  EXPECT_EQ(to_string(message_role::notice), "notice");
}

}  // namespace
}  // namespace tether::store
