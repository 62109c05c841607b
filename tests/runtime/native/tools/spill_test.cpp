#include "runtime/native/tools/output.h"

#include <sys/stat.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "fixture.h"
#include "util/text.h"

namespace tether::runtime::native::test {
namespace {

namespace fs = std::filesystem;
using tool_detail::spill_if_large;
using tool_detail::succeeded;

using spill = tools_test;

std::string lines(int n, std::size_t width = 0) {
  std::string s;
  for (int i = 1; i <= n; ++i) {
    std::string line = "line " + std::to_string(i);
    if (line.size() < width) line += std::string(width - line.size(), '.');
    s += line + "\n";
  }
  return s;
}

TEST_F(spill, output_within_the_limits_is_left_alone) {
  auto out = succeeded(lines(2000));
  const std::string before = out.content;
  spill_if_large(out, context());
  EXPECT_EQ(out.content, before);
  EXPECT_TRUE(out.output_path.empty());
  EXPECT_FALSE(fs::exists(root_ / "spill"));
}

TEST_F(spill, output_over_the_line_limit_goes_to_a_file_named_by_the_call_with_a_head_and_tail_preview) {
  const std::string full = lines(3000);
  auto out = succeeded(full);
  spill_if_large(out, context());
  const auto path = root_ / "spill" / "call_1.txt";
  ASSERT_EQ(out.output_path, path.string());
  EXPECT_EQ(slurp(path), full);
  EXPECT_TRUE(out.content.starts_with("line 1\nline 2\n"));
  EXPECT_TRUE(contains(out.content, "line 100\n\u2026 2800 lines ("));
  EXPECT_TRUE(contains(out.content, " bytes) omitted; full output in " + path.string() + " \u2026\nline 2901\n"))
      << out.content.substr(0, 2000);
  EXPECT_TRUE(out.content.ends_with("line 3000\n"));
  EXPECT_EQ(out.status, tool_status::succeeded);
}

TEST_F(spill, a_spill_file_is_private_to_the_user_whatever_the_umask) {
  const mode_t before = ::umask(022);
  auto out = succeeded(lines(3000));
  spill_if_large(out, context());
  ::umask(before);
  struct stat st {};
  ASSERT_EQ(::stat((root_ / "spill" / "call_1.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

TEST_F(spill, output_over_the_byte_limit_is_spilled_and_the_preview_stays_under_it) {
  const std::string full = lines(300, 1000);  // ~300 KB in 300 lines
  auto out = succeeded(full);
  auto ctx = context();
  spill_if_large(out, ctx);
  ASSERT_FALSE(out.output_path.empty());
  EXPECT_EQ(slurp(out.output_path), full);
  EXPECT_LE(out.content.size(), ctx.limits.spill_bytes);
  EXPECT_TRUE(contains(out.content, "100 lines (")) << out.content.substr(0, 500);
  EXPECT_TRUE(contains(out.content, "full output in " + out.output_path));
  EXPECT_TRUE(is_valid_utf8(out.content));
}

TEST_F(spill, one_huge_line_is_cut_in_the_preview) {
  auto out = succeeded(std::string(200'000, 'x'));
  auto ctx = context();
  spill_if_large(out, ctx);
  ASSERT_FALSE(out.output_path.empty());
  EXPECT_LE(out.content.size(), ctx.limits.spill_bytes);
  EXPECT_TRUE(contains(out.content, "\u2026 0 lines ("));
}

TEST_F(spill, small_limits_are_honoured) {
  limits_.spill_lines = 10;
  limits_.spill_bytes = 1000;
  limits_.preview_lines = 3;
  auto out = succeeded(lines(50));
  auto ctx = context();
  spill_if_large(out, ctx);
  ASSERT_FALSE(out.output_path.empty());
  EXPECT_LE(out.content.size(), 1000U);
  EXPECT_TRUE(out.content.starts_with("line 1\nline 2\nline 3\n\u2026 44 lines (")) << out.content;
  EXPECT_TRUE(out.content.ends_with("line 48\nline 49\nline 50\n")) << out.content;
}

TEST_F(spill, a_call_id_cannot_place_the_file_outside_the_spill_directory) {
  auto ctx = context();
  ctx.call_id = "../../escape";
  auto out = succeeded(lines(3000));
  spill_if_large(out, ctx);
  ASSERT_FALSE(out.output_path.empty());
  EXPECT_EQ(fs::path(out.output_path).parent_path(), root_ / "spill");
}

TEST_F(spill, a_failed_outcome_is_spilled_too_and_stays_failed) {
  auto out = tool_detail::failed(lines(3000));
  spill_if_large(out, context());
  EXPECT_EQ(out.status, tool_status::failed);
  EXPECT_FALSE(out.output_path.empty());
}

TEST_F(spill, tool_results_over_the_limit_are_spilled_through_run) {
  for (int i = 0; i < 30; ++i) put("f" + std::to_string(i) + ".txt", "x\n");
  limits_.spill_lines = 10;
  limits_.preview_lines = 2;
  const auto out = call("list", args({}));
  ASSERT_EQ(out.status, tool_status::succeeded);
  ASSERT_FALSE(out.output_path.empty());
  EXPECT_TRUE(out.content.starts_with("f0.txt\nf1.txt\n\u2026 26 lines")) << out.content;
  EXPECT_EQ(tool_detail::count_lines(slurp(out.output_path)), 30U);
}

}  // namespace
}  // namespace tether::runtime::native::test
