#include "util/clock.h"

#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace tether {
namespace {

TEST(manual_clock, starts_where_it_is_told) {
  manual_clock c(1000);
  EXPECT_EQ(c.now(), 1000);
  EXPECT_EQ(manual_clock().now(), 1'700'000'000'000);
}

TEST(manual_clock, moves_only_when_advanced_or_set) {
  manual_clock c(1000);
  EXPECT_EQ(c.now(), 1000);
  c.advance(250);
  EXPECT_EQ(c.now(), 1250);
  c.set(10);
  EXPECT_EQ(c.now(), 10);
}

TEST(manual_clock, concurrent_advances_are_not_lost) {
  manual_clock c(0);
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 10'000; ++i) c.advance(1);
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(c.now(), 40'000);
}

TEST(manual_clock, is_usable_through_the_clock_interface) {
  manual_clock m(42);
  const clock& c = m;
  EXPECT_EQ(c.now(), 42);
}

TEST(real_clock, reads_milliseconds_since_the_epoch) {
  const auto t = real_clock().now();
  EXPECT_GT(t, 1'600'000'000'000);  // after 2020
  EXPECT_LT(t, 4'000'000'000'000);  // before 2096
  EXPECT_LE(t, real_clock().now());
}

}  // namespace
}  // namespace tether
