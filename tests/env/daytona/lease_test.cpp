// A Daytona lease (src/env/daytona/daytona.h) against the Daytona fake:
// found again by its key across stop and start, the workspace both ways, a
// command through `tether env-relay daytona` with its input, output and
// exit code, the journal and signals, a create that answered nothing, a
// sandbox lost behind the lease's back.
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "support/files.h"
#include "support/leases.h"

#include "env/daytona/api.h"
#include "env/daytona/daytona.h"
#include "env/tree.h"
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include "process/child.h"
#include "process/run_to_end.h"
#include "support/daytona/fake_daytona.h"

#ifndef TETHER_BINARY
#error "TETHER_BINARY must name the built tether binary (the relay)"
#endif

namespace tether::env::daytona {
namespace {

namespace fs = std::filesystem;
using test::put;
using test::slurp;
using test::temp_dir;
using namespace std::chrono_literals;

class DaytonaLease : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fake.start());
    daytona_options o;
    o.name = "test-daytona";
    o.api_url = fake.api_url();
    o.api_key = "fake-daytona-key";
    o.relay_program = TETHER_BINARY;
    auto e = make_environment(o);
    ASSERT_TRUE(e) << e.error().describe();
    env = std::move(*e);
  }
  std::unique_ptr<lease> acquire(const std::string& key, std::optional<std::string> previous = {}) {
    auto l = env->acquire({.key = key, .labels = {{"session", key}}, .previous = std::move(previous)});
    EXPECT_TRUE(l) << l.error().describe();
    return l ? std::move(*l) : nullptr;
  }

  test::daytona::fake_daytona fake;
  std::unique_ptr<environment> env;
};

TEST_F(DaytonaLease, OneSandboxPerKeyStoppedOnReleaseResumedOnTheNextAcquireReplacedAfterADelete) {
  auto first = acquire("session-a");
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->outcome(), lease_outcome::created);
  const auto name = provider_name("session-a");
  EXPECT_EQ(fake.state_of(name), "started");
  ASSERT_TRUE(env->release(*first, release_mode::stop));
  EXPECT_EQ(fake.state_of(name), "stopped");

  auto again = acquire("session-a");
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->outcome(), lease_outcome::resumed);
  EXPECT_EQ(again->provider_id(), first->provider_id());
  EXPECT_EQ(fake.state_of(name), "started");
  EXPECT_EQ(fake.sandboxes(), 1U);

  ASSERT_TRUE(env->release(*again, release_mode::destroy));
  auto replaced = acquire("session-a", first->provider_id());
  ASSERT_NE(replaced, nullptr);
  EXPECT_EQ(replaced->outcome(), lease_outcome::replaced);
  EXPECT_NE(replaced->provider_id(), first->provider_id());
}

TEST_F(DaytonaLease, TheWorkspaceGoesUpACommandChangesItAndTheChangesComeBack) {
  auto l = acquire("session-sync");
  ASSERT_NE(l, nullptr);
  temp_dir host;
  const auto ws = host.path / "ws";
  put(ws / "notes.txt", "T0\n");
  put(ws / "src/a.c", "int a;\n");
  auto sent = l->push(ws);
  ASSERT_TRUE(sent) << sent.error().describe();
  EXPECT_EQ(describe_tree(fake.sandbox_root(provider_name("session-sync")) / "home/daytona/workspace")->sha256,
            sent->sha256);

  auto done = test::run_in(*l, {"sh", "-c", "echo T1 >> notes.txt; rm src/a.c; echo out; echo err >&2; exit 6"});
  EXPECT_EQ(done.status.code, 6);
  EXPECT_NE(done.output.find("out\n"), std::string::npos) << done.output;
  EXPECT_NE(done.output.find("err\n"), std::string::npos) << done.output;
  auto back = l->pull(ws);
  ASSERT_TRUE(back) << back.error().describe();
  EXPECT_EQ(slurp(ws / "notes.txt"), "T0\nT1\n");
  EXPECT_FALSE(fs::exists(ws / "src/a.c"));
  EXPECT_EQ(back->sha256, describe_tree(ws)->sha256);
  EXPECT_EQ(std::distance(fs::directory_iterator(host.path), fs::directory_iterator()), 1);
  auto st = l->stat("notes.txt");
  ASSERT_TRUE(st);
  EXPECT_TRUE(st->exists);
  EXPECT_EQ(st->size, 6U);
}

// The sandbox's stamp of its workspace: the same while nothing there changes,
// another after a command changed it; a port there is not forwarded here.
TEST_F(DaytonaLease, TheWorkspacesStampStaysUntilACommandChangesIt) {
  auto l = acquire("session-stamp");
  ASSERT_NE(l, nullptr);
  auto first = l->stamp();
  ASSERT_TRUE(first) << first.error().describe();
  auto again = l->stamp();
  ASSERT_TRUE(again) << again.error().describe();
  EXPECT_EQ(*again, *first);
  auto done = test::run_in(*l, {"sh", "-c", "echo x > made.txt"});
  EXPECT_EQ(done.status.code, 0) << done.output;
  auto after = l->stamp();
  ASSERT_TRUE(after) << after.error().describe();
  EXPECT_NE(*after, *first);
  auto here = l->forward_here(8080);
  ASSERT_FALSE(here);
  EXPECT_EQ(here.error(), env_errc::invalid);
}

TEST_F(DaytonaLease, APullMakesNoDeviceNodeAndKeepsNoSetIdBit) {
  auto l = acquire("session-hostile");
  ASSERT_NE(l, nullptr);
  auto done = test::run_in(*l, {"sh", "-c", "echo run > tool && chmod 6755 tool && mkdir scratch && chmod 1777 scratch && mkfifo pipe"});
  ASSERT_EQ(done.status.code, 0) << done.output;
  const auto remote = fake.sandbox_root(provider_name("session-hostile")) / "home/daytona/workspace";
  ASSERT_EQ(::mknod((remote / "disk").c_str(), S_IFBLK | 0666, makedev(7, 0)), 0);
  temp_dir host;
  auto back = l->pull(host.path / "ws");
  ASSERT_TRUE(back) << back.error().describe();
  EXPECT_EQ(back->dropped, 2U);
  EXPECT_GE(back->cleared, 1U);  // scratch's sticky bit at least
  struct stat st {};
  ASSERT_EQ(::lstat((host.path / "ws/tool").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755U);
  ASSERT_EQ(::lstat((host.path / "ws/scratch").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0777U);
  EXPECT_FALSE(fs::exists(fs::symlink_status(host.path / "ws/disk")));
  EXPECT_FALSE(fs::exists(fs::symlink_status(host.path / "ws/pipe")));
  EXPECT_EQ(std::distance(fs::directory_iterator(host.path), fs::directory_iterator()), 1);
}

TEST_F(DaytonaLease, AFileIsPutWholeWithItsModeAndItsDirectoriesMade) {
  auto l = acquire("session-put");
  ASSERT_NE(l, nullptr);
  ASSERT_TRUE(l->put_file("deep/er/prompt.txt", "the prompt 'quoted' $HOME\n", 0640));
  const auto there =
      fake.sandbox_root(provider_name("session-put")) / "home/daytona/workspace/deep/er/prompt.txt";
  EXPECT_EQ(slurp(there), "the prompt 'quoted' $HOME\n");
  struct stat st {};
  ASSERT_EQ(::stat(there.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640U);
  EXPECT_FALSE(fs::exists(there.string() + ".put"));
}

TEST_F(DaytonaLease, APortIsReachedAtReachHostAndWithoutOneTheReasonIsSaid) {
  auto l = acquire("session-port");
  ASSERT_NE(l, nullptr);
  auto none = l->forward_port("127.0.0.1", 4000);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error(), env_errc::invalid);
  EXPECT_NE(none.error().message.find("reach_host"), std::string::npos);
  daytona_options o;
  o.name = "reachable";
  o.api_url = fake.api_url();
  o.api_key = "fake-daytona-key";
  o.relay_program = TETHER_BINARY;
  o.reach_host = "127.0.0.1";
  auto e = make_environment(o);
  ASSERT_TRUE(e);
  auto again = (*e)->acquire({.key = "session-port"});
  ASSERT_TRUE(again) << again.error().describe();
  auto there = (*again)->forward_port("127.0.0.1", fake.port());
  ASSERT_TRUE(there) << there.error().describe();
  EXPECT_EQ(*there, "127.0.0.1:" + std::to_string(fake.port()));
  // The sandbox reaches it: the fake's own API answers from inside.
  auto done = test::run_in(**again, {"perl", "-MIO::Socket::INET", "-e",
                                     "my $s = IO::Socket::INET->new(PeerAddr => $ARGV[0]) or die $!; "
                                     "print $s \"GET /api/health HTTP/1.0\\r\\n\\r\\n\"; my $l = <$s>; print $l;",
                                     *there});
  EXPECT_EQ(done.output.rfind("HTTP/1.", 0), 0U) << done.output;
}

TEST_F(DaytonaLease, ARelayedCommandGetsItsInputAndTheJournalKnowsItsEnd) {
  auto l = acquire("session-io");
  ASSERT_NE(l, nullptr);
  boost::asio::io_context io;
  auto c = process::child::start(io.get_executor(), {.argv = {"sh", "-c", "read x; echo \"got $x\"; exit 2"},
                                                     .stdin_mode = process::input::pipe},
                                 l->spawner());
  ASSERT_TRUE(c) << c.error().describe();
  const auto id = l->command_id((*c)->pid());
  ASSERT_TRUE(id);
  std::string line;
  process::exit_status status;
  boost::asio::co_spawn(
      io,
      [&]() -> boost::asio::awaitable<void> {
        co_await (*c)->write("hello\n");
        auto got = co_await (*c)->read_line(process::stream::out);
        if (got && *got) line = **got;
        status = co_await (*c)->wait();
      },
      boost::asio::detached);
  io.run();
  EXPECT_EQ(line, "got hello");
  EXPECT_EQ(status.code, 2);
  EXPECT_EQ(test::await_command(*l, *id, command_record::state::exited).exit_code, 2);
}

TEST_F(DaytonaLease, ASignalEndsTheCommandInTheSandbox) {
  auto l = acquire("session-signal");
  ASSERT_NE(l, nullptr);
  auto s = l->spawner().spawn({.argv = {"sleep", "300"}, .stdout_mode = process::output::null,
                               .stderr_mode = process::output::null});
  ASSERT_TRUE(s) << s.error().describe();
  const auto id = *l->command_id(s->pid);
  EXPECT_EQ(test::await_command(*l, id, command_record::state::running).program, "sleep");
  ASSERT_TRUE(l->signal(id, SIGTERM));
  EXPECT_EQ(process::reap(s->release()).code, 143);
  EXPECT_EQ(test::await_command(*l, id, command_record::state::exited).exit_code, 143);
  EXPECT_EQ(l->signal("c-unknown", SIGTERM).error(), env_errc::not_found);
}

TEST_F(DaytonaLease, ACreateThatAnsweredNothingIsAdoptedNotMadeTwice) {
  fake.set_faults({.create_silently = true});
  auto l = acquire("session-silent");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->outcome(), lease_outcome::created);
  EXPECT_EQ(fake.sandboxes(), 1U);
}

TEST_F(DaytonaLease, ASandboxGoneBehindTheLeasesBackIsLostAndTheHostCopyStays) {
  auto l = acquire("session-gone");
  ASSERT_NE(l, nullptr);
  temp_dir host;
  put(host.path / "ws/keep.txt", "mine\n");
  ASSERT_TRUE(l->push(host.path / "ws"));
  const auto before = describe_tree(host.path / "ws")->sha256;
  api a({.api_url = fake.api_url(), .api_key = "fake-daytona-key"});
  ASSERT_TRUE(a.stop(provider_name("session-gone")));
  auto back = l->pull(host.path / "ws");
  ASSERT_FALSE(back);
  EXPECT_EQ(back.error(), env_errc::lost) << back.error().describe();
  EXPECT_EQ(describe_tree(host.path / "ws")->sha256, before);
  EXPECT_EQ(l->check().error(), env_errc::lost);
}

}  // namespace
}  // namespace tether::env::daytona
