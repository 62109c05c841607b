// The `contain` sandbox (process/sandbox.h) through real bubblewrap: the
// host's filesystem as it is but the hidden directory, and a process tree
// that dies with the program however it detaches.
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

TEST(contain_sandbox, the_rest_of_the_host_is_as_it_is) {
  const auto bwrap = probe_sandbox();
  ASSERT_TRUE(bwrap) << bwrap.error().describe();
  temp_dir dir;
  std::ofstream(dir.path / "outside") << "host file";
  spawn_options o;
  o.argv = shell_argv("cat " + (dir.path / "outside").string() + "; echo $$");
  o.env = {"PATH=/usr/bin:/bin"};
  o.sandbox = contained(*bwrap, dir.path);
  auto done = run_to_end(o, {.limit = 10s});
  ASSERT_TRUE(done) << done.error().describe();
  ASSERT_EQ(done->output.substr(0, 9), "host file") << done->output;
  // Its own PID namespace: under bubblewrap's init the shell is pid 2.
  EXPECT_LE(std::stoi(done->output.substr(9)), 3) << done->output;
}

}  // namespace
}  // namespace tether::process
