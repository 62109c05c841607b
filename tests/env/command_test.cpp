// The remote side of an SSH lease as shell text, run here through the same
// /bin/sh the remote's login shell would be: quoting, the journaled command
// line, the journal listing.
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

#include "support/files.h"

#include "env/environment.h"
#include "env/errors.h"
#include "env/ssh/command.h"
#include "process/run_to_end.h"
#include "process/spawn.h"

namespace tether::env::ssh {
namespace {

namespace fs = std::filesystem;
using test::put;
using test::slurp;
using test::temp_dir;

process::finished sh(const std::string& line) {
  auto done = process::run_to_end({.argv = {"/bin/sh", "-c", line}, .env = {"PATH=/usr/bin:/bin"}});
  EXPECT_TRUE(done);
  return done ? *done : process::finished{};
}

TEST(SshCommand, AQuotedWordReachesTheProgramAsItWas) {
  for (const std::string s : {"plain", "", "it's", "'", "''", "a b\tc", "$(touch /tmp/x)", "`id`", "\\n\n;|&", "*?[a]",
                              "--", "-e", "\xe2\x9c\x93 utf-8"}) {
    auto done = sh("printf '%s' " + quote(s));
    EXPECT_EQ(done.output, s) << quote(s);
  }
}

TEST(SshCommand, RemoteCommandRefusesWhatItCannotSaySafely) {
  const remote_spec ok{.journal = "/j", .id = "c1", .cwd = "/w", .env = {"A=1"}, .argv = {"true"}};
  EXPECT_TRUE(remote_command(ok));
  auto bad = ok;
  bad.argv.clear();
  EXPECT_EQ(remote_command(bad).error(), env_errc::invalid);
  bad = ok;
  bad.argv = {"X=1"};
  EXPECT_EQ(remote_command(bad).error(), env_errc::invalid);
  bad = ok;
  bad.id = "../x";
  EXPECT_EQ(remote_command(bad).error(), env_errc::invalid);
  bad = ok;
  bad.env = {"NOEQUALS"};
  EXPECT_EQ(remote_command(bad).error(), env_errc::invalid);
  bad = ok;
  bad.env = {"A B=1"};
  EXPECT_EQ(remote_command(bad).error(), env_errc::invalid);
}

TEST(SshCommand, TheCommandRunsExactlyItsArgvInExactlyItsEnvironmentAndItsExitIsJournaled) {
  temp_dir t;
  fs::create_directories(t.path / "work dir");
  const std::string hostile = "a'b $(echo no) \"c\"";
  auto line = remote_command({.journal = t.path.string(), .id = "c0001-ab",
                              .cwd = (t.path / "work dir").string(),
                              .env = {"PATH=/usr/bin:/bin", "ONLY=" + hostile},
                              .argv = {"sh", "-c", "env | sort; pwd; printf '%s\\n' \"$1\"; exit 7", "sh", hostile}});
  ASSERT_TRUE(line) << line.error().describe();
  auto done = sh(*line);
  EXPECT_EQ(done.status.code, 7);
  // env(1) -i: nothing but the two variables and the command's id (sh adds PWD itself).
  EXPECT_EQ(done.output, "ONLY=" + hostile + "\nPATH=/usr/bin:/bin\nPWD=" + (t.path / "work dir").string() +
                             "\nTETHER_COMMAND_ID=c0001-ab\n" +
                             (t.path / "work dir").string() + "\n" + hostile + "\n");
  EXPECT_EQ(slurp(t.path / "c0001-ab.exit"), "7\n");
  EXPECT_NE(slurp(t.path / "c0001-ab.pid").find(" sh\n"), std::string::npos);
}

TEST(SshCommand, AMissingWorkingDirectoryIsExit126AndJournaled) {
  temp_dir t;
  auto line = remote_command({.journal = t.path.string(), .id = "c2", .cwd = (t.path / "gone").string(),
                              .env = {}, .argv = {"true"}});
  ASSERT_TRUE(line);
  EXPECT_EQ(sh(*line).status.code, 126);
  EXPECT_EQ(slurp(t.path / "c2.exit"), "126\n");
}

TEST(SshCommand, TheJournalListsEachCommandAsExitedRunningOrIndeterminate) {
  temp_dir t;
  std::ofstream(t.path / "c1.pid") << "999999999 first\n";
  std::ofstream(t.path / "c1.exit") << "3\n";
  std::ofstream(t.path / "c2.pid") << ::getpid() << " still going\n";  // alive: this test
  std::ofstream(t.path / "c3.pid") << "999999998 vanished\n";          // no such process, no exit
  auto done = sh(journal_listing(t.path.string()));
  EXPECT_EQ(done.output, "c1 exited 3 first\nc2 running - still going\nc3 indeterminate - vanished\n");
  EXPECT_EQ(sh(journal_listing((t.path / "none").string())).output, "");
}

// An agent's tool may start its program in a session of its own: the
// signal reaches it all the same.
TEST(SshCommand, ASignalReachesEveryDescendantWhateverItsSession) {
  temp_dir t;
  auto line = remote_command({.journal = t.path.string(), .id = "c-tree", .cwd = t.path.string(),
                              .env = {"PATH=/usr/bin:/bin"},
                              .argv = {"sh", "-c", "setsid sh -c 'echo $$ > inner; exec sleep 300' & "
                                                   "sleep 300 & echo $! > outer; wait"}});
  ASSERT_TRUE(line) << line.error().describe();
  auto child = process::system_spawner().spawn({.argv = {"/bin/sh", "-c", *line}, .env = {"PATH=/usr/bin:/bin"},
                                                .stdout_mode = process::output::null,
                                                .stderr_mode = process::output::null});
  ASSERT_TRUE(child) << child.error().describe();
  for (int i = 0; i < 500 && (slurp(t.path / "inner").empty() || slurp(t.path / "outer").empty()); ++i)
    ::usleep(10'000);
  const pid_t inner = std::stoi(slurp(t.path / "inner"));
  const pid_t outer = std::stoi(slurp(t.path / "outer"));
  ASSERT_EQ(::kill(inner, 0), 0);
  ASSERT_NE(::getsid(inner), ::getsid(outer));  // another session: no group kill reaches it
  auto kill = signal_command(t.path.string(), "c-tree", SIGKILL);
  ASSERT_TRUE(kill);
  EXPECT_EQ(sh(*kill).output, "tether:sent\n");
  (void)process::reap(child->release());  // the journaled shell ended (its group got the signal)
  // SIGKILL takes effect when each is next scheduled: until then it still runs. Then it is gone, or a zombie (an
  // empty command line) until init reaps it.
  const auto alive = [](pid_t p) { return !slurp("/proc/" + std::to_string(p) + "/cmdline").empty(); };
  for (int i = 0; i < 500 && (alive(inner) || alive(outer)); ++i) ::usleep(10'000);
  EXPECT_EQ(slurp("/proc/" + std::to_string(inner) + "/cmdline"), "");
  EXPECT_EQ(slurp("/proc/" + std::to_string(outer) + "/cmdline"), "");
}

TEST(EnvironmentSeam, AProviderNameIsFoundAgainFromItsKeyAndNeverShared) {
  EXPECT_EQ(provider_name("session-01J9"), provider_name("session-01J9"));
  EXPECT_NE(provider_name("session-01J9"), provider_name("session-01j9"));  // same letters, another key
  const auto n = provider_name("task/../../etc passwd " + std::string(200, 'x'));
  EXPECT_EQ(n.rfind("tether-", 0), 0U);
  EXPECT_LE(n.size(), 7U + 40U + 1U + 8U);
  EXPECT_EQ(n.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-"), std::string::npos) << n;
}

}  // namespace
}  // namespace tether::env::ssh
