// The warm agent runtime's registry through a real `tether serve`, with a
// small ACP agent in node (agents/fake_acp_agent.js) as the `acp` profile's
// command: one process per session across turns, its identity per
// execution, resume after a SIGKILL, keep-alive, the process bound, reset,
// crashes, hangs, stop, and churn. (The real agents run the same cases in
// agents_test.cpp.)
#include <signal.h>

#include <fstream>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "server/harness.h"
#include "support/paths.h"

namespace tether::e2e {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace std::chrono_literals;

const fs::path fake_agent = fs::path(test_paths::source_dir()) / "tests/server/agents/fake_acp_agent.js";

std::string fake_profile(const std::string& extra = "") {
  return "\n[profiles.fake]\nruntime = \"acp\"\ncommand = \"" + fake_agent.string() +
         "\"\nidle_timeout_ms = 30000\n" + extra;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {(std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()};
}

// The agent homes some live process runs in: one per session with a live
// agent (bubblewrap's processes and the agent's share it).
std::set<std::string> live_homes(const fs::path& data) {
  const std::string needle = "HOME=" + (data / "agents").string();
  std::set<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const auto name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto env = read_file(e.path() / "environ");
    const auto at = env.find(needle);
    if (at == std::string::npos) continue;
    out.insert(env.substr(at, env.find('\0', at) - at));
  }
  return out;
}

// Polls until at most `n` sessions have a live agent; the count then.
std::size_t wait_homes_at_most(const fs::path& data, std::size_t n, std::chrono::milliseconds timeout = 15s) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  auto homes = live_homes(data);
  while (homes.size() > n && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(50ms);
    homes = live_homes(data);
  }
  return homes.size();
}

// A zombie (dead, not reaped yet: PID 1 of a container may never reap it)
// is not alive.
bool alive(std::int64_t pid) {
  if (pid <= 0) return false;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = stat.rfind(')');
  if (close == std::string::npos || close + 2 >= stat.size()) return false;
  const char state = stat[close + 2];
  return state != 'Z' && state != 'X';
}
// Gone within 5 s.
bool gone(std::int64_t pid) {
  for (int i = 0; i < 50 && alive(pid); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  return !alive(pid);
}

// Reaped within 5 s by its parent, the server: no /proc entry at all (a
// zombie still has one). The server must close a process that broke, not
// only stop using it.
bool reaped(std::int64_t pid) {
  const auto entry = "/proc/" + std::to_string(pid);
  for (int i = 0; i < 50 && fs::exists(entry); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  return !fs::exists(entry);
}

long rss_kib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

class WarmRuntime : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(fake_agent)) GTEST_SKIP() << "no " << fake_agent;
  }
  static std::string create(cluster& c) {
    auto r = c.call("POST", "/v1/sessions", json::object{{"profile", "fake"}});
    EXPECT_EQ(r.status, 201u) << r.body;
    return std::string(r.json.at("session").at("id").as_string());
  }
  static void say(cluster& c, const std::string& s, const std::string& text) {
    c.send(s, text);
    c.wait_idle(s, 60s);
  }
  static json::object last_execution(cluster& c, const std::string& s) {
    const auto all = c.executions(s);
    return all.empty() ? json::object{} : all.back().as_object();
  }
  // The pid of the agent process that served the session's last execution.
  static std::int64_t last_pid(cluster& c, const std::string& s) {
    const auto x = last_execution(c, s);
    const auto* p = x.if_contains("agent_process");
    if (p == nullptr || !p->is_object()) return 0;
    return p->at("pid").as_int64();
  }
  static void expect_none_left(cluster& c) {
    c.kill_server(SIGTERM);
    EXPECT_EQ(wait_homes_at_most(c.dir() / "data", 0), 0U) << "an agent outlived the server's stop";
  }
};

TEST_F(WarmRuntime, ThreeTurnsAreServedByOneProcessThatKeepsTheContext) {
  cluster c({}, fake_profile());
  const auto s = create(c);
  say(c, s, "echo one");
  EXPECT_EQ(c.last_answer(s), "one");
  const auto pid = last_pid(c, s);
  ASSERT_GT(pid, 0) << json::serialize(last_execution(c, s));
  EXPECT_EQ(last_execution(c, s).at("runtime").as_string(), "acp");
  say(c, s, "echo two");
  EXPECT_EQ(last_pid(c, s), pid);
  say(c, s, "recall");
  EXPECT_EQ(c.last_answer(s), "echo one | echo two") << "the agent's own memory of the session";
  EXPECT_EQ(last_pid(c, s), pid);
  EXPECT_TRUE(alive(pid)) << "warm between turns";
  EXPECT_EQ(live_homes(c.dir() / "data").size(), 1U);
  for (const auto& x : c.executions(s)) {
    EXPECT_EQ(x.at("outcome").as_string(), "succeeded");
    EXPECT_EQ(x.at("agent_process").at("pid").as_int64(), pid);
    EXPECT_GT(x.at("usage").at("input_tokens").as_int64(), 0);
  }
  expect_none_left(c);
  EXPECT_TRUE(gone(pid));
}

TEST_F(WarmRuntime, AfterASigkillTheFirstTurnStartsANewProcessThatResumes) {
  cluster c({}, fake_profile());
  const auto s = create(c);
  say(c, s, "echo amber");
  const auto before = last_pid(c, s);
  ASSERT_GT(before, 0);
  c.kill_server(SIGKILL);
  c.start_server();  // the old agent is killed from the process records
  say(c, s, "recall");
  EXPECT_EQ(c.last_answer(s), "echo amber") << "session/load brought the agent's context back";
  const auto after = last_pid(c, s);
  EXPECT_GT(after, 0);
  EXPECT_NE(after, before);
  EXPECT_TRUE(gone(before));
  expect_none_left(c);
}

TEST_F(WarmRuntime, AnIdleProcessIsClosedAfterItsKeepAliveAndTheNextTurnResumes) {
  cluster c({}, fake_profile("keep_alive_ms = 300\n"));
  const auto s = create(c);
  say(c, s, "echo first");
  const auto pid = last_pid(c, s);
  EXPECT_EQ(wait_homes_at_most(c.dir() / "data", 0), 0U) << "still running after its keep-alive";
  EXPECT_TRUE(gone(pid));
  say(c, s, "recall");
  EXPECT_EQ(c.last_answer(s), "echo first");
  EXPECT_NE(last_pid(c, s), pid);
  expect_none_left(c);
}

TEST_F(WarmRuntime, AtMostMaxProcessesRunTheLeastRecentlyUsedMakesRoom) {
  cluster c({}, fake_profile("max_processes = 2\n"));
  const auto a = create(c);
  const auto b = create(c);
  const auto d = create(c);
  say(c, a, "echo a");
  say(c, b, "echo b");
  const auto pa = last_pid(c, a);
  const auto pb = last_pid(c, b);
  say(c, a, "echo a again");  // b is now the least recently used
  EXPECT_EQ(last_pid(c, a), pa);
  say(c, d, "echo d");
  EXPECT_EQ(wait_homes_at_most(c.dir() / "data", 2), 2U);
  EXPECT_TRUE(alive(pa));
  for (int i = 0; i < 100 && alive(pb); ++i) std::this_thread::sleep_for(50ms);
  EXPECT_TRUE(gone(pb)) << "the least recently used one was closed";
  say(c, b, "recall");
  EXPECT_EQ(c.last_answer(b), "echo b") << "and its session resumes in a new process";
  expect_none_left(c);
}

TEST_F(WarmRuntime, AResetStartsANewProcessWithANewAgentSession) {
  cluster c({}, fake_profile());
  const auto s = create(c);
  say(c, s, "echo before");
  const auto pid = last_pid(c, s);
  EXPECT_EQ(c.call("POST", "/v1/sessions/" + s + "/reset").status, 200u);
  say(c, s, "recall");
  EXPECT_EQ(c.last_answer(s), "(nothing)") << "the new agent session has no history";
  EXPECT_NE(last_pid(c, s), pid);
  for (int i = 0; i < 100 && alive(pid); ++i) std::this_thread::sleep_for(50ms);
  EXPECT_TRUE(gone(pid)) << "the old generation's process is closed";
  expect_none_left(c);
}

TEST_F(WarmRuntime, ACrashFailsTheTurnWithTheReasonAndTheNextTurnResumes) {
  cluster c({}, fake_profile());
  const auto s = create(c);
  say(c, s, "echo kept");
  const auto pid = last_pid(c, s);
  say(c, s, "crash");
  const auto x = last_execution(c, s);
  EXPECT_EQ(x.at("outcome").as_string(), "failed");
  EXPECT_NE(std::string(x.at("error").as_string()).find("fake agent: crashing"), std::string::npos)
      << json::serialize(x);
  EXPECT_TRUE(reaped(pid)) << "the crashed process is closed and reaped";
  EXPECT_EQ(c.session(s).at("status").as_string(), "idle");
  say(c, s, "recall");
  EXPECT_EQ(c.last_answer(s), "echo kept") << "the crashed turn never completed";
  EXPECT_NE(last_pid(c, s), pid);
  expect_none_left(c);
}

TEST_F(WarmRuntime, AHangingAgentIsStoppedAfterTheIdleTimeoutAndReplaced) {
  cluster c({}, "\n[profiles.fake]\nruntime = \"acp\"\ncommand = \"" + fake_agent.string() +
                    "\"\nidle_timeout_ms = 400\n");
  const auto s = create(c);
  say(c, s, "echo fine");
  const auto pid = last_pid(c, s);
  say(c, s, "hang");
  EXPECT_TRUE(reaped(pid)) << "the hanging process is killed and reaped";
  const auto x = last_execution(c, s);
  EXPECT_EQ(x.at("outcome").as_string(), "failed");
  EXPECT_NE(std::string(x.at("error").as_string()).find("printed nothing for 400 ms"), std::string::npos)
      << json::serialize(x);
  say(c, s, "echo after");
  EXPECT_EQ(c.last_answer(s), "after");
  expect_none_left(c);
}

// A process's start is not idleness: node alone can take longer than a short
// idle_timeout_ms to start on a loaded machine, which failed the turns of the
// test above now and then.
TEST_F(WarmRuntime, ANewProcessHasTheStartTimeoutToBeReadyNotTheIdleTimeout) {
  cluster c({}, "\n[profiles.fake]\nruntime = \"acp\"\ncommand = \"" + fake_agent.string() +
                    "\"\nidle_timeout_ms = 1000\nset_env = { FAKE_ACP_START_DELAY_MS = \"2500\" }\n");
  const auto s = create(c);
  say(c, s, "echo slow to start");
  const auto x = last_execution(c, s);
  EXPECT_EQ(x.at("outcome").as_string(), "succeeded") << json::serialize(x);
  EXPECT_EQ(c.last_answer(s), "slow to start");
  expect_none_left(c);
}

TEST_F(WarmRuntime, AProcessNotReadyWithinTheStartTimeoutFailsTheTurnWithThatReason) {
  cluster c({}, "\n[profiles.fake]\nruntime = \"acp\"\ncommand = \"" + fake_agent.string() +
                    "\"\nstart_timeout_ms = 300\nset_env = { FAKE_ACP_START_DELAY_MS = \"60000\" }\n");
  const auto s = create(c);
  say(c, s, "echo never");
  const auto x = last_execution(c, s);
  EXPECT_EQ(x.at("outcome").as_string(), "failed");
  EXPECT_NE(std::string(x.at("error").as_string()).find("did not start within 300 ms (start_timeout_ms)"),
            std::string::npos)
      << json::serialize(x);
  expect_none_left(c);
}

TEST_F(WarmRuntime, AProcessThatDiesWhileIdleIsReplacedByTheNextTurn) {
  cluster c({}, fake_profile());
  const auto s = create(c);
  say(c, s, "echo one");
  const auto pid = last_pid(c, s);
  ASSERT_GT(pid, 0);
  ::kill(static_cast<pid_t>(pid), SIGKILL);
  EXPECT_EQ(wait_homes_at_most(c.dir() / "data", 0), 0U);
  say(c, s, "recall");
  EXPECT_EQ(last_execution(c, s).at("outcome").as_string(), "succeeded");
  EXPECT_EQ(c.last_answer(s), "echo one");
  EXPECT_NE(last_pid(c, s), pid);
  expect_none_left(c);
}

TEST_F(WarmRuntime, StopCancelsTheRunningTurnAndTheProcessServesTheNext) {
  cluster c({}, fake_profile());
  const auto s = create(c);
  say(c, s, "echo warm");
  const auto pid = last_pid(c, s);
  c.send(s, "slow 60000");
  c.wait_for("/v1/sessions/" + s,
             [](const json::value& v) { return v.at("session").at("status").as_string() == "running"; }, 30s);
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(c.call("POST", "/v1/sessions/" + s + "/interrupt").status, 200u);
  c.wait_idle(s, 30s);
  const auto stopped = last_execution(c, s);
  ASSERT_TRUE(stopped.contains("outcome")) << json::serialize(c.executions(s));
  EXPECT_EQ(stopped.at("outcome").as_string(), "interrupted");
  say(c, s, "echo next");
  EXPECT_EQ(c.last_answer(s), "next");
  EXPECT_EQ(last_pid(c, s), pid) << "session/cancel stopped the turn; the process stayed";
  expect_none_left(c);
}

TEST_F(WarmRuntime, ChurnOf200SessionsLeavesNoProcessAndBoundedMemory) {
  cluster c({}, fake_profile("keep_alive_ms = 1000\nmax_processes = 8\n"));
  std::vector<std::string> sessions;
  for (int i = 0; i < 200; ++i) sessions.push_back(create(c));
  long peak = 0;
  for (int turn = 0; turn < 2; ++turn) {
    // A batch at a time, so several run at once.
    for (std::size_t i = 0; i < sessions.size(); i += 8) {
      for (std::size_t j = i; j < i + 8 && j < sessions.size(); ++j)
        c.send(sessions[j], "echo t" + std::to_string(turn));
      for (std::size_t j = i; j < i + 8 && j < sessions.size(); ++j) c.wait_idle(sessions[j], 60s);
      EXPECT_LE(live_homes(c.dir() / "data").size(), 8U) << "max_processes holds";
      peak = std::max(peak, rss_kib(c.server().pid()));
    }
  }
  for (const auto& s : sessions) ASSERT_EQ(last_execution(c, s).at("outcome").as_string(), "succeeded") << s;
  EXPECT_EQ(wait_homes_at_most(c.dir() / "data", 0, 20s), 0U) << "idle processes outlived their keep-alive";
  const long after = rss_kib(c.server().pid());
  EXPECT_LT(after, 256 * 1024) << "the server's RSS after the churn, KiB (peak " << peak << ")";
  std::cout << "[ churn ] server RSS peak " << peak << " KiB, after " << after << " KiB\n";
  expect_none_left(c);
}

}  // namespace
}  // namespace tether::e2e
