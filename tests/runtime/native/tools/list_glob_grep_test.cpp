#include "runtime/native/tools/tool.h"

#include <filesystem>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "fixture.h"

namespace tether::runtime::native::test {
namespace {

namespace fs = std::filesystem;

class tree : public tools_test {
 protected:
  tree() {
    put("README.md", "# Readme\nTODO: write docs\n");
    put("src/main.cpp", "int main() {\n  // TODO fix\n  return 0;\n}\n");
    put("src/util.h", "#pragma once\nint helper(); // todo later\n");
    put("src/deep/x/y.cpp", "void y() {}\n");
    put("docs/a?.txt", "question mark name\n");
    put(".git/config", "TODO inside git\n");
    put("image.bin", std::string("TODO\0binary", 11));
  }
};

TEST_F(tree, list_sorts_entries_and_marks_directories_and_links) {
  fs::create_symlink("README.md", ws_ / "link");
  const auto out = call("list", args({}));
  ASSERT_EQ(out.status, tool_status::succeeded) << out.content;
  EXPECT_EQ(out.content, ".git/\nREADME.md\ndocs/\nimage.bin\nlink -> README.md\nsrc/\n");
}

TEST_F(tree, list_is_capped_and_says_how_many_were_left_out) {
  limits_.max_results = 2;
  const auto out = call("list", args({{"path", "."}}));
  EXPECT_EQ(out.content, ".git/\nREADME.md\n(3 more entries not shown; narrow the search)\n");
}

TEST_F(tree, list_of_a_file_fails) {
  const auto out = call("list", args({{"path", "README.md"}}));
  EXPECT_EQ(out.status, tool_status::failed);
  EXPECT_TRUE(contains(out.content, "not a directory")) << out.content;
}

TEST_F(tree, glob_double_star_matches_any_depth_including_none) {
  const auto out = call("glob", args({{"pattern", "src/**/*.cpp"}}));
  EXPECT_EQ(out.content, "src/deep/x/y.cpp\nsrc/main.cpp\n");
}

TEST_F(tree, glob_supports_classes_question_marks_and_braces_and_skips_git) {
  EXPECT_EQ(call("glob", args({{"pattern", "**/*.{h,md}"}})).content, "README.md\nsrc/util.h\n");
  EXPECT_EQ(call("glob", args({{"pattern", "src/[mu]*"}})).content, "src/main.cpp\nsrc/util.h\n");
  EXPECT_EQ(call("glob", args({{"pattern", "docs/a\\?.txt"}})).content, "docs/a?.txt\n");
  EXPECT_EQ(call("glob", args({{"pattern", "src/ma?n.cpp"}})).content, "src/main.cpp\n");
  EXPECT_FALSE(contains(call("glob", args({{"pattern", "**"}})).content, ".git"));
}

TEST_F(tree, glob_with_a_path_matches_below_it_and_shows_workspace_paths) {
  const auto out = call("glob", args({{"pattern", "*"}, {"path", "src"}}));
  EXPECT_EQ(out.content, "src/deep/\nsrc/main.cpp\nsrc/util.h\n");
}

TEST_F(tree, glob_is_capped) {
  limits_.max_results = 1;
  const auto out = call("glob", args({{"pattern", "**/*.cpp"}}));
  EXPECT_EQ(out.content, "src/deep/x/y.cpp\n(1 more matches not shown; narrow the search)\n");
}

TEST_F(tree, glob_refuses_absolute_and_parent_patterns) {
  EXPECT_EQ(call("glob", args({{"pattern", "/etc/*"}})).status, tool_status::failed);
  EXPECT_EQ(call("glob", args({{"pattern", "../*"}})).status, tool_status::failed);
  EXPECT_EQ(call("glob", args({{"pattern", "src/[abc"}})).status, tool_status::failed);
}

TEST_F(tree, glob_without_matches_succeeds_and_says_so) {
  const auto out = call("glob", args({{"pattern", "*.rs"}}));
  EXPECT_EQ(out.status, tool_status::succeeded);
  EXPECT_TRUE(contains(out.content, "no paths match")) << out.content;
}

TEST_F(tree, grep_reports_file_line_and_text_in_path_order_skipping_binary_files_and_git) {
  const auto out = call("grep", args({{"pattern", "TODO"}}));
  ASSERT_EQ(out.status, tool_status::succeeded) << out.content;
  EXPECT_EQ(out.content,
            "README.md:2: TODO: write docs\nsrc/main.cpp:2:   // TODO fix\n(skipped 1 binary files and 0 files "
            "over 16777216 bytes)\n");
}

TEST_F(tree, grep_ignore_case_and_regex_syntax) {
  const auto out = call("grep", args({{"pattern", "to+do\\b"}, {"ignore_case", true}, {"glob", "*.h"}}));
  EXPECT_EQ(out.content, "src/util.h:2: int helper(); // todo later\n");
}

TEST_F(tree, grep_glob_with_a_slash_matches_paths_relative_to_path) {
  const auto out = call("grep", args({{"pattern", "void"}, {"glob", "deep/**"}, {"path", "src"}}));
  EXPECT_EQ(out.content, "src/deep/x/y.cpp:1: void y() {}\n");
}

TEST_F(tree, grep_falls_back_to_literal_text_for_an_invalid_regex) {
  put("calls.txt", "call foo( here\n");
  const auto out = call("grep", args({{"pattern", "foo("}, {"path", "calls.txt"}}));
  ASSERT_EQ(out.status, tool_status::succeeded);
  EXPECT_TRUE(out.content.starts_with("calls.txt:1: call foo( here\n")) << out.content;
  EXPECT_TRUE(contains(out.content, "searched for as literal text")) << out.content;
}

TEST_F(tree, grep_is_capped_and_says_it_stopped) {
  limits_.max_results = 1;
  const auto out = call("grep", args({{"pattern", "TODO"}, {"glob", "*.{md,cpp}"}}));
  EXPECT_EQ(out.content, "README.md:2: TODO: write docs\n(stopped after 1 matches; narrow the search with path or glob)\n");
}

TEST_F(tree, grep_without_matches_succeeds) {
  const auto out = call("grep", args({{"pattern", "nothing-like-this"}, {"path", "src"}}));
  EXPECT_EQ(out.status, tool_status::succeeded);
  EXPECT_EQ(out.content, "no matches for 'nothing-like-this' under 'src'\n");
}

}  // namespace
}  // namespace tether::runtime::native::test
