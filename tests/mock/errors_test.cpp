#include "mock/errors.h"

#include <gtest/gtest.h>

#include "util/result.h"

namespace tether::mock {
namespace {

TEST(mock_errors, codes_belong_to_the_mock_category_and_have_messages) {
  const std::error_code c = mock_errc::address_in_use;
  EXPECT_STREQ(c.category().name(), "mock");
  EXPECT_EQ(c.message(), "the address is already in use");
  for (int i = static_cast<int>(mock_errc::invalid_listen_address); i <= static_cast<int>(mock_errc::invalid_request);
       ++i)
    EXPECT_NE(std::error_code(i, mock_category()).message(), "unknown mock error") << i;
  const tether::error e(mock_errc::invalid_request, "messages must be an array");
  EXPECT_EQ(e.describe(), "mock: messages must be an array");
}

}  // namespace
}  // namespace tether::mock
