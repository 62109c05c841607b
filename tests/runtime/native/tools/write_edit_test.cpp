#include "runtime/native/tools/tool.h"

#include <sys/stat.h>

#include <filesystem>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "fixture.h"

namespace tether::runtime::native::test {
namespace {

namespace fs = std::filesystem;

using write_tool = tools_test;
using edit_tool = tools_test;

std::size_t entries_in(const fs::path& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

TEST_F(write_tool, creates_parent_directories_and_reports_the_bytes_written) {
  const auto out = call("write", args({{"path", "a/b/c.txt"}, {"content", "hello\n"}}));
  ASSERT_EQ(out.status, tool_status::succeeded) << out.content;
  EXPECT_EQ(out.content, "wrote 6 bytes to 'a/b/c.txt' (new file)");
  EXPECT_EQ(slurp(ws_ / "a" / "b" / "c.txt"), "hello\n");
}

TEST_F(write_tool, replaces_a_file_whole_keeps_its_mode_and_leaves_no_temporary_file) {
  put("run.sh", "old content that is longer\n");
  fs::permissions(ws_ / "run.sh", fs::perms::owner_all | fs::perms::group_read, fs::perm_options::replace);
  const auto out = call("write", args({{"path", "run.sh"}, {"content", "new"}}));
  ASSERT_EQ(out.status, tool_status::succeeded) << out.content;
  EXPECT_TRUE(contains(out.content, "replaced its previous content"));
  EXPECT_EQ(slurp(ws_ / "run.sh"), "new");
  EXPECT_EQ(fs::status(ws_ / "run.sh").permissions(), fs::perms::owner_all | fs::perms::group_read);
  EXPECT_EQ(entries_in(ws_), 1U);
}

TEST_F(write_tool, a_new_file_and_its_new_directories_are_readable_by_others_although_the_server_keeps_umask_077) {
  const mode_t before = ::umask(077);  // as serve and run set it
  const auto out = call("write", args({{"path", "src/new/main.c"}, {"content", "int main;\n"}}));
  ::umask(before);
  ASSERT_EQ(out.status, tool_status::succeeded) << out.content;
  struct stat st {};
  ASSERT_EQ(::stat((ws_ / "src" / "new" / "main.c").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  for (const auto& dir : {ws_ / "src", ws_ / "src" / "new"}) {
    ASSERT_EQ(::stat(dir.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0755u) << dir;
  }
}

TEST_F(write_tool, refuses_to_replace_a_directory) {
  fs::create_directories(ws_ / "dir");
  const auto out = call("write", args({{"path", "dir"}, {"content", "x"}}));
  EXPECT_EQ(out.status, tool_status::failed);
  EXPECT_TRUE(contains(out.content, "is a directory")) << out.content;
}

TEST_F(edit_tool, replaces_a_unique_match) {
  put("a.txt", "one two three\n");
  const auto out = call("edit", args({{"path", "a.txt"}, {"old_string", "two"}, {"new_string", "2"}}));
  ASSERT_EQ(out.status, tool_status::succeeded) << out.content;
  EXPECT_EQ(out.content, "replaced 1 occurrence in 'a.txt'");
  EXPECT_EQ(slurp(ws_ / "a.txt"), "one 2 three\n");
}

TEST_F(edit_tool, a_missing_match_fails_naming_the_file) {
  put("a.txt", "one two three\n");
  const auto out = call("edit", args({{"path", "a.txt"}, {"old_string", "four"}, {"new_string", "4"}}));
  EXPECT_EQ(out.status, tool_status::failed);
  EXPECT_TRUE(out.content.starts_with("old_string not found in 'a.txt'")) << out.content;
  EXPECT_EQ(slurp(ws_ / "a.txt"), "one two three\n");
}

TEST_F(edit_tool, an_ambiguous_match_fails_saying_how_many_matches) {
  put("a.txt", "x = 1\nx = 1\nx = 1\n");
  const auto out = call("edit", args({{"path", "a.txt"}, {"old_string", "x = 1"}, {"new_string", "x = 2"}}));
  EXPECT_EQ(out.status, tool_status::failed);
  EXPECT_TRUE(contains(out.content, "matches 3 times")) << out.content;
  EXPECT_EQ(slurp(ws_ / "a.txt"), "x = 1\nx = 1\nx = 1\n");
}

TEST_F(edit_tool, replace_all_replaces_every_match) {
  put("a.txt", "x = 1\nx = 1\nx = 1\n");
  const auto out = call("edit", args({{"path", "a.txt"}, {"old_string", "x = 1"}, {"new_string", "x = 2"},
                                      {"replace_all", true}}));
  ASSERT_EQ(out.status, tool_status::succeeded) << out.content;
  EXPECT_EQ(out.content, "replaced 3 occurrences in 'a.txt'");
  EXPECT_EQ(slurp(ws_ / "a.txt"), "x = 2\nx = 2\nx = 2\n");
}

TEST_F(edit_tool, an_empty_old_string_is_refused) {
  put("a.txt", "abc");
  const auto out = call("edit", args({{"path", "a.txt"}, {"old_string", ""}, {"new_string", "x"}}));
  EXPECT_EQ(out.status, tool_status::failed);
  EXPECT_TRUE(contains(out.content, "old_string is empty")) << out.content;
}

TEST_F(edit_tool, an_lf_old_string_matches_a_crlf_file_and_keeps_its_line_ends) {
  put("dos.txt", "first\r\nsecond\r\nthird\r\n");
  const auto out =
      call("edit", args({{"path", "dos.txt"}, {"old_string", "first\nsecond"}, {"new_string", "1st\n2nd"}}));
  ASSERT_EQ(out.status, tool_status::succeeded) << out.content;
  EXPECT_EQ(slurp(ws_ / "dos.txt"), "1st\r\n2nd\r\nthird\r\n");
}

TEST_F(edit_tool, a_missing_file_fails) {
  const auto out = call("edit", args({{"path", "nope.txt"}, {"old_string", "a"}, {"new_string", "b"}}));
  EXPECT_EQ(out.status, tool_status::failed);
  EXPECT_TRUE(contains(out.content, "no such file")) << out.content;
}

}  // namespace
}  // namespace tether::runtime::native::test
