// The process table after many children: none of them is left, neither
// running nor as a zombie.
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include "process/child.h"
#include "process/run_to_end.h"
#include "shell.h"
#include "support/fault_spawner.h"
#include "support/run.h"

namespace tether::process {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using asio::awaitable;
using namespace std::chrono_literals;

// The pids whose parent is this process (from /proc/*/stat), zombies included.
std::vector<pid_t> children_of_this_process() {
  std::vector<pid_t> out;
  const pid_t self = ::getpid();
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const auto name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 2));
    char state = 0;
    pid_t ppid = 0;
    fields >> state >> ppid;
    if (ppid == self) out.push_back(static_cast<pid_t>(std::stoi(name)));
  }
  return out;
}

// Stopped children get a short grace.
spawn_options shell(const std::string& command) {
  spawn_options o = test::shell_options(command);
  o.grace = 100ms;
  return o;
}

struct tally {
  int started = 0;
  int spawn_failures = 0;
  int exited = 0;
  int crashed = 0;
  int stopped = 0;
};

// One child of kind `k`, driven to its end on the io_context.
// The test owns `t` and `s` and runs the io_context to the end.
awaitable<void> one(int k, tally* tp, spawner* sp) {
  tally& t = *tp;
  spawner& s = *sp;
  const auto ex = co_await asio::this_coro::executor;
  switch (k % 6) {
    case 0: {  // a normal exit, output read
      auto c = child::start(ex, shell("echo hi"), s);
      if (!c) { ++t.spawn_failures; co_return; }
      ++t.started;
      // No co_await inside a condition: g++ 12 miscompiles some of those.
      for (;;) {
        auto line = co_await (*c)->read_line(stream::out);
        if (!line || !*line) break;
      }
      const auto status = co_await (*c)->wait();
      if (status.success()) ++t.exited;
      break;
    }
    case 1: {  // a crash
      auto c = child::start(ex, shell("kill -SEGV $$"), s);
      if (!c) { ++t.spawn_failures; co_return; }
      ++t.started;
      const auto status = co_await (*c)->wait();
      if (status.signal == SIGSEGV) ++t.crashed;
      break;
    }
    case 2: {  // stopped while it runs, with a background grandchild
      auto c = child::start(ex, shell("sleep 1000 & echo up; wait"), s);
      if (!c) { ++t.spawn_failures; co_return; }
      ++t.started;
      (void)co_await (*c)->read_line(stream::out);
      (void)co_await (*c)->stop();
      ++t.stopped;
      break;
    }
    case 3: {  // stdout never read: it blocks on a full pipe, then is stopped
      auto c = child::start(ex, shell("yes"), s);
      if (!c) { ++t.spawn_failures; co_return; }
      ++t.started;
      (void)co_await (*c)->stop();
      ++t.stopped;
      break;
    }
    case 4: {  // a program that does not exist
      spawn_options o;
      o.argv = {"/nonexistent/tether-test-program"};
      auto c = child::start(ex, o, s);
      if (!c) ++t.spawn_failures;
      break;
    }
    case 5: {  // dropped without stop(): the destructor kills and reaps
      auto c = child::start(ex, shell("sleep 1000"), s);
      if (!c) { ++t.spawn_failures; co_return; }
      ++t.started;
      ++t.stopped;
      break;
    }
  }
}

TEST(no_zombies, hundreds_of_children_of_every_kind_leave_nothing_in_the_process_table) {
  ASSERT_TRUE(children_of_this_process().empty()) << "a child was left by an earlier test";
  asio::io_context io;
  test::fault_spawner s;
  s.fail_spawn_at = 7;  // and one injected failure
  tally t;
  constexpr int total = 600;
  constexpr int concurrent = 24;
  int next = 0;
  int running = 0;
  std::function<void()> launch = [&] {
    while (running < concurrent && next < total) {
      ++running;
      asio::co_spawn(io, one(next++, &t, &s), [&](const std::exception_ptr& e) {
        if (e) std::rethrow_exception(e);
        --running;
        launch();
      });
    }
  };
  launch();
  io.run();
  // Synchronous runs too: finished, timed out, and a spawn failure.
  for (int i = 0; i < 20; ++i) {
    auto done = run_to_end(shell(i % 2 == 0 ? "echo ok" : "sleep 1000 & sleep 1000"), {.limit = 50ms});
    ASSERT_TRUE(done);
  }

  EXPECT_EQ(t.started + t.spawn_failures, total);
  EXPECT_EQ(t.spawn_failures, total / 6 + 1);
  EXPECT_EQ(t.exited, total / 6 - 1) << "the injected failure was a normal child";
  EXPECT_EQ(t.crashed, total / 6);
  EXPECT_EQ(t.stopped, total / 2);
  const auto left = children_of_this_process();
  EXPECT_TRUE(left.empty()) << left.size() << " children left, the first " << left.front();
  std::printf("spawned %d children (%d spawn failures), %zu left in the process table\n", t.started + 20,
              t.spawn_failures, left.size());
}

// Not a test: started with TETHER_PROCESS_HELPER set, this binary is the
// helper process of the test below, before main() runs: it spawns a
// sleeper, prints its pid and waits to be killed.
[[maybe_unused]] const bool helper_mode = [] {
  if (std::getenv("TETHER_PROCESS_HELPER") == nullptr) return false;
  auto s = system_spawner().spawn(test::shell_options("sleep 1000"));
  if (!s) std::_Exit(2);
  std::printf("sleeper %d\n", s->release());
  std::fflush(stdout);
  for (;;) ::pause();
}();

TEST(no_zombies, a_child_dies_with_the_process_that_spawned_it) {
  asio::io_context io;
  spawn_options o;
  o.argv = {fs::read_symlink("/proc/self/exe").string()};
  o.env = inherited_environment({{"TETHER_PROCESS_HELPER", "1"}});
  auto helper = child::start(io.get_executor(), o);
  ASSERT_TRUE(helper);
  pid_t sleeper = 0;
  for (;;) {
    auto line = test::run_sync(io, (*helper)->read_line(stream::out));
    ASSERT_TRUE(line && *line) << "the helper ended without a sleeper";
    if ((*line)->starts_with("sleeper ")) {
      sleeper = std::stoi((*line)->substr(8));
      break;
    }
  }
  // The sleeper is in its own group, so this kills the helper alone.
  ::kill((*helper)->pid(), SIGKILL);
  EXPECT_EQ(test::run_sync(io, (*helper)->wait()).signal, SIGKILL);
  bool gone = false;
  for (int i = 0; i < 1000 && !gone; ++i) {
    gone = !fs::exists("/proc/" + std::to_string(sleeper));
    if (!gone) {
      std::ifstream in("/proc/" + std::to_string(sleeper) + "/stat");
      std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      gone = stat.empty() || stat[stat.rfind(')') + 2] == 'Z';
    }
    if (!gone) std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(gone) << "the sleeper " << sleeper << " outlived its spawner";
}

}  // namespace
}  // namespace tether::process
