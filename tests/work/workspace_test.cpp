// prepare_workspace against real git: repositories the test makes (a bare
// one to clone, a non-bare one for worktrees) in a scratch directory.
#include "work/workspace.h"

#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <iterator>

#include <gtest/gtest.h>

#include "process/run_to_end.h"
#include "work/errors.h"

namespace tether::work {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> test_env() {
  const char* path = std::getenv("PATH");
  return {std::string("PATH=") + (path != nullptr ? path : "/usr/bin:/bin"), "HOME=/nonexistent",
          "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t",
          "GIT_COMMITTER_EMAIL=t@t"};
}

// Runs `sh -c script` in `dir`; its output. Fails the test when it fails.
std::string sh(const fs::path& dir, const std::string& script) {
  process::spawn_options o;
  o.argv = {"/bin/sh", "-c", script};
  o.env = test_env();
  o.cwd = dir;
  auto done = process::run_to_end(std::move(o), {.limit = std::chrono::seconds(60)});
  EXPECT_TRUE(done && done->status.success()) << script << ": " << (done ? done->output : done.error().message);
  return done ? done->output : "";
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class Workspace : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/tether-work-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    root_ = pattern;
    // api.git: bare, branches main and dev (dev has its own file); web: a
    // working repository on main with a feature branch.
    sh(root_, "git init -q -b main src-api && cd src-api && echo api > README && git add README && "
              "git commit -q -m one && git checkout -q -b dev && echo dev > DEV && git add DEV && "
              "git commit -q -m two && git checkout -q main && cd .. && git clone -q --bare src-api api.git");
    sh(root_, "git init -q -b main web && cd web && echo web > INDEX && git add INDEX && git commit -q -m one && "
              "git branch feature");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  [[nodiscard]] workspace_spec spec() const {
    workspace_spec s;
    s.repositories = {{"api", (root_ / "api.git").string(), "dev"}, {"web", (root_ / "web").string(), ""}};
    s.env = test_env();
    return s;
  }
  fs::path root_;
};

std::string branch_of(const fs::path& checkout) { return sh(checkout, "git rev-parse --abbrev-ref HEAD"); }

TEST_F(Workspace, CreateChecksOutEveryRepositoryOnItsBranchThenRunsSetup) {
  auto s = spec();
  s.setup = {"echo ran >> setup.log", "test -f api/DEV"};
  const auto dir = root_ / "ws";
  auto r = prepare_workspace(s, dir, workspace_decision::create);
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_EQ(r->done, workspace_decision::create);
  EXPECT_EQ(branch_of(dir / "api"), "dev\n");
  EXPECT_EQ(branch_of(dir / "web"), "main\n");
  EXPECT_EQ(read(dir / "api" / "DEV"), "dev\n");
  EXPECT_EQ(read(dir / "setup.log"), "ran\n");
  EXPECT_EQ(fs::status(dir).permissions() & fs::perms::all, fs::perms::owner_all);
  ASSERT_EQ(r->steps.size(), 4u);
  EXPECT_EQ(r->steps[0], "cloned api from " + (root_ / "api.git").string() + " (dev)");
  EXPECT_EQ(r->steps[3], "ran: test -f api/DEV");
}

TEST_F(Workspace, ReuseTouchesNothingRefreshRerunsSetupReplaceStartsOver) {
  auto s = spec();
  s.setup = {"echo ran >> setup.log"};
  const auto dir = root_ / "ws";
  ASSERT_TRUE(prepare_workspace(s, dir, workspace_decision::create));
  std::ofstream(dir / "api" / "work-in-progress") << "keep me";

  auto reused = prepare_workspace(s, dir, workspace_decision::reuse);
  ASSERT_TRUE(reused) << reused.error().describe();
  EXPECT_EQ(reused->done, workspace_decision::reuse);
  EXPECT_EQ(read(dir / "setup.log"), "ran\n");
  EXPECT_TRUE(fs::exists(dir / "api" / "work-in-progress"));

  auto refreshed = prepare_workspace(s, dir, workspace_decision::refresh);
  ASSERT_TRUE(refreshed) << refreshed.error().describe();
  EXPECT_EQ(refreshed->done, workspace_decision::refresh);
  EXPECT_EQ(read(dir / "setup.log"), "ran\nran\n");
  EXPECT_TRUE(fs::exists(dir / "api" / "work-in-progress"));

  s.repositories[0].branch = "main";  // the repositories changed
  auto replaced = prepare_workspace(s, dir, workspace_decision::replace);
  ASSERT_TRUE(replaced) << replaced.error().describe();
  EXPECT_EQ(replaced->done, workspace_decision::replace);
  EXPECT_FALSE(fs::exists(dir / "api" / "work-in-progress"));
  EXPECT_EQ(branch_of(dir / "api"), "main\n");
  EXPECT_FALSE(fs::exists(dir / "api" / "DEV"));
  EXPECT_EQ(read(dir / "setup.log"), "ran\n");
}

TEST_F(Workspace, AMissingWorkspaceIsCreatedEvenWhenItWouldBeReused) {
  const auto dir = root_ / "gone";
  auto r = prepare_workspace(spec(), dir, workspace_decision::reuse);
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_EQ(r->done, workspace_decision::create);
  EXPECT_EQ(r->steps.front(), "the workspace was missing: created it again");
  EXPECT_TRUE(fs::exists(dir / "web" / "INDEX"));
}

TEST_F(Workspace, WorktreesOfALocalRepositoryAreOnTheirBranchAndPrunedOnReplace) {
  auto s = spec();
  s.strategy = checkout_strategy::worktree;
  s.repositories = {{"web", (root_ / "web").string(), "feature"}, {"api", (root_ / "api.git").string(), "dev"}};
  const auto dir = root_ / "ws";
  auto r = prepare_workspace(s, dir, workspace_decision::create);
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_EQ(branch_of(dir / "web"), "feature\n");
  EXPECT_TRUE(fs::is_regular_file(dir / "web" / ".git")) << "a worktree has a .git file, a clone a directory";
  EXPECT_TRUE(fs::is_directory(dir / "api" / ".git")) << "a bare repository is cloned";
  EXPECT_NE(sh(root_ / "web", "git worktree list").find((dir / "web").string()), std::string::npos);

  ASSERT_TRUE(prepare_workspace(s, dir, workspace_decision::replace));
  EXPECT_EQ(branch_of(dir / "web"), "feature\n");
  // One worktree besides the repository's own: the old one was pruned.
  const auto list = sh(root_ / "web", "git worktree list");
  EXPECT_EQ(std::count(list.begin(), list.end(), '\n'), 2) << list;

  // The branch checked out in the repository itself: the worktree is detached at its commit.
  s.repositories = {{"web", (root_ / "web").string(), "main"}};
  const auto other = root_ / "ws2";
  auto detached = prepare_workspace(s, other, workspace_decision::create);
  ASSERT_TRUE(detached) << detached.error().describe();
  EXPECT_EQ(branch_of(other / "web"), "HEAD\n");
  EXPECT_NE(detached->steps.front().find("detached"), std::string::npos) << detached->steps.front();
}

TEST_F(Workspace, HostileSpecsAreRefusedBeforeAnythingRuns) {
  const auto dir = root_ / "ws";
  auto refused = [&](workspace_spec s, std::string_view says) {
    auto r = prepare_workspace(s, dir, workspace_decision::create);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), work_errc::invalid_spec);
    EXPECT_NE(r.error().message.find(says), std::string::npos) << r.error().message;
    EXPECT_FALSE(fs::exists(dir));
  };
  for (const char* name : {"..", ".", "a/b", "", "../escape"}) {
    auto s = spec();
    s.repositories[0].name = name;
    refused(s, "not one path component");
  }
  auto twice = spec();
  twice.repositories[1].name = "api";
  refused(twice, "two repositories are named \"api\"");
  auto option = spec();
  option.repositories[0].url = "--upload-pack=touch /tmp/pwned";
  refused(option, "cannot start with '-'");
  auto branch = spec();
  branch.repositories[0].branch = "--orphan";
  refused(branch, "is not a branch name");
  auto empty = spec();
  empty.setup = {"  "};
  refused(empty, "an empty setup command");
}

// Even where the user's git configuration allows the ext:: helper (as this
// environment does: without Tether's GIT_ALLOW_PROTOCOL the command runs).
TEST_F(Workspace, ARemoteHelperUrlCannotRunACommand) {
  auto s = spec();
  for (const char* kv : {"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=protocol.ext.allow", "GIT_CONFIG_VALUE_0=always"})
    s.env.emplace_back(kv);
  const auto marker = root_ / "helper-ran";
  s.repositories = {{"evil", "ext::sh -c touch% " + marker.string(), ""}};
  auto r = prepare_workspace(s, root_ / "ws", workspace_decision::create);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), work_errc::checkout_failed);
  EXPECT_NE(r.error().message.find("clone of evil failed"), std::string::npos) << r.error().message;
  EXPECT_FALSE(fs::exists(marker)) << "the ext:: helper ran";
}

TEST_F(Workspace, FailuresNameTheRepositoryOrTheCommand) {
  auto missing = spec();
  missing.repositories[0].url = (root_ / "nope.git").string();
  auto r = prepare_workspace(missing, root_ / "a", workspace_decision::create);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), work_errc::checkout_failed);
  EXPECT_NE(r.error().message.find("clone of api failed"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("nope.git"), std::string::npos) << r.error().message;

  auto failing = spec();
  failing.setup = {"echo first", "echo broken >&2; exit 3", "touch never"};
  auto f = prepare_workspace(failing, root_ / "b", workspace_decision::create);
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error(), work_errc::command_failed);
  EXPECT_NE(f.error().message.find("exit code 3"), std::string::npos) << f.error().message;
  EXPECT_NE(f.error().message.find("broken"), std::string::npos) << f.error().message;
  EXPECT_FALSE(fs::exists(root_ / "b" / "never"));

  auto slow = spec();
  slow.setup = {"sleep 30"};
  slow.command_limit = std::chrono::milliseconds(300);
  auto t = prepare_workspace(slow, root_ / "c", workspace_decision::create);
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message.find("did not finish within 300 ms"), std::string::npos) << t.error().message;

  fs::create_directories(root_ / "full");
  std::ofstream(root_ / "full" / "x") << "x";
  auto occupied = prepare_workspace(spec(), root_ / "full", workspace_decision::create);
  ASSERT_FALSE(occupied);
  EXPECT_EQ(occupied.error(), work_errc::not_empty);
}

}  // namespace
}  // namespace tether::work
