#include "runtime/native/tools/tool.h"

#include <filesystem>
#include <string>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "fixture.h"
#include "runtime/native/tools/digest.h"

namespace tether::runtime::native::test {
namespace {

namespace fs = std::filesystem;

using read_tool = tools_test;

std::string numbered_lines(int from, int to) {
  std::string s;
  for (int i = from; i <= to; ++i) s += "line " + std::to_string(i) + "\n";
  return s;
}

TEST_F(read_tool, text_lines_are_numbered_like_cat_n) {
  put("a.txt", "alpha\nbeta\r\ngamma");
  const auto out = call("read", args({{"path", "a.txt"}}));
  ASSERT_EQ(out.status, tool_status::succeeded) << out.content;
  EXPECT_EQ(out.content, "     1\talpha\n     2\tbeta\n     3\tgamma\n");
  EXPECT_TRUE(out.output_path.empty());
}

TEST_F(read_tool, offset_and_limit_select_lines_and_say_how_to_continue) {
  put("a.txt", numbered_lines(1, 10));
  const auto out = call("read", args({{"path", "a.txt"}, {"offset", 3}, {"limit", 2}}));
  ASSERT_EQ(out.status, tool_status::succeeded) << out.content;
  EXPECT_EQ(out.content, "     3\tline 3\n     4\tline 4\n(showing lines 3-4 of 10; continue with offset=5)\n");
}

TEST_F(read_tool, an_offset_past_the_end_fails) {
  put("a.txt", numbered_lines(1, 3));
  const auto out = call("read", args({{"path", "a.txt"}, {"offset", 4}}));
  EXPECT_EQ(out.status, tool_status::failed);
  EXPECT_TRUE(contains(out.content, "past the end")) << out.content;
}

TEST_F(read_tool, a_long_file_comes_in_pages_under_the_spill_limits_instead_of_spilling) {
  limits_.spill_lines = 50;
  put("big.txt", numbered_lines(1, 200));
  const auto out = call("read", args({{"path", "big.txt"}}));
  ASSERT_EQ(out.status, tool_status::succeeded);
  EXPECT_TRUE(out.output_path.empty());
  EXPECT_TRUE(contains(out.content, "    49\tline 49\n(showing lines 1-49 of 200; continue with offset=50)"))
      << out.content;
}

TEST_F(read_tool, very_long_lines_are_cut) {
  std::string wide(5000, 'x');
  wide += '\n';
  put("wide.txt", wide);
  const auto out = call("read", args({{"path", "wide.txt"}}));
  ASSERT_EQ(out.status, tool_status::succeeded);
  EXPECT_LT(out.content.size(), 2100U);
  EXPECT_TRUE(contains(out.content, "[+3000 bytes]")) << out.content.substr(2000);
}

TEST_F(read_tool, a_binary_file_fails_with_its_size_and_no_content) {
  std::string blob("\x7f" "ELF\0\0\x01\x02", 8);
  blob.append(100, '\0');
  put("blob.bin", blob);
  const auto out = call("read", args({{"path", "blob.bin"}}));
  EXPECT_EQ(out.status, tool_status::failed);
  EXPECT_TRUE(out.content.starts_with("binary file, 108 bytes")) << out.content;
  EXPECT_TRUE(out.images.empty());
}

TEST_F(read_tool, invalid_utf8_counts_as_binary) {
  put("latin1.txt", "caf\xe9 au lait\n");
  const auto out = call("read", args({{"path", "latin1.txt"}}));
  EXPECT_EQ(out.status, tool_status::failed);
  EXPECT_TRUE(contains(out.content, "binary file")) << out.content;
}

TEST_F(read_tool, a_file_over_the_read_limit_is_refused) {
  limits_.read_max_bytes = 100;
  put("big.txt", std::string(101, 'a'));
  const auto out = call("read", args({{"path", "big.txt"}}));
  EXPECT_EQ(out.status, tool_status::failed);
  EXPECT_TRUE(contains(out.content, "101 bytes; the limit is 100 bytes")) << out.content;
}

TEST_F(read_tool, missing_files_empty_files_and_directories_are_told_apart) {
  const auto missing = call("read", args({{"path", "nope.txt"}}));
  EXPECT_EQ(missing.status, tool_status::failed);
  EXPECT_TRUE(contains(missing.content, "no such file")) << missing.content;
  put("empty.txt", "");
  const auto empty = call("read", args({{"path", "empty.txt"}}));
  EXPECT_EQ(empty.status, tool_status::succeeded);
  EXPECT_TRUE(contains(empty.content, "is empty")) << empty.content;
  fs::create_directories(ws_ / "dir");
  const auto dir = call("read", args({{"path", "dir"}}));
  EXPECT_EQ(dir.status, tool_status::failed);
  EXPECT_TRUE(contains(dir.content, "is a directory; use list")) << dir.content;
}

TEST_F(read_tool, an_image_is_returned_as_an_image_part_and_stored_once_by_sha256) {
  std::string png("\x89PNG\r\n\x1a\n", 8);
  png.append("\0\0\0\rIHDR", 8);
  png.append("pixels");
  put("pic.png", png);
  const auto first = call("read", args({{"path", "pic.png"}}));
  const auto second = call("read", args({{"path", "pic.png"}}));
  for (const auto& out : {first, second}) {
    ASSERT_EQ(out.status, tool_status::succeeded) << out.content;
    ASSERT_EQ(out.images.size(), 1U);
    EXPECT_EQ(out.images[0].media_type, "image/png");
    EXPECT_EQ(out.images[0].base64, tool_detail::base64_encode(png));
  }
  const std::string digest = tool_detail::sha256_hex(png);
  const auto blob = root_ / "blobs" / (digest + ".png");
  EXPECT_TRUE(contains(first.content, "sha256:" + digest)) << first.content;
  EXPECT_TRUE(contains(first.content, blob.string())) << first.content;
  EXPECT_EQ(slurp(blob), png);
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(root_ / "blobs")) ++files;
  EXPECT_EQ(files, 1U);
}

TEST_F(read_tool, jpeg_gif_and_webp_are_recognised_by_their_magic_bytes) {
  put("a.jpg", std::string("\xFF\xD8\xFF\xE0", 4) + "jfif");
  put("b.gif", "GIF89a....");
  put("c.webp", std::string("RIFF\x10\0\0\0WEBPVP8 ", 16));
  put("d.png.txt", "not really a png\n");
  EXPECT_EQ(call("read", args({{"path", "a.jpg"}})).images.at(0).media_type, "image/jpeg");
  EXPECT_EQ(call("read", args({{"path", "b.gif"}})).images.at(0).media_type, "image/gif");
  EXPECT_EQ(call("read", args({{"path", "c.webp"}})).images.at(0).media_type, "image/webp");
  EXPECT_TRUE(call("read", args({{"path", "d.png.txt"}})).images.empty());
}

TEST_F(read_tool, a_stop_requested_before_the_call_fails_interrupted) {
  put("a.txt", "x\n");
  std::stop_source stop;
  stop.request_stop();
  auto ctx = context();
  ctx.stop = stop.get_token();
  const auto out = call("read", args({{"path", "a.txt"}}), ctx);
  EXPECT_EQ(out.status, tool_status::failed);
  EXPECT_EQ(out.content, "interrupted");
}

}  // namespace
}  // namespace tether::runtime::native::test
