// The `contain` sandbox (process/sandbox.h) through real bubblewrap: the
// host's filesystem read-only but the hidden and masked paths, only the
// exposed ones writable, and a process tree that dies with the program
// however it detaches.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include <gtest/gtest.h>

#include "process/run_to_end.h"
#include "process/sandbox.h"
#include "process/spawn.h"

namespace tether::process {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

struct temp_dir {
  temp_dir() : path(fs::temp_directory_path() / ("tether-contain-" + std::to_string(std::random_device{}()))) {
    fs::create_directories(path);
    path = fs::canonical(path);
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  fs::path path;
};

sandbox contained(const fs::path& bwrap, const fs::path& root) {
  sandbox box;
  box.mode = sandbox_mode::contain;
  box.bwrap = bwrap;
  box.root = root;
  return box;
}

bool process_with_arg_runs(const std::string& arg) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    std::ifstream in(e.path() / "cmdline", std::ios::binary);
    const std::string cmd((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmd.find(arg) != std::string::npos && cmd.find("sleep") != std::string::npos) return true;
  }
  return false;
}

TEST(contain_sandbox, a_detached_grandchild_dies_with_the_program) {
  const auto bwrap = probe_sandbox();
  ASSERT_TRUE(bwrap) << bwrap.error().describe();
  temp_dir dir;
  const std::string marker = "31." + std::to_string(std::random_device{}() % 100000);
  spawn_options o;
  // The grandchild leaves the group and the session: only the PID namespace holds it.
  o.argv = shell_argv("setsid sleep " + marker + " </dev/null >/dev/null 2>&1 & sleep 0.3; exit 0");
  o.env = {"PATH=/usr/bin:/bin"};
  o.sandbox = contained(*bwrap, dir.path);
  auto done = run_to_end(o, {.limit = 10s});
  ASSERT_TRUE(done) << done.error().describe();
  EXPECT_TRUE(done->status.success()) << done->output;
  bool gone = false;
  for (int i = 0; i < 50 && !gone; ++i) {
    gone = !process_with_arg_runs(marker);
    if (!gone) std::this_thread::sleep_for(50ms);
  }
  EXPECT_TRUE(gone) << "sleep " << marker << " outlived its program";
}

TEST(contain_sandbox, the_hidden_directory_is_empty_but_for_what_is_exposed) {
  const auto bwrap = probe_sandbox();
  ASSERT_TRUE(bwrap) << bwrap.error().describe();
  temp_dir dir;
  fs::create_directories(dir.path / "data" / "agents" / "home");
  std::ofstream(dir.path / "data" / "token") << "secret-token";
  std::ofstream(dir.path / "data" / "agents" / "home" / "config") << "mine";
  auto box = contained(*bwrap, dir.path / "data" / "agents" / "home");
  box.hidden = dir.path / "data";
  box.exposed = {dir.path / "data" / "agents" / "home"};
  spawn_options o;
  const auto data = (dir.path / "data").string();
  o.argv = shell_argv("cat " + data + "/token 2>/dev/null || echo no-token; cat " + data +
                      "/agents/home/config; echo written > " + data + "/agents/home/out; pwd");
  o.env = {"PATH=/usr/bin:/bin"};
  o.sandbox = box;
  auto done = run_to_end(o, {.limit = 10s});
  ASSERT_TRUE(done) << done.error().describe();
  EXPECT_TRUE(done->status.success()) << done->output;
  EXPECT_EQ(done->output, "no-token\nmine" + data + "/agents/home\n");  // "mine" has no newline of its own
  std::ifstream out(dir.path / "data" / "agents" / "home" / "out");
  std::string written;
  std::getline(out, written);
  EXPECT_EQ(written, "written");  // the exposed path is the host's, read-write
}

// What the host shows, as an attacker inside would probe it. The files
// live under /var/tmp: the sandbox's /tmp is a fresh one.
TEST(contain_sandbox, the_host_is_read_only_and_masked_paths_are_absent) {
  const auto bwrap = probe_sandbox();
  ASSERT_TRUE(bwrap) << bwrap.error().describe();
  temp_dir work;
  const auto host = fs::path("/var/tmp") / ("tether-contain-host-" + std::to_string(std::random_device{}()));
  fs::create_directories(host / "pg");
  fs::create_directories(host / "roots" / "other-ws");
  fs::create_directories(host / "roots" / "program");
  std::ofstream(host / "outside") << "host file";
  std::ofstream(host / "config.toml") << "store = \"postgres://user:pw@db\"";
  std::ofstream(host / "pg" / ".s.PGSQL.5432") << "";
  std::ofstream(host / "roots" / "other-ws" / "secret") << "theirs";
  std::ofstream(host / "roots" / "program" / "run") << "mine to run";
  std::ofstream("/tmp/tether-contain-host-tmp-probe") << "host tmp";
  auto box = contained(*bwrap, work.path);
  box.masked = {host / "config.toml", host / "pg", host / "roots", host / "missing"};
  box.visible = {host / "roots" / "program"};
  const auto at = [&](const char* rel) { return (host / rel).string(); };
  spawn_options o;
  o.argv = shell_argv("cat " + at("outside") + "; echo; cat " + at("config.toml") + " 2>/dev/null; echo \"[config]\"; ls -A " +
                      at("pg") + "; echo \"[pg]\"; cat " + at("roots/other-ws/secret") + " 2>/dev/null; echo \"[ws]\"; cat " +
                      at("roots/program/run") + "; echo; touch " + at("written") +
                      " 2>/dev/null && echo host-writable; cat /tmp/tether-contain-host-tmp-probe 2>/dev/null; echo "
                      "\"[tmp]\"; echo ok > mine && cat mine; echo $$");
  o.env = {"PATH=/usr/bin:/bin"};
  o.sandbox = box;
  auto done = run_to_end(o, {.limit = 10s});
  std::error_code ec;
  fs::remove("/tmp/tether-contain-host-tmp-probe", ec);
  const bool written = fs::exists(host / "written");
  fs::remove_all(host, ec);
  ASSERT_TRUE(done) << done.error().describe();
  EXPECT_EQ(done->output.substr(0, done->output.rfind('\n', done->output.size() - 2) + 1),
            "host file\n[config]\n[pg]\n[ws]\nmine to run\n[tmp]\nok\n")
      << done->output;
  EXPECT_FALSE(written) << "the host was writable";
  // Its own PID namespace: under bubblewrap's init the shell is pid 2.
  const auto pid = done->output.substr(done->output.rfind('\n', done->output.size() - 2) + 1);
  EXPECT_LE(std::stoi(pid), 3) << done->output;
  EXPECT_TRUE(fs::exists(work.path / "mine")) << "the working directory is writable";
}

}  // namespace
}  // namespace tether::process
