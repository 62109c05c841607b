#include "process/line_framer.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "process/errors.h"

namespace tether::process {
namespace {

// Feeds `text` in pieces of the given sizes and collects every line.
std::vector<std::string> frame(const std::string& text, std::size_t piece, line_limits limits = {}) {
  line_framer f(limits);
  std::vector<std::string> out;
  for (std::size_t at = 0; at < text.size(); at += piece) {
    f.feed(std::string_view(text).substr(at, piece));
    while (auto line = f.next()) out.push_back(line->value());
  }
  while (auto line = f.finish()) out.push_back(line->value());
  return out;
}

TEST(line_framer, lines_come_out_the_same_whatever_the_split) {
  const std::string text = "first\nsecond\r\n\nlast without newline";
  const std::vector<std::string> want = {"first", "second", "", "last without newline"};
  for (std::size_t piece = 1; piece <= text.size(); ++piece) EXPECT_EQ(frame(text, piece), want) << piece;
  // And every split point of two pieces.
  for (std::size_t cut = 0; cut <= text.size(); ++cut) {
    line_framer f;
    std::vector<std::string> got;
    f.feed(text.substr(0, cut));
    while (auto l = f.next()) got.push_back(l->value());
    f.feed(text.substr(cut));
    while (auto l = f.next()) got.push_back(l->value());
    while (auto l = f.finish()) got.push_back(l->value());
    EXPECT_EQ(got, want) << cut;
  }
}

TEST(line_framer, a_line_over_the_limit_is_an_error_and_the_framer_stays_failed) {
  line_framer f({.max_bytes = 8});
  f.feed("12345678\n123456789");
  auto ok_line = f.next();
  ASSERT_TRUE(ok_line && *ok_line);
  EXPECT_EQ(ok_line->value(), "12345678");
  auto too_long = f.next();
  ASSERT_TRUE(too_long.has_value());
  ASSERT_FALSE(*too_long);
  EXPECT_EQ(too_long->error(), process_errc::line_too_long);
  f.feed("\nmore\n");
  EXPECT_FALSE(f.next().has_value());
  EXPECT_FALSE(f.finish().has_value());
}

TEST(line_framer, an_unterminated_line_over_the_limit_is_refused_before_its_newline_arrives) {
  line_framer f({.max_bytes = 4});
  f.feed("abcd");
  EXPECT_FALSE(f.next().has_value());  // exactly the limit: it may still end here
  f.feed("e");
  auto r = f.next();
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(*r);
  EXPECT_EQ(f.buffered(), 0u);  // what it held is released
}

TEST(line_framer, split_policy_cuts_an_overlong_line_into_pieces_of_the_limit) {
  const line_limits split{.max_bytes = 3, .overlong = overlong_line::split};
  for (std::size_t piece = 1; piece <= 12; ++piece)
    EXPECT_EQ(frame("abcdefgh\nxy\n", piece, split), (std::vector<std::string>{"abc", "def", "gh", "xy"})) << piece;
}

TEST(line_framer, memory_stays_bounded_by_the_limit_plus_one_chunk) {
  line_framer f({.max_bytes = 100, .overlong = overlong_line::split});
  const std::string chunk(64, 'x');
  std::size_t lines = 0;
  for (int i = 0; i < 10'000; ++i) {
    f.feed(chunk);
    while (auto l = f.next()) {
      ASSERT_TRUE(*l);
      EXPECT_EQ(l->value().size(), 100u);
      ++lines;
    }
    EXPECT_LE(f.buffered(), 100u + chunk.size());
  }
  // The last 100 bytes may still be the start of a longer line.
  EXPECT_EQ(lines, 10'000u * 64 / 100 - 1);
  auto last = f.finish();
  ASSERT_TRUE(last && *last);
  EXPECT_EQ(last->value().size(), 100u);
}

TEST(line_framer, a_crlf_line_of_exactly_the_limit_is_not_over_it) {
  line_framer f({.max_bytes = 3});
  f.feed("abc\r\n");
  auto l = f.next();
  ASSERT_TRUE(l && *l);
  EXPECT_EQ(l->value(), "abc");
}

}  // namespace
}  // namespace tether::process
