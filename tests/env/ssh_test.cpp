// The SSH environment against a real sshd (tests/support/sshd.h): leases
// found again by key, workspace sync both ways, the command journal, and
// the faults — a wrong host key, a full remote disk, a lost lease, sshd
// killed mid-command, a cut connection.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "support/files.h"
#include "support/leases.h"

#include "env/errors.h"
#include "env/ssh/ssh.h"
#include "env/tree.h"
#include "process/run_to_end.h"
#include "support/sshd.h"

namespace tether::env {
namespace {

namespace fs = std::filesystem;
using test::put;
using test::slurp;
using test::temp_dir;
using namespace std::chrono_literals;

class SshEnvironment : public ::testing::Test {
 protected:
  void start(test::sshd_options o = {}) {
    auto s = test::sshd::start(o);
    ASSERT_TRUE(s) << s.error().describe();
    server = std::move(*s);
  }
  std::unique_ptr<environment> make(ssh::ssh_options o) {
    auto e = ssh::make_environment(std::move(o));
    EXPECT_TRUE(e) << e.error().describe();
    return e ? std::move(*e) : nullptr;
  }
  std::unique_ptr<lease> acquire(environment& e, const std::string& key) {
    auto l = e.acquire({.key = key, .labels = {{"session", key}}});
    EXPECT_TRUE(l) << l.error().describe() << "\n" << server->log();
    return l ? std::move(*l) : nullptr;
  }
  void TearDown() override {
    for (auto& [e, l] : held) {
      if (e != nullptr && l != nullptr) (void)e->release(*l, release_mode::stop);
    }
  }

  std::unique_ptr<test::sshd> server;
  std::vector<std::pair<environment*, lease*>> held;
};

TEST_F(SshEnvironment, ALeaseIsCreatedOnceAndFoundAgainByItsKey) {
  start();
  auto e = make(server->options());
  auto first = acquire(*e, "session-a1");
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->outcome(), lease_outcome::created);
  EXPECT_EQ(first->workspace(), "/home/agent/leases/" + provider_name("session-a1") + "/workspace");
  EXPECT_TRUE(fs::is_directory(server->host_path(first->workspace())));
  ASSERT_TRUE(e->release(*first, release_mode::stop));

  auto again = acquire(*e, "session-a1");
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->outcome(), lease_outcome::resumed);
  EXPECT_EQ(again->provider_id(), first->provider_id());
  auto other = acquire(*e, "session-b2");
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->outcome(), lease_outcome::created);
  EXPECT_NE(other->provider_id(), first->provider_id());
  EXPECT_NE(slurp(server->host_path("/home/agent/leases/" + provider_name("session-b2") + "/.tether/labels"))
                .find("session=session-b2"),
            std::string::npos);

  ASSERT_TRUE(e->release(*again, release_mode::destroy));
  EXPECT_FALSE(fs::exists(server->host_path(first->workspace())));
  auto replaced = e->acquire({.key = "session-a1", .previous = first->provider_id()});
  ASSERT_TRUE(replaced);
  EXPECT_EQ((*replaced)->outcome(), lease_outcome::replaced);
  (void)e->release(**replaced, release_mode::destroy);
  (void)e->release(*other, release_mode::destroy);
}

TEST_F(SshEnvironment, TheWorkspaceGoesUpAndTheAgentsChangesComeBack) {
  start();
  auto e = make(server->options());
  auto l = acquire(*e, "session-sync");
  ASSERT_NE(l, nullptr);
  temp_dir host;
  const fs::path ws = host.path / "workspace";
  put(ws / "src/main.c", "int main() { return 0; }\n");
  put(ws / "notes.txt", "T0\n");
  fs::permissions(ws / "src/main.c", fs::perms::owner_all);
  fs::create_symlink("src/main.c", ws / "main-link");
  auto sent = l->push(ws);
  ASSERT_TRUE(sent) << sent.error().describe();
  // The remote copy is the same tree (its path differs: the server has its own root).
  auto remote = describe_tree(server->host_path(l->workspace()));
  ASSERT_TRUE(remote);
  EXPECT_EQ(remote->sha256, sent->sha256);

  auto done = test::run_in(*l, {"sh", "-c", "echo T1 >> notes.txt && mkdir -p out && echo made > out/new.txt && rm src/main.c"});
  EXPECT_EQ(done.status.code, 0) << done.output;
  auto back = l->pull(ws);
  ASSERT_TRUE(back) << back.error().describe();
  EXPECT_EQ(slurp(ws / "notes.txt"), "T0\nT1\n");
  EXPECT_EQ(slurp(ws / "out/new.txt"), "made\n");
  EXPECT_FALSE(fs::exists(ws / "src/main.c"));
  EXPECT_TRUE(fs::is_symlink(ws / "main-link"));
  EXPECT_EQ(back->sha256, describe_tree(ws)->sha256);
  EXPECT_EQ(back->sha256, describe_tree(server->host_path(l->workspace()))->sha256);
  // Nothing is left beside the workspace.
  EXPECT_EQ(std::distance(fs::directory_iterator(host.path), fs::directory_iterator()), 1);
  (void)e->release(*l, release_mode::destroy);
}

// What the remote side leaves in its workspace does not all come back as it
// was: no device node or FIFO is made here, no set-ID bit is kept.
TEST_F(SshEnvironment, APullMakesNoDeviceNodeAndKeepsNoSetIdBit) {
  start();
  auto e = make(server->options());
  auto l = acquire(*e, "session-hostile");
  ASSERT_NE(l, nullptr);
  auto done = test::run_in(*l, {"sh", "-c", "echo run > tool && chmod 4755 tool && mkdir scratch && chmod 1777 scratch && mkfifo pipe && ln -s /etc/shadow shadow"});
  ASSERT_EQ(done.status.code, 0) << done.output;
  // The remote user cannot make a device node; root on its machine could.
  const fs::path remote = server->host_path(l->workspace());
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
  EXPECT_EQ(fs::read_symlink(host.path / "ws/shadow"), "/etc/shadow");
  EXPECT_EQ(back->sha256, describe_tree(host.path / "ws")->sha256);
  EXPECT_EQ(std::distance(fs::directory_iterator(host.path), fs::directory_iterator()), 1);
  (void)e->release(*l, release_mode::destroy);
}

TEST_F(SshEnvironment, ARemoteCommandGetsExactlyItsEnvironmentInTheWorkspace) {
  start();
  auto e = make(server->options());
  auto l = acquire(*e, "session-env");
  ASSERT_NE(l, nullptr);
  auto done = test::run_in(*l, {"sh", "-c", "env | sort; pwd; id -un"}, {"SECRET_FREE=1", "HOME=/home/agent"});
  EXPECT_EQ(done.status.code, 0);
  // Beside them, the command's journal id (what a signal finds its processes by).
  const std::regex id_line("TETHER_COMMAND_ID=c[0-9]{13}-[0-9a-f]{6}\n");
  EXPECT_TRUE(std::regex_search(done.output, id_line)) << done.output;
  EXPECT_EQ(std::regex_replace(done.output, id_line, ""), "HOME=/home/agent\nPATH=/usr/local/bin:/usr/bin:/bin\nPWD=" +
                                                               l->workspace() + "\nSECRET_FREE=1\n" + l->workspace() +
                                                               "\nagent\n");
  // A program that is not there: the shell's 127, journaled.
  EXPECT_EQ(test::run_in(*l, {"no-such-program-here"}).status.code, 127);
  (void)e->release(*l, release_mode::destroy);
}

TEST_F(SshEnvironment, TheJournalHoldsEveryCommandWithItsExitAndASignalEndsOne) {
  start();
  auto e = make(server->options());
  auto l = acquire(*e, "session-journal");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(test::run_in(*l, {"sh", "-c", "exit 7"}).status.code, 7);

  auto s = l->spawner().spawn({.argv = {"sleep", "300"}, .stdout_mode = process::output::null,
                               .stderr_mode = process::output::null});
  ASSERT_TRUE(s) << s.error().describe();
  const auto id = l->command_id(s->pid);
  ASSERT_TRUE(id);
  EXPECT_EQ(test::await_command(*l, *id, command_record::state::running).program, "sleep");
  ASSERT_TRUE(l->signal(*id, SIGTERM));
  const auto relay = process::reap(s->release());
  EXPECT_EQ(relay.code, 143);  // the remote shell's status, relayed by ssh
  EXPECT_EQ(test::await_command(*l, *id, command_record::state::exited).exit_code, 143);

  // A wrapper's command is journaled by the label it was given: the program it starts.
  process::spawn_options wrapped{.argv = {"sh", "-c", "exit 0"}, .stdout_mode = process::output::null,
                                 .stderr_mode = process::output::null};
  wrapped.label = "claude";
  auto w = l->spawner().spawn(wrapped);
  ASSERT_TRUE(w) << w.error().describe();
  const auto wid = l->command_id(w->pid);
  ASSERT_TRUE(wid);
  EXPECT_EQ(process::reap(w->release()).code, 0);
  EXPECT_EQ(test::await_command(*l, *wid, command_record::state::exited).program, "claude");

  auto records = l->commands();
  ASSERT_TRUE(records);
  ASSERT_EQ(records->size(), 3U);
  EXPECT_EQ((*records)[0].program, "sh");
  EXPECT_EQ((*records)[0].exit_code, 7);
  EXPECT_EQ(l->signal("c-unknown", SIGTERM).error(), env_errc::not_found);
  EXPECT_EQ(l->signal("../../x", SIGTERM).error(), env_errc::invalid);
  (void)e->release(*l, release_mode::destroy);
}

TEST_F(SshEnvironment, AHostKeyThatDoesNotMatchIsRefusedWithTheReason) {
  start();
  auto o = server->options();
  o.known_hosts = server->wrong_known_hosts();
  auto e = make(o);
  auto l = e->acquire({.key = "session-mitm"});
  ASSERT_FALSE(l);
  EXPECT_EQ(l.error(), env_errc::refused);
  EXPECT_NE(l.error().message.find("known_hosts"), std::string::npos) << l.error().message;
  EXPECT_FALSE(fs::exists(server->host_path("/home/agent/leases/" + provider_name("session-mitm"))));
}

TEST_F(SshEnvironment, AFullRemoteDiskFailsThePushAndSaysHowMuchIsFree) {
  start({.small_disk_bytes = 1 << 20});
  auto e = make(server->options("/home/agent/small"));
  auto l = acquire(*e, "session-full");
  ASSERT_NE(l, nullptr);
  temp_dir host;
  std::string big(3 << 20, 'x');
  for (std::size_t i = 0; i < big.size(); i += 7) big[i] = static_cast<char>('a' + i % 26);
  put(host.path / "ws/big.bin", big);
  auto sent = l->push(host.path / "ws");
  ASSERT_FALSE(sent);
  EXPECT_EQ(sent.error(), env_errc::no_space) << sent.error().describe();
  const auto& m = sent.error().message;
  const auto at = m.find("tether:free-kib ");
  ASSERT_NE(at, std::string::npos) << m;
  EXPECT_GT(std::strtoul(m.c_str() + at + 16, nullptr, 10), 0UL) << m;  // the free space, as a number
  EXPECT_NE(m.find(" KiB free on /home/agent/small/"), std::string::npos) << m;
  // What was half-received is gone: the lease still works.
  EXPECT_TRUE(l->check());
  auto st = l->stat("big.bin");
  ASSERT_TRUE(st);
  EXPECT_FALSE(st->exists);
}

TEST_F(SshEnvironment, APullThatFailsLeavesTheHostCopyAsItWas) {
  start();
  auto e = make(server->options());
  auto l = acquire(*e, "session-lost");
  ASSERT_NE(l, nullptr);
  temp_dir host;
  put(host.path / "ws/keep.txt", "mine\n");
  ASSERT_TRUE(l->push(host.path / "ws"));
  const auto before = describe_tree(host.path / "ws")->sha256;
  fs::remove_all(server->host_path(l->workspace()));  // the sandbox lost its files
  auto back = l->pull(host.path / "ws");
  ASSERT_FALSE(back);
  EXPECT_EQ(back.error(), env_errc::lost) << back.error().describe();
  EXPECT_EQ(describe_tree(host.path / "ws")->sha256, before);
  EXPECT_EQ(std::distance(fs::directory_iterator(host.path), fs::directory_iterator()), 1);
  EXPECT_EQ(l->check().error(), env_errc::lost);
}

TEST_F(SshEnvironment, SshdKilledMidCommandIsUnreachableThenTheLeaseIsResumedAndNothingRanTwice) {
  start();
  auto e = make(server->options());
  auto l = acquire(*e, "session-crash");
  ASSERT_NE(l, nullptr);
  auto s = l->spawner().spawn({.argv = {"sleep", "300"}, .stdout_mode = process::output::null,
                               .stderr_mode = process::output::null});
  ASSERT_TRUE(s);
  const auto id = *l->command_id(s->pid);
  test::await_command(*l, id, command_record::state::running);

  server->kill();
  const auto relay = process::reap(s->release());  // the connection is gone: ssh ends
  EXPECT_EQ(relay.code, 255);
  auto down = l->check();
  ASSERT_FALSE(down);
  EXPECT_EQ(down.error(), env_errc::unreachable) << down.error().describe();

  ASSERT_TRUE(server->restart());
  auto back = acquire(*e, "session-crash");
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(back->outcome(), lease_outcome::resumed);
  EXPECT_EQ(back->provider_id(), l->provider_id());
  auto records = back->commands();
  ASSERT_TRUE(records) << records.error().describe();
  ASSERT_EQ(records->size(), 1U) << records->back().id << " " << records->back().program;  // run once, never re-run
  EXPECT_EQ((*records)[0].id, id);
  EXPECT_EQ((*records)[0].status, command_record::state::indeterminate);
  (void)e->release(*back, release_mode::destroy);
}

TEST_F(SshEnvironment, ACutConnectionEndsTheRelayButTheRemoteCommandIsStillKnownAndCanBeEnded) {
  start();
  auto o = server->options();
  auto e = make(o);
  auto l = acquire(*e, "session-cut");
  ASSERT_NE(l, nullptr);
  auto s = l->spawner().spawn({.argv = {"sleep", "300"}, .stdout_mode = process::output::null,
                               .stderr_mode = process::output::null});
  ASSERT_TRUE(s);
  const auto id = *l->command_id(s->pid);
  test::await_command(*l, id, command_record::state::running);
  // The lease's master connection, ended from outside (as a dropped link).
  fs::path control;
  for (const auto& entry : fs::directory_iterator(o.control_dir)) control = entry.path();
  ASSERT_FALSE(control.empty());
  auto stop = process::run_to_end({.argv = {"/usr/bin/ssh", "-F", "/dev/null", "-o", "ControlPath=" + control.string(),
                                            "-O", "exit", o.host},
                                   .env = {"PATH=/usr/bin:/bin"}});
  ASSERT_TRUE(stop && stop->status.success()) << (stop ? stop->output : "");
  const auto relay = process::reap(s->release());
  EXPECT_NE(relay.code, 0);
  // The remote program outlived its relay; the journal knows it, and it can be ended.
  EXPECT_EQ(test::await_command(*l, id, command_record::state::running).program, "sleep");
  ASSERT_TRUE(l->signal(id, SIGKILL));
  EXPECT_EQ(test::await_command(*l, id, command_record::state::indeterminate).id, id);
  (void)e->release(*l, release_mode::destroy);
}

TEST_F(SshEnvironment, AForwardedSocketReachesTheHostFromInsideTheLease) {
  start();
  auto e = make(server->options());
  auto l = acquire(*e, "session-bridge");
  ASSERT_NE(l, nullptr);
  temp_dir host;
  const fs::path path = host.path / "bridge.sock";
  const int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listener, 1), 0);
  struct joined {  // ends the accept, then joins, whatever the test's path
    int fd;
    std::thread t;
    ~joined() {
      ::shutdown(fd, SHUT_RDWR);
      if (t.joinable()) t.join();
      ::close(fd);
    }
  } answer{listener, {}};
  answer.t = std::thread([listener] {
    const int c = ::accept(listener, nullptr, nullptr);
    if (c < 0) return;
    char buf[64];
    const auto n = ::read(c, buf, sizeof buf);
    const std::string reply = "pong:" + std::string(buf, n > 0 ? static_cast<std::size_t>(n) : 0U);
    (void)::write(c, reply.data(), reply.size());
    ::close(c);
  });
  auto remote = l->forward_socket(path);
  ASSERT_TRUE(remote) << remote.error().describe();
  EXPECT_NE(remote->find("/.tether/"), std::string::npos);
  auto done = test::run_in(*l, {"perl", "-MIO::Socket::UNIX", "-e",
                       "my $s = IO::Socket::UNIX->new(Peer => $ARGV[0]) or die $!; print $s 'ping'; "
                       "shutdown($s, 1); print <$s>;",
                       *remote});
  EXPECT_EQ(done.output, "pong:ping");
  (void)e->release(*l, release_mode::destroy);
}

// A server on 127.0.0.1 that answers its first connection with `reply`
// (the test's sshd shares this machine's loopback: it is also a server
// "there").
struct one_answer {
  explicit one_answer(std::string reply) {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0 || ::listen(fd, 1) != 0)
      return;
    port = ntohs(addr.sin_port);
    t = std::thread([listener = fd, reply = std::move(reply)] {
      const int c = ::accept(listener, nullptr, nullptr);
      if (c < 0) return;
      (void)::write(c, reply.data(), reply.size());
      ::close(c);
    });
  }
  ~one_answer() {
    ::shutdown(fd, SHUT_RDWR);
    if (t.joinable()) t.join();
    ::close(fd);
  }
  one_answer(const one_answer&) = delete;
  one_answer& operator=(const one_answer&) = delete;
  int fd = -1;
  int port = 0;
  std::thread t;
};

// The model relay's way in: a TCP port here, reached from a port there.
TEST_F(SshEnvironment, AForwardedPortReachesTheHostFromInsideTheLease) {
  start();
  auto e = make(server->options());
  auto l = acquire(*e, "session-port");
  ASSERT_NE(l, nullptr);
  one_answer answer("from the host\n");
  ASSERT_GT(answer.port, 0);
  const int port = answer.port;
  auto there = l->forward_port("127.0.0.1", port);
  ASSERT_TRUE(there) << there.error().describe();
  ASSERT_EQ(there->rfind("127.0.0.1:", 0), 0U) << *there;
  EXPECT_NE(*there, "127.0.0.1:" + std::to_string(port));  // a port of the host's, not this one
  const auto remote_port = there->substr(10);
  auto done = test::run_in(*l, {"perl", "-MIO::Socket::INET", "-e",
                                "my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $ARGV[0]) "
                                "or die $!; print <$s>;",
                                remote_port});
  EXPECT_EQ(done.output, "from the host\n");
  EXPECT_EQ(l->forward_port("-oProxyCommand=x", port).error(), env_errc::invalid);
  EXPECT_EQ(l->forward_port("127.0.0.1", 70000).error(), env_errc::invalid);
  (void)e->release(*l, release_mode::destroy);
}

// A lease's stamp of its workspace: the same while nothing there changes, another after a command changed it.
TEST_F(SshEnvironment, TheWorkspacesStampStaysUntilSomethingThereChanges) {
  start();
  auto e = make(server->options());
  auto l = acquire(*e, "session-stamp");
  ASSERT_NE(l, nullptr);
  auto first = l->stamp();
  ASSERT_TRUE(first) << first.error().describe();
  EXPECT_EQ(first->size(), 64U);
  auto again = l->stamp();
  ASSERT_TRUE(again) << again.error().describe();
  EXPECT_EQ(*again, *first);
  auto done = test::run_in(*l, {"sh", "-c", "echo x > made.txt"});
  auto after = l->stamp();
  ASSERT_TRUE(after) << after.error().describe();
  EXPECT_NE(*after, *first);
  (void)e->release(*l, release_mode::destroy);
}

// opencode serve's way in: a port there (its server on the loopback where it
// runs), reached from a port here over the lease's connection.
TEST_F(SshEnvironment, APortThereIsReachedFromAPortForwardedHere) {
  start();
  auto e = make(server->options());
  auto l = acquire(*e, "session-here");
  ASSERT_NE(l, nullptr);
  one_answer there("from there\n");
  ASSERT_GT(there.port, 0);
  auto here = l->forward_here(there.port);
  ASSERT_TRUE(here) << here.error().describe();
  ASSERT_EQ(here->rfind("127.0.0.1:", 0), 0U) << *here;
  const int local_port = std::stoi(here->substr(10));
  EXPECT_NE(local_port, there.port);  // a port of its own, which ssh serves
  const int c = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  to.sin_port = htons(static_cast<std::uint16_t>(local_port));
  ASSERT_EQ(::connect(c, reinterpret_cast<sockaddr*>(&to), sizeof to), 0) << std::strerror(errno);
  std::string got;
  char buf[64];
  for (ssize_t n = 0; (n = ::read(c, buf, sizeof buf)) > 0;) got.append(buf, static_cast<std::size_t>(n));
  ::close(c);
  EXPECT_EQ(got, "from there\n");
  EXPECT_EQ(l->forward_here(0).error(), env_errc::invalid);
  EXPECT_EQ(l->forward_here(70000).error(), env_errc::invalid);
  (void)e->release(*l, release_mode::destroy);
}

TEST_F(SshEnvironment, AFileIsPutWholeWithItsModeAndItsDirectoriesMade) {
  start();
  auto e = make(server->options());
  auto l = acquire(*e, "session-put");
  ASSERT_NE(l, nullptr);
  const std::string big(300 * 1024, 'p');  // more than a command line holds
  ASSERT_TRUE(l->put_file("deep/er/prompt.txt", big, 0600));
  ASSERT_TRUE(l->put_file("deep/er/prompt.txt", "again 'quoted' $HOME\n", 0640));
  const fs::path there = server->host_path(l->workspace()) / "deep/er/prompt.txt";
  EXPECT_EQ(slurp(there), "again 'quoted' $HOME\n");
  struct stat st {};
  ASSERT_EQ(::stat(there.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640U);
  EXPECT_FALSE(fs::exists(there.string() + ".put"));
  const auto home = fs::path(l->workspace()).parent_path() / "home/.config/x.json";
  ASSERT_TRUE(l->put_file(home.string(), big, 0600));
  EXPECT_EQ(slurp(server->host_path(home.string())), big);
  (void)e->release(*l, release_mode::destroy);
}

TEST_F(SshEnvironment, AProbeFindsProgramsOnTheRemotePathAndTheFreeDisk) {
  start();
  auto e = make(server->options());
  auto report = e->probe({"sh", "tar", "no-such-agent"});
  ASSERT_TRUE(report) << report.error().describe();
  EXPECT_EQ(report->where, "agent@" + server->address() + ":" + std::to_string(server->port()));
  ASSERT_EQ(report->programs.size(), 3U);
  EXPECT_EQ(report->programs[0], (std::pair<std::string, std::string>{"sh", "/usr/bin/sh"}));
  EXPECT_EQ(report->programs[1].second, "/usr/bin/tar");
  EXPECT_EQ(report->programs[2].second, "");
  ASSERT_TRUE(report->free_bytes);
  EXPECT_GT(*report->free_bytes, 0U);
  auto o = server->options();
  o.known_hosts = server->wrong_known_hosts();
  EXPECT_EQ(make(o)->probe({"sh"}).error(), env_errc::refused);
}

TEST_F(SshEnvironment, NothingListeningIsUnreachable) {
  start();
  auto o = server->options();
  server->kill();
  o.connect_timeout = 5s;
  auto e = make(o);
  auto l = e->acquire({.key = "session-nobody"});
  ASSERT_FALSE(l);
  EXPECT_EQ(l.error(), env_errc::unreachable) << l.error().describe();
}

TEST(SshOptions, OptionsThatWouldChangeWhatSshDoesAreRefused) {
  temp_dir t;
  put(t.path / "id", "key");
  put(t.path / "known_hosts", "hosts");
  ssh::ssh_options o;
  o.host = "example.test";
  o.user = "agent";
  o.identity_file = t.path / "id";
  o.known_hosts = t.path / "known_hosts";
  o.remote_root = "/srv/tether";
  o.control_dir = t.path / "c";
  EXPECT_TRUE(ssh::make_environment(o));
  auto bad = o;
  bad.host = "-oProxyCommand=touch /tmp/pwned";
  EXPECT_EQ(ssh::make_environment(bad).error(), env_errc::invalid);
  bad = o;
  bad.user = "agent x";
  EXPECT_EQ(ssh::make_environment(bad).error(), env_errc::invalid);
  bad = o;
  bad.remote_root = "relative/dir";
  EXPECT_EQ(ssh::make_environment(bad).error(), env_errc::invalid);
  bad = o;
  bad.known_hosts = t.path / "missing";
  auto r = ssh::make_environment(bad);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("host key is always checked"), std::string::npos);
  bad = o;
  bad.port = 0;
  EXPECT_EQ(ssh::make_environment(bad).error(), env_errc::invalid);
}

}  // namespace
}  // namespace tether::env
