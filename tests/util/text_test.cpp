#include "util/text.h"

#include <string>

#include <gtest/gtest.h>

#include "util/errors.h"

namespace tether {
namespace {

TEST(utf8, ascii_and_empty_text_are_valid) {
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("hello, world\n\t"));
  EXPECT_TRUE(is_valid_utf8(std::string("a\0b", 3)));
}

TEST(utf8, well_formed_multibyte_sequences_are_valid) {
  EXPECT_TRUE(is_valid_utf8("\xc3\xa9"));          // é (2 bytes)
  EXPECT_TRUE(is_valid_utf8("\xe2\x82\xac"));      // € (3 bytes)
  EXPECT_TRUE(is_valid_utf8("\xf0\x9f\x98\x80"));  // 😀 (4 bytes)
  EXPECT_TRUE(is_valid_utf8("\xc2\x80"));          // U+0080, smallest 2-byte
  EXPECT_TRUE(is_valid_utf8("\xe0\xa0\x80"));      // U+0800, smallest 3-byte
  EXPECT_TRUE(is_valid_utf8("\xed\x9f\xbf"));      // U+D7FF, just below the surrogates
  EXPECT_TRUE(is_valid_utf8("\xee\x80\x80"));      // U+E000, just above the surrogates
  EXPECT_TRUE(is_valid_utf8("\xef\xbf\xbf"));      // U+FFFF
  EXPECT_TRUE(is_valid_utf8("\xf0\x90\x80\x80"));  // U+10000, smallest 4-byte
  EXPECT_TRUE(is_valid_utf8("\xf4\x8f\xbf\xbf"));  // U+10FFFF, the last code point
  EXPECT_TRUE(is_valid_utf8("caf\xc3\xa9 \xe2\x82\xac 5"));
}

TEST(utf8, overlong_encodings_are_invalid) {
  EXPECT_FALSE(is_valid_utf8("\xc0\x80"));          // NUL in 2 bytes
  EXPECT_FALSE(is_valid_utf8("\xc1\xbf"));          // U+007F in 2 bytes
  EXPECT_FALSE(is_valid_utf8("\xe0\x80\xaf"));      // '/' in 3 bytes
  EXPECT_FALSE(is_valid_utf8("\xe0\x9f\xbf"));      // U+07FF in 3 bytes
  EXPECT_FALSE(is_valid_utf8("\xf0\x80\x80\xaf"));  // '/' in 4 bytes
  EXPECT_FALSE(is_valid_utf8("\xf0\x8f\xbf\xbf"));  // U+FFFF in 4 bytes
}

TEST(utf8, surrogate_code_points_are_invalid) {
  EXPECT_FALSE(is_valid_utf8("\xed\xa0\x80"));              // U+D800
  EXPECT_FALSE(is_valid_utf8("\xed\xbf\xbf"));              // U+DFFF
  EXPECT_FALSE(is_valid_utf8("\xed\xa0\xbd\xed\xb8\x80"));  // CESU-8 pair
}

TEST(utf8, code_points_above_u10ffff_are_invalid) {
  EXPECT_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));          // U+110000
  EXPECT_FALSE(is_valid_utf8("\xf7\xbf\xbf\xbf"));          // U+1FFFFF
  EXPECT_FALSE(is_valid_utf8("\xf8\x88\x80\x80\x80"));      // 5-byte form
  EXPECT_FALSE(is_valid_utf8("\xfc\x84\x80\x80\x80\x80"));  // 6-byte form
  EXPECT_FALSE(is_valid_utf8("\xfe"));
  EXPECT_FALSE(is_valid_utf8("\xff"));
}

TEST(utf8, truncated_sequences_are_invalid) {
  EXPECT_FALSE(is_valid_utf8("\xc3"));
  EXPECT_FALSE(is_valid_utf8("\xe2\x82"));
  EXPECT_FALSE(is_valid_utf8("\xf0\x9f\x98"));
  EXPECT_FALSE(is_valid_utf8("abc\xf0\x9f"));
  EXPECT_FALSE(is_valid_utf8("\xe2\x82x"));  // continuation replaced by ASCII
}

TEST(utf8, stray_continuation_bytes_are_invalid) {
  EXPECT_FALSE(is_valid_utf8("\x80"));
  EXPECT_FALSE(is_valid_utf8("a\xbf"));
  EXPECT_FALSE(is_valid_utf8("\xc3\xa9\xa9"));
}

TEST(check_text, text_within_the_limit_passes) {
  EXPECT_TRUE(check_text("prompt", "hello", 5));
  EXPECT_TRUE(check_text("prompt", "", 0));
  EXPECT_TRUE(check_text("prompt", "\xe2\x82\xac", 3));
}

TEST(check_text, text_over_the_limit_is_too_large_and_names_what) {
  auto r = check_text("prompt", "hello!", 5);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), util_errc::too_large);
  EXPECT_NE(r.error().message.find("prompt"), std::string::npos);
}

TEST(check_text, the_limit_counts_bytes_not_code_points) {
  auto r = check_text("prompt", "\xe2\x82\xac\xe2\x82\xac", 5);  // 2 code points, 6 bytes
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), util_errc::too_large);
}

TEST(check_text, invalid_utf8_is_invalid_utf8_and_names_what) {
  auto r = check_text("title", "bad \xc0\x80", 100);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), util_errc::invalid_utf8);
  EXPECT_NE(r.error().message.find("title"), std::string::npos);
}

}  // namespace
}  // namespace tether
