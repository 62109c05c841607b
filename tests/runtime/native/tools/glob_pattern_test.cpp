#include "runtime/native/tools/glob_pattern.h"

#include <string>

#include <gtest/gtest.h>

#include "runtime/native/tools/digest.h"
#include "runtime/native/tools/output.h"

namespace tether::runtime::native::tool_detail {
namespace {

bool glob_matches(std::string_view pattern, std::string_view path) {
  auto p = glob_pattern::compile(pattern);
  EXPECT_TRUE(p.has_value()) << pattern;
  return p && p->matches(path);
}

TEST(glob_pattern, star_stays_within_one_segment) {
  EXPECT_TRUE(glob_matches("*.cpp", "main.cpp"));
  EXPECT_FALSE(glob_matches("*.cpp", "src/main.cpp"));
  EXPECT_TRUE(glob_matches("src/*", "src/main.cpp"));
  EXPECT_TRUE(glob_matches("*", ".hidden"));
  EXPECT_TRUE(glob_matches("a*b*c", "aXbYbZc"));
  EXPECT_FALSE(glob_matches("a*b*c", "aXbYbZ"));
}

TEST(glob_pattern, double_star_spans_zero_or_more_segments) {
  EXPECT_TRUE(glob_matches("**/*.h", "x.h"));
  EXPECT_TRUE(glob_matches("**/*.h", "a/b/c/x.h"));
  EXPECT_TRUE(glob_matches("src/**/x.h", "src/x.h"));
  EXPECT_TRUE(glob_matches("src/**/x.h", "src/a/b/x.h"));
  EXPECT_FALSE(glob_matches("src/**/x.h", "lib/a/x.h"));
  EXPECT_TRUE(glob_matches("src/**", "src/a/b"));
  EXPECT_TRUE(glob_matches("**", "anything/at/all"));
}

TEST(glob_pattern, question_mark_is_one_code_point_but_never_a_slash) {
  EXPECT_TRUE(glob_matches("caf?", "caf\xc3\xa9"));
  EXPECT_FALSE(glob_matches("a?b", "a/b"));
  EXPECT_FALSE(glob_matches("a?", "a"));
}

TEST(glob_pattern, classes_ranges_negation_and_escapes) {
  EXPECT_TRUE(glob_matches("[abc].txt", "b.txt"));
  EXPECT_FALSE(glob_matches("[abc].txt", "d.txt"));
  EXPECT_TRUE(glob_matches("v[0-9]", "v7"));
  EXPECT_TRUE(glob_matches("v[!0-9]", "vx"));
  EXPECT_FALSE(glob_matches("v[^0-9]", "v7"));
  EXPECT_TRUE(glob_matches("[]]", "]"));
  EXPECT_TRUE(glob_matches("a\\*", "a*"));
  EXPECT_FALSE(glob_matches("a\\*", "ab"));
  EXPECT_FALSE(glob_pattern::compile("[abc").has_value());
  EXPECT_FALSE(glob_pattern::compile("").has_value());
}

TEST(glob_pattern, braces_expand_to_alternatives_and_nest) {
  EXPECT_TRUE(glob_matches("*.{h,cpp}", "a.h"));
  EXPECT_TRUE(glob_matches("*.{h,cpp}", "a.cpp"));
  EXPECT_FALSE(glob_matches("*.{h,cpp}", "a.c"));
  EXPECT_TRUE(glob_matches("{src,lib/{x,y}}/*.rs", "lib/y/m.rs"));
  EXPECT_TRUE(glob_matches("{a}", "{a}"));  // no comma: literal braces
  EXPECT_FALSE(glob_pattern::compile("{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}").has_value());
}

TEST(digest, sha256_matches_known_vectors_across_block_boundaries) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(std::string(55, 'a')), "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(sha256_hex(std::string(56, 'a')), "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(sha256_hex(std::string(64, 'a')), "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
  EXPECT_EQ(sha256_hex(std::string(119, 'a')), "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb");
  EXPECT_EQ(sha256_hex(std::string(1'000'000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(digest, base64_pads_to_whole_quads) {
  EXPECT_EQ(base64_encode(""), "");
  EXPECT_EQ(base64_encode("f"), "Zg==");
  EXPECT_EQ(base64_encode("fo"), "Zm8=");
  EXPECT_EQ(base64_encode("foo"), "Zm9v");
  EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(base64_encode(std::string("\xff\xfe\x00", 3)), "//4A");
}

TEST(text_hygiene, binary_means_a_nul_or_invalid_utf8_in_the_first_8_kib) {
  EXPECT_FALSE(looks_binary("plain text\n"));
  EXPECT_TRUE(looks_binary(std::string("a\0b", 3)));
  EXPECT_TRUE(looks_binary("caf\xe9"));
  std::string late_nul(8 * 1024, 'a');
  late_nul += '\0';
  EXPECT_FALSE(looks_binary(late_nul));
  // A multi-byte character cut by the 8 KiB mark is still text.
  std::string cut(8 * 1024 - 1, 'a');
  cut += "\xe2\x82\xac";
  EXPECT_FALSE(looks_binary(cut));
}

TEST(text_hygiene, sanitize_replaces_each_invalid_byte) {
  EXPECT_EQ(sanitize_utf8("ok"), "ok");
  EXPECT_EQ(sanitize_utf8("a\xff" "b"), "a\xEF\xBF\xBD" "b");
  EXPECT_EQ(sanitize_utf8("\xe2\x82"), "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(clip_line("h\xc3\xa9llo", 2), "h\u2026 [+5 bytes]");
}

}  // namespace
}  // namespace tether::runtime::native::tool_detail
