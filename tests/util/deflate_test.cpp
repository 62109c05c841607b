#include "util/deflate.h"

#include <gtest/gtest.h>

namespace tether {
namespace {

TEST(deflate, bytes_come_back_exactly_and_repetitive_text_shrinks) {
  std::string text;
  for (int i = 0; i < 2000; ++i) text += R"({"type":"assistant","message":{"content":"line )" + std::to_string(i) + "\"}}\n";
  const auto packed = deflate_bytes(text);
  EXPECT_LT(packed.size() * 5, text.size());
  auto back = inflate_bytes(packed, text.size());
  ASSERT_TRUE(back) << back.error().describe();
  EXPECT_EQ(*back, text);
  const std::string binary("\0\xff\x01\x80", 4);
  EXPECT_EQ(*inflate_bytes(deflate_bytes(binary), 4), binary);
  EXPECT_EQ(*inflate_bytes(deflate_bytes(""), 0), "");
}

TEST(deflate, damaged_data_or_a_wrong_size_is_an_error) {
  const auto packed = deflate_bytes("hello, hello, hello");
  EXPECT_FALSE(inflate_bytes(packed, 18)) << "one byte short";
  EXPECT_FALSE(inflate_bytes(packed, 20)) << "one byte long";
  auto damaged = packed;
  damaged[damaged.size() / 2] ^= 0x55;
  EXPECT_FALSE(inflate_bytes(damaged, 19));
  EXPECT_FALSE(inflate_bytes("not zlib at all", 19));
  EXPECT_FALSE(inflate_bytes("", 0));
}

}  // namespace
}  // namespace tether
