// node/snapshots.h against the real git: a workspace taken after a turn and
// restored into a fork's, its own repository included, and what is refused.
#include "node/snapshots.h"

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <future>

#include <gtest/gtest.h>

#include "session/errors.h"
#include "support/files.h"

namespace tether::node {
namespace {

namespace fs = std::filesystem;

using test::put;
using test::slurp;
// git in a test's own repository (never the snapshots' environment).
std::string git_in(const fs::path& dir, const std::string& args) {
  const std::string cmd = "cd '" + dir.string() + "' && GIT_CONFIG_NOSYSTEM=1 HOME=/nonexistent git -c user.name=t -c "
                          "user.email=t@t " + args + " 2>&1";
  std::string out;
  if (FILE* f = ::popen(cmd.c_str(), "r")) {
    char buf[256];
    while (std::fgets(buf, sizeof buf, f) != nullptr) out += buf;
    ::pclose(f);
  }
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

class Snapshots : public ::testing::Test {
 protected:
  void SetUp() override { fs::create_directories(ws); }

  test::temp_dir dir{"tether-snapshots"};
  fs::path root = dir.path;
  fs::path data = root / "data";
  session_id source = session_id::generate();
  session_id fork = session_id::generate();
  fs::path ws = data / "workspaces" / source.str();
};

TEST_F(Snapshots, a_fork_gets_the_workspace_of_the_turn_it_names_not_a_later_one) {
  git_snapshots snaps(data);
  put(ws / "notes.txt", "one");
  put(ws / "src" / "deep" / "a.c", "int a;");
  put(ws / "run.sh", "#!/bin/sh\n");
  fs::permissions(ws / "run.sh", fs::perms::owner_all);
  fs::create_symlink("/etc/passwd", ws / "link");
  const auto first = execution_id::generate();
  ASSERT_TRUE(snaps.take(source, first, ws));
  put(ws / "notes.txt", "two");
  fs::remove(ws / "src" / "deep" / "a.c");
  put(ws / "added.txt", "later");
  ASSERT_TRUE(snaps.take(source, execution_id::generate(), ws));

  auto made = snaps.restore_now(source, first, fork);
  ASSERT_TRUE(made) << made.error().message;
  const fs::path f = snaps.workspace(fork);
  EXPECT_EQ(slurp(f / "notes.txt"), "one");
  EXPECT_EQ(slurp(f / "src" / "deep" / "a.c"), "int a;");
  EXPECT_FALSE(fs::exists(f / "added.txt"));
  EXPECT_NE(fs::status(f / "run.sh").permissions() & fs::perms::owner_exec, fs::perms::none);
  ASSERT_TRUE(fs::is_symlink(f / "link"));  // a link stays a link; nothing is read through it
  EXPECT_EQ(fs::read_symlink(f / "link"), "/etc/passwd");
  // The source's workspace is as the last turn left it.
  EXPECT_EQ(slurp(ws / "notes.txt"), "two");
  // The fork's own next snapshot works from its repository.
  put(f / "notes.txt", "fork's");
  ASSERT_TRUE(snaps.take(fork, execution_id::generate(), f));
}

TEST_F(Snapshots, the_workspace_repository_comes_whole_with_uncommitted_changes_on_top) {
  git_snapshots snaps(data);
  put(ws / "tracked.txt", "committed");
  git_in(ws, "init -q . && git add tracked.txt && git -c user.name=t -c user.email=t@t commit -qm first");
  const auto head = git_in(ws, "rev-parse HEAD");
  ASSERT_EQ(head.size(), 40u) << head;
  put(ws / "tracked.txt", "changed, not committed");
  put(ws / ".gitignore", "build/\n");
  put(ws / "build" / "out.o", "ignored");
  const auto x = execution_id::generate();
  ASSERT_TRUE(snaps.take(source, x, ws));
  ASSERT_TRUE(snaps.restore_now(source, x, fork));
  const fs::path f = snaps.workspace(fork);
  EXPECT_EQ(git_in(f, "rev-parse HEAD"), head);
  EXPECT_EQ(slurp(f / "tracked.txt"), "changed, not committed");
  EXPECT_EQ(git_in(f, "status --porcelain -- tracked.txt"), " M tracked.txt");
  EXPECT_FALSE(fs::exists(f / "build" / "out.o"));  // ignored by the workspace's own .gitignore
}

TEST_F(Snapshots, nothing_the_agent_wrote_into_its_repository_configuration_runs) {
  git_snapshots snaps(data);
  git_in(ws, "init -q .");
  const fs::path marker = root / "ran";
  // Both would run a command under a git that read this configuration.
  std::ofstream(ws / ".git" / "config", std::ios::app)
      << "[core]\n\tfsmonitor = touch " << marker.string() << "\n[filter \"x\"]\n\tclean = touch " << marker.string()
      << "\n";
  put(ws / ".gitattributes", "* filter=x\n");
  put(ws / "a.txt", "a");
  const auto x = execution_id::generate();
  ASSERT_TRUE(snaps.take(source, x, ws));
  ASSERT_TRUE(snaps.restore_now(source, x, fork));
  EXPECT_FALSE(fs::exists(marker));
  EXPECT_EQ(slurp(snaps.workspace(fork) / "a.txt"), "a");
}

TEST_F(Snapshots, refuses_what_it_cannot_give_with_the_reason) {
  git_snapshots snaps(data);
  auto none = snaps.restore_now(source, execution_id::generate(), fork);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error(), session::session_errc::cannot_fork);
  EXPECT_NE(none.error().message.find("no snapshot"), std::string::npos) << none.error().message;

  put(ws / "a.txt", "a");
  const auto x = execution_id::generate();
  ASSERT_TRUE(snaps.take(source, x, ws));
  auto other = snaps.restore_now(source, execution_id::generate(), fork);
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error(), session::session_errc::cannot_fork);

  put(snaps.workspace(fork) / "mine.txt", "in use");
  auto busy = snaps.restore_now(source, x, fork);
  ASSERT_FALSE(busy);
  EXPECT_EQ(busy.error(), session::session_errc::cannot_fork);
  EXPECT_EQ(slurp(snaps.workspace(fork) / "mine.txt"), "in use");  // untouched

  git_snapshots small(data, snapshot_budget{.bytes = 4, .entries = 100});
  put(ws / "big.txt", "more than four bytes");
  auto over = small.take(source, execution_id::generate(), ws);
  ASSERT_FALSE(over);
  EXPECT_NE(over.error().message.find("budget"), std::string::npos) << over.error().message;
}

// A turn's snapshot is taken after its end is recorded: a fork of that
// turn arriving meanwhile waits for it rather than finding none.
TEST_F(Snapshots, a_restore_waits_for_the_snapshot_still_being_taken) {
  git_snapshots snaps(data);
  put(ws / "a.txt", "taken late");
  const auto x = execution_id::generate();
  snaps.begin(source);
  EXPECT_TRUE(snaps.pending(source));
  auto forked = std::async(std::launch::async, [&] { return snaps.restore_now(source, x, fork); });
  ASSERT_TRUE(snaps.take(source, x, ws));
  snaps.end(source);
  auto made = forked.get();
  ASSERT_TRUE(made) << made.error().message;
  EXPECT_EQ(slurp(snaps.workspace(fork) / "a.txt"), "taken late");
  EXPECT_FALSE(snaps.pending(source));
  snaps.wait_taken(source);  // nothing pending: returns at once
}

TEST_F(Snapshots, discard_removes_what_a_restore_made) {
  git_snapshots snaps(data);
  put(ws / "a.txt", "a");
  const auto x = execution_id::generate();
  ASSERT_TRUE(snaps.take(source, x, ws));
  ASSERT_TRUE(snaps.restore_now(source, x, fork));
  snaps.discard_now(fork);
  EXPECT_FALSE(fs::exists(snaps.workspace(fork)));
  EXPECT_FALSE(fs::exists(snaps.repository(fork)));
  EXPECT_TRUE(fs::exists(snaps.repository(source)));
}

}  // namespace
}  // namespace tether::node
