// live_printer: the elapsed-time status line of a running tool.
#include "cli/printer.h"

#include <gtest/gtest.h>

namespace tether::cli {
namespace {

model::event at(std::int64_t time_ms, model::payload p) {
  model::event e;
  e.session = session_id::trusted("ses_printer");
  e.time = time_ms;
  e.body = std::move(p);
  return e;
}

model::event called(std::int64_t time_ms, std::string call, std::string tool) {
  return at(time_ms, model::tool_called{call_id::trusted(std::move(call)), std::move(tool), boost::json::object{}});
}

model::event succeeded(std::int64_t time_ms, std::string call) {
  return at(time_ms, model::tool_succeeded{call_id::trusted(std::move(call)), "ok", ""});
}

constexpr std::string_view erase = "\r\x1b[2K";

TEST(LivePrinter, ShowsARunningToolsElapsedTimeOnOneLineAndClearsItBeforeTheResult) {
  std::vector<std::string> out;
  live_printer p([&out](std::string_view s) { out.emplace_back(s); }, true);
  p.on(called(10'000, "call_1", "shell"));
  ASSERT_EQ(out.size(), 1U);
  p.tick(10'500);
  EXPECT_EQ(out.size(), 1U) << "nothing in the first second";
  p.tick(11'200);
  ASSERT_EQ(out.size(), 2U);
  EXPECT_EQ(out[1], std::string(erase) + "    running shell… 1.0s");
  p.tick(11'900);
  EXPECT_EQ(out.size(), 2U) << "redrawn only when its second changes";
  p.tick(22'000);
  ASSERT_EQ(out.size(), 3U);
  EXPECT_EQ(out[2], std::string(erase) + "    running shell… 12s");
  p.on(succeeded(22'100, "call_1"));
  ASSERT_EQ(out.size(), 4U);
  EXPECT_TRUE(out[3].starts_with(std::string(erase) + "tool result:\n")) << out[3];
  p.tick(40'000);
  EXPECT_EQ(out.size(), 4U) << "no tool runs: no status";
}

TEST(LivePrinter, OfSeveralRunningToolsShowsTheLongestRunningAndForgetsEachByItsCall) {
  std::vector<std::string> out;
  live_printer p([&out](std::string_view s) { out.emplace_back(s); }, true);
  p.on(called(0, "call_a", "shell"));
  p.on(called(1'000, "call_b", "read_file"));
  p.tick(3'000);
  EXPECT_EQ(out.back(), std::string(erase) + "    running shell… 3.0s");
  p.on(succeeded(3'100, "call_a"));
  p.tick(4'000);
  EXPECT_EQ(out.back(), std::string(erase) + "    running read_file… 3.0s");
}

// A live tool.called counts from when it arrived, on this machine's clock:
// a server whose clock is an hour ahead does not make it read 0 s (nor one
// behind, an hour).
TEST(LivePrinter, ALiveToolCountsFromItsArrivalWhateverTheServersClock) {
  std::vector<std::string> out;
  live_printer p([&out](std::string_view s) { out.emplace_back(s); }, true);
  const std::int64_t hour = 3'600'000;
  p.on(called(50'000 + hour, "call_ahead", "shell"), 50'000);
  p.tick(52'500);
  EXPECT_EQ(out.back(), std::string(erase) + "    running shell… 2.0s");
  p.on(succeeded(52'600 + hour, "call_ahead"), 52'600);
  p.on(called(60'000 - hour, "call_behind", "shell"), 60'000);
  p.tick(63'000);
  EXPECT_EQ(out.back(), std::string(erase) + "    running shell… 3.0s");
  // A replayed one (no arrival time) counts from its own time.
  p.on(succeeded(63'100, "call_behind"), 63'100);
  p.on(called(10'000, "call_old", "shell"));
  p.tick(70'000);
  EXPECT_EQ(out.back(), std::string(erase) + "    running shell… 1m00s");
}

TEST(LivePrinter, WithoutAStatusLineNothingButTheEventsIsPrinted) {
  std::string out;
  live_printer p([&out](std::string_view s) { out += s; }, false);
  p.on(called(0, "call_1", "shell"));
  p.tick(30'000);
  p.on(succeeded(30'000, "call_1"));
  EXPECT_EQ(out, "tool call shell {}\ntool result:\n    ok\n");
}

}  // namespace
}  // namespace tether::cli
