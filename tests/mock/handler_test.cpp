#include "mock/handler.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

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

// Long transcripts: what is kept in memory stays within the byte budget (the
// newest requests), while the record file gets every one.
TEST(recorded_requests, memory_keeps_the_newest_within_a_byte_budget_and_the_record_file_keeps_all) {
  constexpr std::size_t budget = 256U * 1024U;
  const auto file =
      std::filesystem::temp_directory_path() / ("tether-mock-budget-" + std::to_string(::getpid()) + ".jsonl");
  std::filesystem::remove(file);
  {
    request_handler h(budget);
    ASSERT_TRUE(h.open_record(file));
    const std::string padding(20'000, 'p');
    for (int i = 0; i < 100; ++i) {
      const std::string body = R"({"model":"m","messages":[{"role":"user","content":")" + padding +
                               R"(\nReply with exactly: )" + std::to_string(i) + R"("}]})";
      ASSERT_EQ(h.handle("POST", "/v1/chat/completions", body).status, 200U);
      ASSERT_LE(h.kept_bytes(), budget) << "after request " << i;
    }
    const auto kept = h.requests(0);
    ASSERT_FALSE(kept.empty());
    EXPECT_LT(kept.size(), 100U) << "the oldest were dropped";
    EXPECT_GE(kept.size(), 10U) << "as many of the newest as fit are kept";
    EXPECT_EQ(kept.back().at("seq").to_number<std::int64_t>(), 100);
    EXPECT_EQ(kept.front().at("seq").to_number<std::int64_t>(), 100 - static_cast<std::int64_t>(kept.size()) + 1);
  }
  std::ifstream in(file);
  std::size_t lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  EXPECT_EQ(lines, 100U);
  std::filesystem::remove(file);
}

TEST(recorded_requests, one_request_larger_than_the_budget_is_still_kept_as_the_newest) {
  request_handler h(1024);
  const std::string body = R"({"model":"m","messages":[{"role":"user","content":")" + std::string(5000, 'p') +
                           R"(\nReply with exactly: big"}]})";
  ASSERT_EQ(h.handle("POST", "/v1/chat/completions", body).status, 200U);
  ASSERT_EQ(h.handle("POST", "/v1/chat/completions", body).status, 200U);
  const auto kept = h.requests(0);
  ASSERT_EQ(kept.size(), 1U);
  EXPECT_EQ(kept[0].at("seq").to_number<std::int64_t>(), 2);
}

}  // namespace
}  // namespace tether::mock
