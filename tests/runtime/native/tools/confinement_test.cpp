#include "runtime/native/tools/tool.h"

#include <filesystem>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "fixture.h"

namespace tether::runtime::native::test {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

class confinement : public tools_test {
 protected:
  confinement() {
    put_at(outside_ / "secret.txt", "SECRET outside\n");
    put("inside.txt", "inside text\n");
  }

  void expect_outside(const tool_outcome& out) {
    EXPECT_EQ(out.status, tool_status::failed);
    EXPECT_TRUE(contains(out.content, "outside the workspace")) << out.content;
  }
};

TEST_F(confinement, dot_dot_escape_is_refused_by_read) {
  expect_outside(call("read", args({{"path", "../outside/secret.txt"}})));
  expect_outside(call("read", args({{"path", "sub/../../outside/secret.txt"}})));
}

TEST_F(confinement, missing_file_beyond_the_workspace_is_reported_as_outside_not_as_missing) {
  expect_outside(call("read", args({{"path", "../outside/nope.txt"}})));
}

TEST_F(confinement, absolute_path_outside_is_refused) {
  expect_outside(call("read", args({{"path", (outside_ / "secret.txt").c_str()}})));
  expect_outside(call("list", args({{"path", "/"}})));
}

TEST_F(confinement, absolute_path_inside_is_accepted) {
  const auto out = call("read", args({{"path", (ws_ / "inside.txt").c_str()}}));
  EXPECT_EQ(out.status, tool_status::succeeded) << out.content;
  EXPECT_TRUE(contains(out.content, "inside text"));
}

TEST_F(confinement, symlink_to_a_file_outside_is_refused_by_read_and_edit) {
  fs::create_symlink(outside_ / "secret.txt", ws_ / "leak.txt");
  expect_outside(call("read", args({{"path", "leak.txt"}})));
  expect_outside(call("edit", args({{"path", "leak.txt"}, {"old_string", "SECRET"}, {"new_string", "owned"}})));
  EXPECT_EQ(slurp(outside_ / "secret.txt"), "SECRET outside\n");
}

TEST_F(confinement, symlinked_directory_outside_is_refused_in_any_component) {
  fs::create_directory_symlink(outside_, ws_ / "escape");
  expect_outside(call("read", args({{"path", "escape/secret.txt"}})));
  expect_outside(call("list", args({{"path", "escape"}})));
  expect_outside(call("glob", args({{"pattern", "*"}, {"path", "escape"}})));
  expect_outside(call("grep", args({{"pattern", "SECRET"}, {"path", "escape"}})));
  expect_outside(call("write", args({{"path", "escape/new.txt"}, {"content", "x"}})));
  expect_outside(call("write", args({{"path", "escape/deeper/new.txt"}, {"content", "x"}})));
  EXPECT_FALSE(fs::exists(outside_ / "new.txt"));
  EXPECT_FALSE(fs::exists(outside_ / "deeper"));
}

TEST_F(confinement, write_through_a_dangling_symlink_pointing_outside_is_refused) {
  fs::create_symlink(outside_ / "created.txt", ws_ / "dangling");
  expect_outside(call("write", args({{"path", "dangling"}, {"content", "x"}})));
  EXPECT_FALSE(fs::exists(outside_ / "created.txt"));
  EXPECT_TRUE(fs::is_symlink(ws_ / "dangling"));
}

TEST_F(confinement, write_through_a_dangling_symlink_pointing_inside_creates_its_target) {
  fs::create_symlink("sub/target.txt", ws_ / "link");
  const auto out = call("write", args({{"path", "link"}, {"content", "hello"}}));
  ASSERT_EQ(out.status, tool_status::succeeded) << out.content;
  EXPECT_EQ(slurp(ws_ / "sub" / "target.txt"), "hello");
  EXPECT_TRUE(fs::is_symlink(ws_ / "link"));
}

TEST_F(confinement, symlinks_that_stay_inside_are_followed) {
  fs::create_directories(ws_ / "real");
  put("real/file.txt", "real content\n");
  fs::create_directory_symlink("real", ws_ / "alias");
  fs::create_symlink("real/file.txt", ws_ / "file_link");
  EXPECT_TRUE(contains(call("read", args({{"path", "alias/file.txt"}})).content, "real content"));
  EXPECT_TRUE(contains(call("read", args({{"path", "file_link"}})).content, "real content"));
  EXPECT_EQ(call("list", args({{"path", "alias"}})).content, "file.txt\n");
  const auto edited = call("edit", args({{"path", "file_link"}, {"old_string", "real"}, {"new_string", "edited"}}));
  EXPECT_EQ(edited.status, tool_status::succeeded) << edited.content;
  EXPECT_EQ(slurp(ws_ / "real" / "file.txt"), "edited content\n");
  EXPECT_TRUE(fs::is_symlink(ws_ / "file_link"));
}

TEST_F(confinement, a_symlink_whose_parent_walk_leaves_the_workspace_is_judged_by_where_it_lands) {
  // ws/deep -> ws/a/b; "deep/../.." is physical: ws/a/b -> ws/a -> ws, inside.
  fs::create_directories(ws_ / "a" / "b");
  fs::create_directory_symlink(ws_ / "a" / "b", ws_ / "deep");
  EXPECT_EQ(call("read", args({{"path", "deep/../../inside.txt"}})).status, tool_status::succeeded);
  expect_outside(call("read", args({{"path", "deep/../../../outside/secret.txt"}})));
}

TEST_F(confinement, glob_and_grep_walks_never_follow_symlinks_out_of_the_workspace) {
  fs::create_directory_symlink(outside_, ws_ / "escape");
  fs::create_symlink(outside_ / "secret.txt", ws_ / "leak.txt");
  const auto globbed = call("glob", args({{"pattern", "**/secret.txt"}}));
  EXPECT_FALSE(contains(globbed.content, "escape/secret.txt")) << globbed.content;
  const auto grepped = call("grep", args({{"pattern", "SECRET"}}));
  EXPECT_EQ(grepped.status, tool_status::succeeded);
  EXPECT_TRUE(contains(grepped.content, "no matches")) << grepped.content;
}

TEST_F(confinement, nul_bytes_and_invalid_utf8_in_paths_are_refused) {
  const auto nul = call("read", args({{"path", json::string(std::string_view("a\0b", 3))}}));
  EXPECT_EQ(nul.status, tool_status::failed);
  EXPECT_TRUE(contains(nul.content, "NUL byte")) << nul.content;
  const auto bad = call("write", args({{"path", json::string(std::string_view("bad\xff.txt"))}, {"content", "x"}}));
  EXPECT_EQ(bad.status, tool_status::failed);
  EXPECT_TRUE(contains(bad.content, "not valid UTF-8")) << bad.content;
}

TEST_F(confinement, a_file_used_as_a_directory_is_reported) {
  const auto out = call("write", args({{"path", "inside.txt/child.txt"}, {"content", "x"}}));
  EXPECT_EQ(out.status, tool_status::failed);
  EXPECT_TRUE(contains(out.content, "not a directory")) << out.content;
}

TEST_F(confinement, a_symlink_loop_is_reported) {
  fs::create_symlink("loop_b", ws_ / "loop_a");
  fs::create_symlink("loop_a", ws_ / "loop_b");
  const auto out = call("read", args({{"path", "loop_a"}}));
  EXPECT_EQ(out.status, tool_status::failed);
  EXPECT_TRUE(contains(out.content, "symbolic links")) << out.content;
}

}  // namespace
}  // namespace tether::runtime::native::test
