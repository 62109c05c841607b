// What a bash command can reach, with real processes and real bubblewrap:
// descriptors, the data directory, the network, the environment, the system,
// and whether its processes outlive the call.
#include "runtime/common/sandbox.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fixture.h"
#include "runtime/native/tools/tool.h"

namespace tether::runtime::native::test {
namespace {

namespace fs = std::filesystem;

boost::json::value text(const std::string& s) { return boost::json::string(s); }

// The pids of host processes whose command line contains `tag`.
std::vector<pid_t> processes_with(const std::string& tag) {
  std::vector<pid_t> out;
  DIR* d = ::opendir("/proc");
  if (d == nullptr) return out;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in("/proc/" + name + "/cmdline", std::ios::binary);
    std::string cmd((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (auto& c : cmd)
      if (c == '\0') c = ' ';
    const auto pid = static_cast<pid_t>(std::stol(name));
    if (cmd.find(tag) != std::string::npos && process_alive(pid)) out.push_back(pid);
  }
  ::closedir(d);
  return out;
}

std::string nonce() {
  std::random_device rd;
  return std::to_string(100000 + rd() % 900000);
}

// A listening TCP socket on 127.0.0.1 opened WITHOUT close-on-exec, as Asio
// opens its sockets: what a child would inherit if nothing closed it.
struct leaky_listener {
  leaky_listener() {
    // Above the low numbers the child's own stdio and gate reuse.
    const int low = ::socket(AF_INET, SOCK_STREAM, 0);
    fd = ::fcntl(low, F_DUPFD, 100);  // without FD_CLOEXEC
    ::close(low);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd, 16);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
  }
  ~leaky_listener() { ::close(fd); }
  leaky_listener(const leaky_listener&) = delete;
  leaky_listener& operator=(const leaky_listener&) = delete;
  int fd = -1;
  unsigned short port = 0;
};

class sandbox : public tools_test {
 protected:
  std::string run(const std::string& command) {
    const auto out = call("bash", args({{"command", text(command)}}));
    EXPECT_EQ(out.status, tool_status::succeeded) << out.content;
    return out.content;
  }
};

TEST_F(sandbox, a_command_inherits_no_descriptor_but_its_stdio_in_every_mode) {
  leaky_listener api;  // stands for the API's listening socket
  ASSERT_GE(api.fd, 3);
  for (const auto mode : {sandbox_mode::workspace_write, sandbox_mode::off}) {
    sandbox_.mode = mode;
    // ls opens /proc/self/fd itself: that one is the 3.
    EXPECT_EQ(run("ls /proc/self/fd"), "0\n1\n2\n3\nexit code 0") << to_string(mode);
  }
}

TEST_F(sandbox, the_data_directory_and_the_token_are_invisible) {
  put_at(root_ / "token", "the-server-token\n");
  put_at(root_ / "tether.db", "SQLite format 3");
  put_at(outside_ / "other.txt", "another session");
  put("mine.txt", "visible");
  const auto out = run("cat mine.txt; echo; cat ../token; cat " + (root_ / "token").string() + "; cat " +
                       (root_ / "tether.db").string() + "; ls " + outside_.string() + "; ls -A ..");
  EXPECT_TRUE(contains(out, "visible")) << out;
  EXPECT_FALSE(contains(out, "the-server-token")) << out;
  EXPECT_FALSE(contains(out, "SQLite")) << out;
  EXPECT_FALSE(contains(out, "other.txt")) << out;
  EXPECT_TRUE(contains(out, "No such file or directory")) << out;
}

TEST_F(sandbox, a_data_directory_inside_the_workspace_is_hidden_too) {
  sandbox_.hidden = ws_ / ".tether-data";
  put(".tether-data/token", "the-server-token\n");
  put("mine.txt", "visible");
  const auto out = run("cat mine.txt; echo; ls -A .tether-data; cat .tether-data/token");
  EXPECT_TRUE(contains(out, "visible")) << out;
  EXPECT_FALSE(contains(out, "the-server-token")) << out;
  EXPECT_TRUE(contains(out, "No such file or directory")) << out;
  EXPECT_EQ(slurp(ws_ / ".tether-data/token"), "the-server-token\n");
}

TEST_F(sandbox, the_network_is_off_unless_the_profile_allows_it) {
  leaky_listener api;
  const std::string connect = "(exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(api.port) +
                              ") 2>/dev/null && echo connected || echo refused";
  EXPECT_EQ(run(connect), "refused\nexit code 0");
  sandbox_.network = true;
  EXPECT_EQ(run(connect), "connected\nexit code 0");
}

TEST_F(sandbox, the_environment_is_an_allow_list_and_keys_are_withheld_in_every_mode) {
  ::setenv("TETHER_SANDBOX_TEST_PAT", "pat-value-1", 1);     // a profile's api_key_env, no *_TOKEN suffix
  ::setenv("TETHER_SANDBOX_TEST_OTHER", "other-value-2", 1);  // anything else of the server's
  ::setenv("TETHER_SANDBOX_TEST_NAMED", "named-value-3", 1);  // named by the profile
  ::setenv("TETHER_TOKEN", "server-token-4", 1);
  sandbox_.withheld = {"TETHER_SANDBOX_TEST_PAT"};
  sandbox_.env = {"TETHER_SANDBOX_TEST_NAMED", "TETHER_SANDBOX_TEST_PAT", "TETHER_TOKEN"};
  for (const auto mode : {sandbox_mode::workspace_write, sandbox_mode::read_only, sandbox_mode::off}) {
    sandbox_.mode = mode;
    const auto env = run("env");
    EXPECT_TRUE(contains(env, "TETHER_SANDBOX_TEST_NAMED=named-value-3")) << env;
    EXPECT_TRUE(contains(env, "HOME=" + ws_.string() + "\n")) << env;
    EXPECT_TRUE(contains(env, "PATH=")) << env;
    for (const auto* secret : {"pat-value-1", "other-value-2", "server-token-4"})
      EXPECT_FALSE(contains(env, secret)) << to_string(mode) << ": " << env;
  }
  // Inside the sandbox the server's own environment is out of reach too.
  sandbox_.mode = sandbox_mode::workspace_write;
  const auto proc = run("cat /proc/$PPID/environ /proc/1/environ | tr '\\0' '\\n'; ls /proc | grep -c '^[0-9]'");
  for (const auto* secret : {"pat-value-1", "other-value-2", "server-token-4"})
    EXPECT_FALSE(contains(proc, secret)) << proc;
  ::unsetenv("TETHER_SANDBOX_TEST_PAT");
  ::unsetenv("TETHER_SANDBOX_TEST_OTHER");
  ::unsetenv("TETHER_SANDBOX_TEST_NAMED");
  ::unsetenv("TETHER_TOKEN");
}

TEST_F(sandbox, the_command_sees_only_its_own_pid_namespace) {
  const auto out = run("echo $$; ls /proc | grep -c '^[0-9]'");
  // bwrap's init is 1, the shell 2; /proc lists those and the ls pipeline.
  EXPECT_TRUE(out.starts_with("2\n")) << out;
  const auto count = std::stoi(out.substr(2));
  EXPECT_LE(count, 6) << out;
}

TEST_F(sandbox, the_system_is_read_only_and_tmp_is_fresh) {
  const std::string host_tmp = (fs::temp_directory_path() / ("tether-host-" + nonce())).string();
  put_at(host_tmp, "host");
  const auto out = run("touch /usr/tether-x 2>&1; touch /etc/tether-x 2>&1; ls " + host_tmp +
                       " 2>&1; touch /tmp/scratch && echo tmp-writable; touch in-workspace && echo ws-writable");
  fs::remove(host_tmp);
  EXPECT_TRUE(contains(out, "/usr/tether-x': Read-only file system")) << out;
  EXPECT_TRUE(contains(out, "/etc/tether-x': Read-only file system")) << out;
  EXPECT_TRUE(contains(out, "No such file or directory")) << out;
  EXPECT_TRUE(contains(out, "tmp-writable")) << out;
  EXPECT_TRUE(contains(out, "ws-writable")) << out;
  EXPECT_TRUE(fs::exists(ws_ / "in-workspace"));
  EXPECT_FALSE(fs::exists("/usr/tether-x"));
}

TEST_F(sandbox, a_command_creates_files_with_umask_022_while_the_server_keeps_077) {
  const mode_t before = ::umask(077);  // as serve and run set it
  for (const auto mode : {sandbox_mode::workspace_write, sandbox_mode::off}) {
    sandbox_.mode = mode;
    const std::string name = "made-" + std::string(to_string(mode));
    EXPECT_EQ(run("umask; touch " + name), "0022\nexit code 0") << to_string(mode);
    EXPECT_EQ(fs::status(ws_ / name).permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read)
        << to_string(mode);
  }
  ::umask(before);
}

TEST_F(sandbox, read_only_mounts_the_workspace_read_only_and_stops_write_and_edit) {
  sandbox_.mode = sandbox_mode::read_only;
  put("a.txt", "old");
  const auto out = run("cat a.txt; echo; echo new > a.txt; touch b.txt");
  EXPECT_TRUE(contains(out, "old\n")) << out;
  EXPECT_TRUE(contains(out, "Read-only file system")) << out;
  EXPECT_EQ(slurp(ws_ / "a.txt"), "old");
  EXPECT_FALSE(fs::exists(ws_ / "b.txt"));
  const auto write = call("write", args({{"path", "a.txt"}, {"content", "x"}}));
  EXPECT_EQ(write.status, tool_status::failed);
  EXPECT_TRUE(contains(write.content, "read-only")) << write.content;
  const auto edit = call("edit", args({{"path", "a.txt"}, {"old_string", "old"}, {"new_string", "x"}}));
  EXPECT_EQ(edit.status, tool_status::failed);
  EXPECT_EQ(slurp(ws_ / "a.txt"), "old");
}

TEST_F(sandbox, a_timeout_kills_every_process_of_the_sandbox) {
  const std::string tag = "1000." + nonce();
  const auto out = call("bash", args({{"command", text("(sleep " + tag + " & wait) & sleep " + tag + " & echo started; wait")},
                                      {"timeout_ms", 1500}}));
  EXPECT_EQ(out.status, tool_status::failed);
  EXPECT_TRUE(out.content.starts_with("started\n")) << out.content;
  EXPECT_TRUE(eventually([&] { return processes_with("sleep " + tag).empty(); }));
}

TEST_F(sandbox, an_interrupt_kills_every_process_of_the_sandbox) {
  const std::string tag = "1000." + nonce();
  std::stop_source stop;
  auto ctx = context();
  ctx.stop = stop.get_token();
  auto running = start("bash", args({{"command", text("(sleep " + tag + " & wait) & sleep " + tag + "; wait")}}), ctx);
  ASSERT_TRUE(eventually([&] { return processes_with("sleep " + tag).size() >= 2; }));
  stop.request_stop();
  const auto out = running.get();
  EXPECT_EQ(out.content, "interrupted");
  EXPECT_TRUE(eventually([&] { return processes_with("sleep " + tag).empty(); }));
}

TEST_F(sandbox, a_missing_bubblewrap_fails_the_call_with_what_to_do) {
  sandbox_.bwrap = "/nonexistent/bwrap";
  const auto out = call("bash", args({{"command", "echo should-not-run"}}));
  EXPECT_EQ(out.status, tool_status::failed);
  EXPECT_TRUE(contains(out.content, "bubblewrap")) << out.content;
  EXPECT_FALSE(contains(out.content, "should-not-run"));
  EXPECT_FALSE(probe_sandbox("/nonexistent/bwrap"));
}

TEST(sandbox_probe, bubblewrap_runs_here) {
  const auto found = probe_sandbox();
  ASSERT_TRUE(found) << found.error().describe();
  EXPECT_TRUE(found->is_absolute());
}

TEST(sandbox_modes, parse_by_name_and_refuse_anything_else) {
  EXPECT_EQ(parse_sandbox_mode("workspace-write"), sandbox_mode::workspace_write);
  EXPECT_EQ(parse_sandbox_mode("read-only"), sandbox_mode::read_only);
  EXPECT_EQ(parse_sandbox_mode("off"), sandbox_mode::off);
  EXPECT_FALSE(parse_sandbox_mode("none"));
  EXPECT_FALSE(parse_sandbox_mode("Off"));
  for (const auto m : {sandbox_mode::workspace_write, sandbox_mode::read_only, sandbox_mode::off})
    EXPECT_EQ(parse_sandbox_mode(to_string(m)), m);
}

TEST(sandbox_argv, the_data_directory_is_hidden_before_a_workspace_inside_it_is_mounted) {
  sandbox_policy p;
  p.hidden = "/etc/tether-data";  // under a read-only system mount, so visible unless hidden
  const auto argv = bwrap_argv(p, "/usr/bin/bwrap", "/etc/tether-data/workspaces/ses_1", {"/bin/bash", "-c", "x"});
  const auto at = [&](const std::string& a, const std::string& b) {
    for (std::size_t i = 0; i + 1 < argv.size(); ++i)
      if (argv[i] == a && argv[i + 1] == b) return static_cast<long>(i);
    return -1L;
  };
  const auto tmpfs = at("--tmpfs", "/etc/tether-data");
  const auto bind = at("--bind", "/etc/tether-data/workspaces/ses_1");
  const auto etc = at("--ro-bind", "/etc");
  ASSERT_GE(tmpfs, 0);
  ASSERT_GE(bind, 0);
  ASSERT_GE(etc, 0);
  EXPECT_LT(etc, tmpfs);
  EXPECT_LT(tmpfs, bind);
  EXPECT_NE(at("--cap-drop", "ALL"), -1L);
  EXPECT_NE(std::find(argv.begin(), argv.end(), "--unshare-net"), argv.end());
  EXPECT_NE(std::find(argv.begin(), argv.end(), "--die-with-parent"), argv.end());
  // A data directory inside the workspace is hidden after the workspace is mounted.
  const auto inner = bwrap_argv(p, "/usr/bin/bwrap", "/etc", {"/bin/true"});
  long ws_at = -1;
  long hide_at = -1;
  for (std::size_t i = 0; i + 1 < inner.size(); ++i) {
    if (inner[i] == "--bind" && inner[i + 1] == "/etc") ws_at = static_cast<long>(i);
    if (inner[i] == "--tmpfs" && inner[i + 1] == "/etc/tether-data") hide_at = static_cast<long>(i);
  }
  ASSERT_GE(ws_at, 0);
  ASSERT_GE(hide_at, 0);
  EXPECT_LT(ws_at, hide_at);
}

}  // namespace
}  // namespace tether::runtime::native::test
