// An agent can write its own home: the server's preparation of that home
// and the private config it writes there must never follow a link the
// agent planted, whatever it points at (another session's workspace).
#include "runtime/agent/agent_env.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "runtime/agent/agent_test_support.h"
#include "runtime/agent/json_lines.h"

namespace tether::runtime::agent {
namespace {

namespace fs = std::filesystem;

class agent_home : public testing::Test {
 protected:
  agent_home() : data_(dir_.path() / "data"), victim_(dir_.path() / "other-workspace") {
    fs::create_directories(victim_);
    fs::permissions(victim_, fs::perms(0755), fs::perm_options::replace);
  }
  [[nodiscard]] unsigned mode(const fs::path& p) const {
    struct stat st {};
    EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
    return st.st_mode & 07777U;
  }

  test::temp_dir dir_;
  fs::path data_;
  fs::path victim_;
  const session_id session_ = session_id::parse("ses_01J0000000000000000000HOME").value();
};

TEST_F(agent_home, preparing_a_home_makes_its_directories_private) {
  auto d = prepare_dirs(data_, session_, (dir_.path() / "ws").string());
  ASSERT_TRUE(d) << d.error().describe();
  for (const auto* sub : {"", ".config", ".local/share", ".local/state", ".cache", "tmp"})
    EXPECT_EQ(mode(d->home / sub), 0700U) << sub;
  ASSERT_TRUE(write_private_file(d->home, ".codex/config.toml", "model = \"x\"\n"));
  EXPECT_EQ(mode(d->home / ".codex"), 0700U);
  EXPECT_EQ(mode(d->home / ".codex" / "config.toml"), 0600U);
  std::ifstream in(d->home / ".codex" / "config.toml");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "model = \"x\"\n");
}

TEST_F(agent_home, a_link_planted_in_the_home_is_refused_and_its_target_left_alone) {
  auto first = prepare_dirs(data_, session_, (dir_.path() / "ws").string());
  ASSERT_TRUE(first) << first.error().describe();
  const auto home = first->home;
  fs::remove_all(home / ".cache");
  fs::create_directory_symlink(victim_, home / ".cache");
  auto again = prepare_dirs(data_, session_, (dir_.path() / "ws").string());
  EXPECT_FALSE(again) << "a home whose .cache is a link was prepared";
  EXPECT_EQ(mode(victim_), 0755U) << "the link's target was made private";

  fs::create_directory_symlink(victim_, home / ".codex");
  auto w = write_private_file(home, ".codex/config.toml", "approval_policy = \"never\"\n");
  EXPECT_FALSE(w) << "the config was written through the link";
  EXPECT_FALSE(fs::exists(victim_ / "config.toml"));
  EXPECT_EQ(mode(victim_), 0755U);

  // A link at the file itself is replaced, never written through.
  std::ofstream(victim_ / "config.toml") << "theirs";
  fs::create_symlink(victim_ / "config.toml", home / "opencode.json");
  ASSERT_TRUE(write_private_file(home, "opencode.json", "{}"));
  std::ifstream in(victim_ / "config.toml");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "theirs");
  EXPECT_FALSE(fs::is_symlink(home / "opencode.json"));
}

}  // namespace
}  // namespace tether::runtime::agent
