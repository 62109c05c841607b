#include "mock/handler.h"

#include <gtest/gtest.h>

namespace tether::mock {
namespace {

TEST(recorded_requests, memory_keeps_the_latest_ten_thousand_and_seq_numbers_go_on) {
  request_handler h;
  const std::string body = R"({"model":"m","messages":[{"role":"user","content":"Reply with exactly: x"}]})";
  for (int i = 0; i < 10'005; ++i) ASSERT_EQ(h.handle("POST", "/v1/chat/completions", body).status, 200U);
  const auto all = h.requests(0);
  ASSERT_EQ(all.size(), 10'000U);
  EXPECT_EQ(all.front().at("seq").to_number<std::int64_t>(), 6);
  EXPECT_EQ(all.back().at("seq").to_number<std::int64_t>(), 10'005);
  const auto last = h.requests(10'004);
  ASSERT_EQ(last.size(), 1U);
  EXPECT_EQ(last[0].at("seq").to_number<std::int64_t>(), 10'005);
  h.mark_completed(10'005);
  EXPECT_TRUE(h.requests(10'004)[0].as_object().contains("completed_us"));
  h.mark_completed(1);  // dropped long ago: ignored
}

}  // namespace
}  // namespace tether::mock
