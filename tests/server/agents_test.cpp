// The agent-program runtimes through the real binaries (codex, claude,
// opencode from scripts/install-agents) against `tether mock-llm`, driven
// through a real `tether serve`: every case runs once per runtime.
#include <signal.h>

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <random>
#include <regex>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "server/harness.h"
#include "support/files.h"
#include "support/agents.h"

namespace tether::e2e {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace std::chrono_literals;

struct agent_case {
  std::string profile;  // also the test's name
  std::string kind;     // the profile's runtime
  std::string binary;   // programs.h's kind
  std::string base;     // the model endpoint under the mock's root
  bool warm = false;    // a process per session, kept across turns (warm_runtime.h)
  bool usage = true;    // the agent reports token usage
  std::string model = "scripted";
  bool steer = false;   // a follow-up reaches the running turn (README: the capability table)
};

std::ostream& operator<<(std::ostream& os, const agent_case& c) { return os << c.profile; }

const agent_case codex{"codex", "codex-exec", "codex", "/v1"};
const agent_case claude{"claude", "claude-print", "claude", ""};
const agent_case opencode{"opencode", "opencode-run", "opencode", "/v1"};
const agent_case codex_server{"codex_server", "codex", "codex", "/v1", true, true, "scripted", true};
const agent_case claude_stream{"claude_stream", "claude", "claude", "", true, true, "scripted", true};
const agent_case opencode_serve{"opencode_serve", "opencode", "opencode", "/v1", true, true, "scripted", true};
// codex-acp reports no usage itself (the model relay reads it from the
// responses); with an unknown model name it adds a warning to the answer.
const agent_case acp_codex{"acp_codex", "acp-codex", "codex-acp", "/v1", true, true, "gpt-5.5"};
const agent_case acp_claude{"acp_claude", "acp-claude", "claude-agent-acp", "", true};
const agent_case acp_opencode{"acp_opencode", "acp-opencode", "opencode", "/v1", true};

std::string profile_config(const agent_case& a, const std::string& extra = "", int idle_timeout_ms = 120'000) {
  return "\n[profiles." + a.profile + "]\nruntime = \"" + a.kind + "\"\nbase_url = \"{mock}" + a.base +
         "\"\nmodel = \"" + a.model + "\"\nidle_timeout_ms = " + std::to_string(idle_timeout_ms) + "\n" + extra;
}

// The pids of processes whose environment points into this data directory's
// agent homes: the agents and whatever they started.
std::vector<int> agent_processes(const fs::path& data) {
  const std::string needle = "HOME=" + (data / "agents").string();
  std::vector<int> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const auto name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "environ", std::ios::binary);
    const std::string env((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (env.find(needle) != std::string::npos) out.push_back(std::stoi(name));
  }
  return out;
}

// One turn: the input, then until the session is idle again.
void say(cluster& c, const std::string& s, const std::string& text) {
  c.send(s, text);
  c.wait_idle(s, 120s);
}

// No agent process is left (they may take a moment to be reaped by init).
// A warm agent outlives its turns: the server's clean stop ends it.
void expect_no_agent_left(cluster& c, bool warm) {
  if (warm) c.kill_server(SIGTERM);
  auto left = agent_processes(c.dir() / "data");
  for (int i = 0; i < 50 && !left.empty(); ++i) {
    std::this_thread::sleep_for(100ms);
    left = agent_processes(c.dir() / "data");
  }
  EXPECT_TRUE(left.empty()) << left.size() << " agent process(es) left, first pid " << (left.empty() ? 0 : left[0]);
}

// A script standing in for the agent, run as the profile's `command`.
fs::path script(const std::string& name, const std::string& body) {
  const auto path = fs::temp_directory_path() / ("tether-agent-" + name + "-" + std::to_string(::getpid()) + ".sh");
  std::ofstream(path) << "#!/bin/sh\n" << body;
  fs::permissions(path, fs::perms::owner_all);
  return path;
}

class AgentRuntime : public ::testing::TestWithParam<agent_case> {
 protected:
  std::string create(cluster& c) {
    auto r = c.call("POST", "/v1/sessions", json::object{{"profile", GetParam().profile}});
    EXPECT_EQ(r.status, 201u) << r.body;
    return std::string(r.json.at("session").at("id").as_string());
  }
  // One turn that must fail; its reason.
  static std::string failed_turn(cluster& c, const std::string& s) {
    c.send(s, "Reply with exactly: never");
    c.wait_idle(s, 60s);
    const auto x = last_execution(c, s);
    EXPECT_EQ(x.at("outcome").as_string(), "failed");
    return std::string(x.at("error").as_string());
  }
  static json::object last_execution(cluster& c, const std::string& s) {
    const auto all = c.executions(s);
    return all.empty() ? json::object{} : all.back().as_object();
  }
  static std::string binding(cluster& c, const std::string& s) {
    const auto v = c.session(s);
    const auto* b = v.if_contains("binding");
    if (b == nullptr || !b->is_object()) return {};
    return std::string(b->at("external_session_id").as_string());
  }
  // The text of the last user message of the last model request (what the agent sent as the turn's prompt).
  static std::string last_prompt(cluster& c) {
    const auto reqs = c.model_requests();
    if (reqs.empty()) return {};
    return json::serialize(reqs.back());
  }
};

TEST_P(AgentRuntime, RepliesAndRecordsWhatRan) {
  TETHER_REQUIRE_AGENT(bin, GetParam().binary);
  cluster c({}, profile_config(GetParam()));
  const auto s = create(c);
  c.send(s, "Reply with exactly: PONG " + GetParam().profile);
  const auto idle = c.wait_idle(s, 120s);
  EXPECT_EQ(idle.at("status").as_string(), "idle");
  EXPECT_EQ(c.last_answer(s), "PONG " + GetParam().profile);
  const auto x = last_execution(c, s);
  EXPECT_EQ(x.at("runtime").as_string(), GetParam().kind);
  EXPECT_EQ(x.at("outcome").as_string(), "succeeded") << json::serialize(x);
  const auto& u = x.at("usage").as_object();
  if (GetParam().usage) {
    EXPECT_GT(u.at("input_tokens").as_int64(), 0) << json::serialize(u);
    EXPECT_GT(u.at("output_tokens").as_int64(), 0) << json::serialize(u);
  }
  EXPECT_FALSE(binding(c, s).empty());
  expect_no_agent_left(c, GetParam().warm);
}

TEST_P(AgentRuntime, WritesAFileWithItsOwnTool) {
  TETHER_REQUIRE_AGENT(bin, GetParam().binary);
  cluster c({}, profile_config(GetParam()));
  const auto s = create(c);
  const auto workspace = c.dir() / "data" / "workspaces" / s;
  say(c, s, "Write file " + (workspace / "note.txt").string() + ": written by the agent\nReply with exactly: WROTE");
  EXPECT_EQ(c.last_answer(s), "WROTE");
  std::ifstream in(workspace / "note.txt");
  const std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "written by the agent");
  // The agent's tool call is recorded, as an agent-run call that succeeded.
  bool seen = false;
  for (const auto& m : c.messages(s))
    if (const auto* calls = m.as_object().if_contains("tool_calls"))
      for (const auto& call : calls->as_array()) {
        seen = true;
        EXPECT_EQ(call.at("status").as_string(), "succeeded") << json::serialize(call);
      }
  EXPECT_TRUE(seen) << json::serialize(c.messages(s));
  expect_no_agent_left(c, GetParam().warm);
}

TEST_P(AgentRuntime, ApproveReadsLeavesTheWorkspaceUnwritten) {
  TETHER_REQUIRE_AGENT(bin, GetParam().binary);
  cluster c({}, profile_config(GetParam(), "permissions = \"approve-reads\"\n"));
  const auto s = create(c);
  const auto workspace = c.dir() / "data" / "workspaces" / s;
  // The same request the approve-all case carries out (WritesAFileWithItsOwnTool).
  say(c, s, "Write file " + (workspace / "denied.txt").string() + ": must not exist\nReply with exactly: TRIED");
  EXPECT_FALSE(fs::exists(workspace / "denied.txt"));
  EXPECT_EQ(last_execution(c, s).at("status").as_string(), "finished");
  expect_no_agent_left(c, GetParam().warm);
}

TEST_P(AgentRuntime, RecallsAPhraseFromItsOwnResumedSession) {
  TETHER_REQUIRE_AGENT(bin, GetParam().binary);
  cluster c({}, profile_config(GetParam()));
  const auto s = create(c);
  say(c, s, "Remember the phrase: violet harbour");
  const auto first = binding(c, s);
  ASSERT_FALSE(first.empty());
  say(c, s, "Recall the phrase.");
  EXPECT_EQ(c.last_answer(s), "violet harbour");
  EXPECT_EQ(binding(c, s), first);  // the same agent session
  // Tether sent only the new input: the phrase came from the agent's own history.
  const auto reqs = c.model_requests();
  ASSERT_FALSE(reqs.empty());
  EXPECT_EQ(json::serialize(reqs.back()).find("conversation so far"), std::string::npos);
  expect_no_agent_left(c, GetParam().warm);
}

// The seqs of the session's execution.finished events, in order.
std::vector<std::int64_t> turn_ends(cluster& c, const std::string& s) {
  const auto r = c.call("GET", "/v1/sessions/" + s + "/events?limit=10000");
  std::vector<std::int64_t> out;
  for (const auto& e : r.json.at("events").as_array())
    if (e.at("type").as_string() == "execution.finished") out.push_back(e.at("seq").to_number<std::int64_t>());
  return out;
}

// A fork at the end of turn 2 of 3: its agent resumes the agent's own
// session as saved then (turn 3's phrase is not in it), its workspace is
// turn 2's, and the source goes on with turn 3's.
TEST_P(AgentRuntime, AForkAtTurnTwoOfThreeResumesTheAgentSessionAndWorkspaceOfThen) {
  TETHER_REQUIRE_AGENT(bin, GetParam().binary);
  cluster c({}, profile_config(GetParam()));
  const auto s = create(c);
  say(c, s, "Remember the phrase: violet harbour");
  say(c, s, "Write file notes.txt: two\nReply with exactly: WROTE");
  const auto at_two = binding(c, s);
  ASSERT_FALSE(at_two.empty());
  say(c, s, "Write file notes.txt: three\nRemember the phrase: amber lantern");
  const auto ends = turn_ends(c, s);
  ASSERT_EQ(ends.size(), 3u);

  const auto made = c.call("POST", "/v1/sessions/" + s + "/fork", json::object{{"at", ends[1]}});
  ASSERT_EQ(made.status, 201u) << made.body;
  const std::string f(made.json.at("session").at("id").as_string());
  EXPECT_EQ(made.json.at("session").at("forked_from").at("session").as_string(), s);
  EXPECT_EQ(binding(c, f), at_two);  // the agent session as it was at turn 2
  const fs::path data = c.dir() / "data";
  EXPECT_EQ(test::slurp(data / "workspaces" / f / "notes.txt"), "two");

  say(c, f, "Recall the phrase.");
  EXPECT_EQ(c.last_answer(f), "violet harbour");
  // Resumed from the restored state, not a rendered transcript.
  EXPECT_EQ(last_prompt(c).find("conversation so far"), std::string::npos);
  EXPECT_EQ(binding(c, f), at_two);

  say(c, s, "Recall the phrase.");
  EXPECT_EQ(c.last_answer(s), "amber lantern");
  EXPECT_EQ(test::slurp(data / "workspaces" / s / "notes.txt"), "three");
  expect_no_agent_left(c, GetParam().warm);
}

TEST_P(AgentRuntime, RecallsAfterTheServerIsKilled) {
  TETHER_REQUIRE_AGENT(bin, GetParam().binary);
  cluster c({}, profile_config(GetParam()));
  const auto s = create(c);
  say(c, s, "Remember the phrase: amber lantern");
  const auto first = binding(c, s);
  c.kill_server(SIGKILL);
  c.start_server();
  say(c, s, "Recall the phrase.");
  EXPECT_EQ(c.last_answer(s), "amber lantern");
  EXPECT_EQ(binding(c, s), first);
  expect_no_agent_left(c, GetParam().warm);
}

TEST_P(AgentRuntime, StopsMidTurnAndTheNextTurnResumes) {
  TETHER_REQUIRE_AGENT(bin, GetParam().binary);
  cluster c({}, profile_config(GetParam()));
  const auto s = create(c);
  say(c, s, "Remember the phrase: quiet meadow");
  const auto first = binding(c, s);
  const auto before = c.model_requests().size();
  const auto flag = c.dir() / "never-created";
  c.send(s, "Wait for file " + flag.string() + "\nReply with exactly: should not get here");
  // The agent is mid-turn: its model request arrived and its tool runs.
  const auto until = std::chrono::steady_clock::now() + 120s;
  while (c.model_requests().size() <= before && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(100ms);
  std::this_thread::sleep_for(500ms);
  ASSERT_FALSE(agent_processes(c.dir() / "data").empty());
  EXPECT_EQ(c.call("POST", "/v1/sessions/" + s + "/interrupt").status, 200u);
  c.wait_idle(s, 60s);
  EXPECT_EQ(last_execution(c, s).at("outcome").as_string(), "interrupted");
  if (!GetParam().warm) expect_no_agent_left(c, false);  // a warm one stays for the next turn
  say(c, s, "Recall the phrase.");
  EXPECT_EQ(c.last_answer(s), "quiet meadow");
  EXPECT_EQ(binding(c, s), first);
  expect_no_agent_left(c, GetParam().warm);
}

// Stopped before the agent took the input up (it prints nothing, so nothing
// binds the input to its session): the next turn tells the agent of the
// stopped input as context, and does not run it again.
TEST_P(AgentRuntime, AnInputStoppedBeforeTheAgentTookItUpIsNotRunByTheNextTurn) {
  TETHER_REQUIRE_AGENT(bin, GetParam().binary);
  if (GetParam().warm) GTEST_SKIP() << "a warm agent has its turn's input before Tether records it started";
  // While `hold` exists, the agent's start waits.
  const auto hold = fs::temp_directory_path() / ("tether-hold-" + GetParam().profile + "-" + std::to_string(::getpid()));
  const auto slow = script("slow-start-" + GetParam().profile,
                           "[ -e '" + hold.string() + "' ] && sleep 120\nexec '" + bin.string() + "' \"$@\"\n");
  cluster c({}, profile_config(GetParam(), "command = \"" + slow.string() + "\"\n"));
  const auto s = create(c);
  say(c, s, "Remember the phrase: quiet meadow");
  const auto first = binding(c, s);
  std::ofstream(hold).put('x');
  const auto flag = c.dir() / "never-created";
  c.send(s, "Wait for file " + flag.string() + "\nReply with exactly: should not get here");
  const auto until = std::chrono::steady_clock::now() + 60s;
  while (agent_processes(c.dir() / "data").empty() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(50ms);
  ASSERT_FALSE(agent_processes(c.dir() / "data").empty());
  EXPECT_EQ(c.call("POST", "/v1/sessions/" + s + "/interrupt").status, 200u);
  c.wait_idle(s, 60s);
  EXPECT_EQ(last_execution(c, s).at("outcome").as_string(), "interrupted");
  fs::remove(hold);
  say(c, s, "Recall the phrase.");
  EXPECT_EQ(last_execution(c, s).at("outcome").as_string(), "succeeded");
  EXPECT_EQ(c.last_answer(s), "quiet meadow");
  EXPECT_EQ(binding(c, s), first);
  // Nothing of the stopped input ran: no tool was called (its wait would have been one).
  for (const auto& m : c.messages(s))
    if (const auto* calls = m.as_object().if_contains("tool_calls"))
      EXPECT_TRUE(calls->as_array().empty()) << json::serialize(m);
  // The agent was told of the stopped input, quoted, after a header that says it is not a request.
  const auto prompt = last_prompt(c);
  EXPECT_NE(prompt.find("not requests"), std::string::npos) << prompt;
  EXPECT_NE(prompt.find("Wait for file"), std::string::npos) << prompt;
  expect_no_agent_left(c, false);
  fs::remove(slow);
}

TEST_P(AgentRuntime, ResetStartsAFreshAgentSession) {
  TETHER_REQUIRE_AGENT(bin, GetParam().binary);
  cluster c({}, profile_config(GetParam()));
  const auto s = create(c);
  say(c, s, "Remember the phrase: copper kettle");
  const auto first = binding(c, s);
  EXPECT_EQ(c.call("POST", "/v1/sessions/" + s + "/reset").status, 200u);
  say(c, s, "Recall the phrase.");
  EXPECT_EQ(c.last_answer(s), "NO_PHRASE");
  const auto second = binding(c, s);
  EXPECT_FALSE(second.empty());
  EXPECT_NE(second, first);
  expect_no_agent_left(c, GetParam().warm);
}

TEST_P(AgentRuntime, AsksThroughTetherAndResumesWithTheAnswer) {
  TETHER_REQUIRE_AGENT(bin, GetParam().binary);
  cluster c({}, profile_config(GetParam()));
  const auto s = create(c);
  c.send(s, "Ask: Which colour? | Red | Blue\nReply with the answer.");
  auto v = c.wait_for(
      "/v1/sessions/" + s + "/interactions",
      [](const json::value& v) { return !v.at("interactions").as_array().empty(); }, 120s);
  const auto& it = v.at("interactions").at(0);
  EXPECT_EQ(it.at("kind").as_string(), "question");
  const auto waiting = c.wait_idle(s, 120s);
  EXPECT_EQ(waiting.at("status").as_string(), "waiting");
  EXPECT_EQ(last_execution(c, s).at("outcome").as_string(), "waiting");
  const auto first = binding(c, s);
  const json::object answer{
      {"answers", json::array{json::object{{"question_id", "q1"}, {"option_ids", json::array{"blue"}}}}}};
  const auto r = c.call("POST", "/v1/interactions/" + std::string(it.at("id").as_string()) + "/answer", answer);
  EXPECT_EQ(r.status, 200u) << r.body;
  c.wait_idle(s, 120s);
  EXPECT_EQ(c.last_answer(s), "Blue");
  EXPECT_EQ(binding(c, s), first);
  expect_no_agent_left(c, GetParam().warm);
}

TEST_P(AgentRuntime, ReportsUsageWithCachedTokensOnTheSecondTurn) {
  TETHER_REQUIRE_AGENT(bin, GetParam().binary);
  if (!GetParam().usage) GTEST_SKIP() << GetParam().kind << " reports no token usage";
  cluster c({}, profile_config(GetParam()));
  const auto s = create(c);
  say(c, s, "Reply with exactly: one");
  say(c, s, "Reply with exactly: two");
  const auto u = last_execution(c, s).at("usage").as_object();
  EXPECT_GT(u.at("input_tokens").as_int64(), 0);
  EXPECT_GT(u.at("cached_input_tokens").as_int64(), 0) << json::serialize(u);
  EXPECT_LE(u.at("cached_input_tokens").as_int64(), u.at("input_tokens").as_int64());
  // The scripted model has no price: Tether says so rather than making one
  // up; a model of the price table (acp_codex asks for gpt-5.5) is priced.
  if (GetParam().model == "scripted") {
    EXPECT_EQ(u.at("cost_status").as_string(), "unpriced") << json::serialize(u);
  } else {
    EXPECT_EQ(u.at("cost_status").as_string(), "estimated") << json::serialize(u);
    EXPECT_GT(u.at("cost_usd").as_double(), 0) << json::serialize(u);
  }
}

TEST_P(AgentRuntime, ACrashingAgentFailsTheRunWithTheReason) {
  TETHER_REQUIRE_AGENT(bin, GetParam().binary);
  const auto crashing = script("crashing-" + GetParam().profile,
                               "echo 'this is not json at all'\necho 'agent: something broke badly' >&2\nexit 1\n");
  cluster c({}, profile_config(GetParam(), "command = \"" + crashing.string() + "\"\n"));
  const auto s = create(c);
  const auto error = failed_turn(c, s);
  if (!GetParam().warm) {
    EXPECT_NE(error.find("not its JSON output"), std::string::npos) << error;
  }
  EXPECT_NE(error.find("something broke badly"), std::string::npos) << error;
  // The session is not stuck on it: idle, ready for the next input.
  EXPECT_EQ(c.session(s).at("status").as_string(), "idle");
  expect_no_agent_left(c, GetParam().warm);
  fs::remove(crashing);
}

TEST_P(AgentRuntime, AnAgentThatGoesSilentIsStoppedAfterTheIdleTimeout) {
  TETHER_REQUIRE_AGENT(bin, GetParam().binary);
  const auto silent = script("silent-" + GetParam().profile, "sleep 600\n");
  // Silent from its start: a warm process runs out of its start_timeout_ms
  // (400 ms here too), a per-turn one out of its idle_timeout_ms.
  const std::string start = GetParam().warm ? "start_timeout_ms = 400\n" : "";
  cluster c({}, profile_config(GetParam(), "command = \"" + silent.string() + "\"\n" + start, 400));
  const auto error = failed_turn(c, create(c));
  const std::string expected =
      GetParam().warm ? "did not start within 400 ms (start_timeout_ms)" : "printed nothing for 400 ms";
  EXPECT_NE(error.find(expected), std::string::npos) << error;
  expect_no_agent_left(c, GetParam().warm);
  fs::remove(silent);
}

// The provider key never reaches an agent: its key variable holds a token
// of its run (the model relay forwards with the key), and nothing in its
// home holds the key either.
TEST_P(AgentRuntime, TheAgentHoldsARunTokenNeitherTheProviderKeyNorTethersSecrets) {
  TETHER_REQUIRE_AGENT(bin, GetParam().binary);
  // The agent prints its environment to stderr, then garbage: the failed
  // run's reason quotes that stderr, as Tether recorded it.
  const auto nosy = script("nosy-" + GetParam().profile, "env >&2\necho not-json\nexit 3\n");
  const std::string key = "sk-test-" + std::to_string(std::random_device{}());
  ::setenv("TETHER_AGENT_TEST_KEY", key.c_str(), 1);
  cluster c(
      {}, profile_config(GetParam(), "command = \"" + nosy.string() + "\"\napi_key_env = \"TETHER_AGENT_TEST_KEY\"\n"));
  const auto s = create(c);
  const auto error = failed_turn(c, s);
  EXPECT_NE(error.find("HOME=" + (c.dir() / "data" / "agents").string()), std::string::npos) << error;
  EXPECT_EQ(error.find(key), std::string::npos) << "the key reached the agent (or the run's error)";
  EXPECT_EQ(error.find("[redacted]"), std::string::npos) << "the key reached the agent: " << error;
  // Its key variable holds a run token instead (64 hex digits).
  EXPECT_TRUE(std::regex_search(error, std::regex("_KEY=[0-9a-f]{64}\\b"))) << error;
  // Nor is the key in any file of the agents' homes once the run is over.
  for (const auto& f : fs::recursive_directory_iterator(c.dir() / "data" / "agents",
                                                        fs::directory_options::skip_permission_denied)) {
    if (!f.is_regular_file()) continue;
    std::ifstream in(f.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text.find(key), std::string::npos) << f.path();
  }
  EXPECT_EQ(error.find(c.token()), std::string::npos) << "the server's token reached the agent";
  EXPECT_EQ(error.find("TETHER_TOKEN"), std::string::npos) << error;
  EXPECT_EQ(error.find("TETHER_AGENT_TEST_KEY"), std::string::npos) << "a withheld variable was passed as it is";
  // Nor does the key reach the events.
  EXPECT_EQ(c.call("GET", "/v1/sessions/" + s + "/messages").body.find(key), std::string::npos);
  ::unsetenv("TETHER_AGENT_TEST_KEY");
  fs::remove(nosy);
}

// The contain sandbox as an attacker sees it: a hostile agent (a script in
// place of the ACP agent) probes what it can read and write, prints each
// answer on stderr and fails; the run's error quotes that stderr. The
// server's files live outside /tmp here (the sandbox's /tmp is always a
// fresh one, which would hide them anyway).
TEST(AgentContain, TheAgentSeesAReadOnlyHostWithoutTheServersSecretsOrOtherSessions) {
  // Under /var/tmp, not the build directory: a checkout may itself be under /tmp.
  const auto base = fs::path("/var/tmp") / ("tether-contain-test-" + std::to_string(::getpid()));
  const auto build = base / "host";  // a host directory the agent must not write
  fs::create_directories(build);
  fs::create_directories(base / "tmp");
  fs::create_directories(base / "roots" / "other-ws");
  std::ofstream(base / "roots" / "other-ws" / "secret.txt") << "another session's work";
  fs::create_directories(base / "pgsock");
  std::ofstream(base / "pgsock" / ".s.PGSQL.5432") << "";
  const char* tmpdir = std::getenv("TMPDIR");
  const std::string saved_tmpdir = tmpdir != nullptr ? tmpdir : "";
  ::setenv("TMPDIR", (base / "tmp").c_str(), 1);
  ::setenv("PGHOST", (base / "pgsock").c_str(), 1);
  const auto restore = [&] {
    if (saved_tmpdir.empty()) ::unsetenv("TMPDIR"); else ::setenv("TMPDIR", saved_tmpdir.c_str(), 1);
    ::unsetenv("PGHOST");
  };
  {
    const auto data = [&](cluster& c) { return (c.dir() / "data").string(); };
    std::optional<cluster> c;
    // The script exists before the server starts (it checks the profile's
    // command); the paths it probes, known only then, come from paths.sh.
    const auto hostile = base / "hostile.sh";
    std::ofstream(hostile) << "#!/bin/bash\n. " << (base / "paths.sh").string() << "\n"
                           << "p() { if eval \"$2\" >/dev/null 2>&1; then echo \"$1=open\" >&2; else echo \"$1=closed\" >&2; fi; }\n"
                           << "p config 'grep -q profiles \"$CONFIG\"'\n"
                           << "p token 'cat \"$DATA/token\"'\n"
                           << "p store 'test -e \"$DATA/tether.db\"'\n"
                           << "p other_ws 'cat " << (base / "roots" / "other-ws" / "secret.txt").string() << "'\n"
                           << "p pg_socket 'test -e " << (base / "pgsock" / ".s.PGSQL.5432").string() << "'\n"
                           << "p write_host 'touch " << (build / ".contain-probe").string() << "'\n"
                           << "p read_host 'test -r /etc/hostname'\n"
                           << "p write_ws 'touch ./mine'\n"
                           << "p write_home 'touch \"$HOME/mine\"'\n"
                           << "echo \"pg_env=$(env | grep -c '^PG')\" >&2\n"
                           << "echo not-json\nexit 3\n";
    fs::permissions(hostile, fs::perms::owner_all);
    c.emplace(std::vector<std::string>{},
              "workspace_roots = [\"" + (base / "roots").string() + "\"]\n" +
                  "\n[profiles.hostile]\nruntime = \"acp\"\nmodel = \"scripted\"\ncommand = \"" + hostile.string() + "\"\n");
    std::ofstream(base / "paths.sh") << "CONFIG=" << (c->dir() / "tether.toml").string() << "\nDATA=" << data(*c) << "\n";
    auto other = c->call("POST", "/v1/sessions", json::object{{"workspace", (base / "roots" / "other-ws").string()}});
    ASSERT_EQ(other.status, 201u) << other.body;
    auto r = c->call("POST", "/v1/sessions", json::object{{"profile", "hostile"}});
    ASSERT_EQ(r.status, 201u) << r.body;
    const std::string s(r.json.at("session").at("id").as_string());
    c->send(s, "Reply with exactly: never");
    c->wait_idle(s, 60s);
    const auto runs = c->executions(s);
    ASSERT_FALSE(runs.empty());
    const std::string error(runs.back().at("error").as_string());
    for (const char* closed : {"config=closed", "token=closed", "store=closed", "other_ws=closed", "pg_socket=closed",
                               "write_host=closed", "pg_env=0"})
      EXPECT_NE(error.find(closed), std::string::npos) << closed << " in " << error;
    for (const char* open : {"read_host=open", "write_ws=open", "write_home=open"})
      EXPECT_NE(error.find(open), std::string::npos) << open << " in " << error;
    EXPECT_FALSE(fs::exists(build / ".contain-probe"));
    c.reset();
  }
  restore();
  std::error_code ec;
  fs::remove_all(base, ec);
}

// What an agent reaches of the network, as a hostile agent (a script in
// place of the ACP agent) probes it: the model server and Tether's API on
// the host's loopback, and the model relay with its run's token. It prints
// each answer on stderr and fails; the run's error quotes that stderr.
std::string probe_network(const std::string& network) {
  const auto base = fs::path("/var/tmp") / ("tether-relay-test-" + std::to_string(::getpid()) + "-" + network);
  fs::create_directories(base);
  const auto hostile = base / "probe.sh";
  std::ofstream(hostile)
      << "#!/bin/bash\n. " << (base / "ports.sh").string() << "\n"
      << "p() { if timeout 5 bash -c \"exec 3<>/dev/tcp/127.0.0.1/$2\" 2>/dev/null; then echo \"$1=open\" >&2; "
         "else echo \"$1=closed\" >&2; fi; }\n"
      << "p model_direct $MOCK_PORT\np tether_api $API_PORT\n"
      << "rest=${TETHER_MODEL_BASE_URL#http://127.0.0.1:}; port=${rest%%/*}; path=${rest#$port}\n"
      << "body='{\"model\":\"m\",\"input\":\"Reply with exactly: through the relay\"}'\n"
      << "if exec 3<>/dev/tcp/127.0.0.1/$port; then\n"
      << "  printf 'POST %s/responses HTTP/1.1\\r\\nHost: x\\r\\nAuthorization: Bearer %s\\r\\nContent-Type: "
         "application/json\\r\\nConnection: close\\r\\nContent-Length: %d\\r\\n\\r\\n%s' \"$path\" "
         "\"$TETHER_MODEL_KEY\" ${#body} \"$body\" >&3\n"
      << "  reply=$(timeout 10 cat <&3)\nfi\n"
      << "echo \"relay_status=$(head -1 <<<\"$reply\" | cut -d' ' -f2)\" >&2\n"
      << "grep -q 'through the relay' <<<\"$reply\" && echo relay_answer=yes >&2\n"
      << "echo not-json\nexit 3\n";
  fs::permissions(hostile, fs::perms::owner_all);
  std::string error;
  {
    cluster c({}, "\n[profiles.probe]\nruntime = \"acp\"\nbase_url = \"{mock}/v1\"\nmodel = \"m\"\nnetwork = \"" +
                      network + "\"\ncommand = \"" + hostile.string() + "\"\n");
    std::ofstream(base / "ports.sh") << "MOCK_PORT=" << c.mock_port() << "\nAPI_PORT=" << c.port() << "\n";
    auto r = c.call("POST", "/v1/sessions", json::object{{"profile", "probe"}});
    EXPECT_EQ(r.status, 201u) << r.body;
    const std::string s(r.json.at("session").at("id").as_string());
    c.send(s, "Reply with exactly: never");
    c.wait_idle(s, 60s);
    const auto runs = c.executions(s);
    if (!runs.empty()) error = std::string(runs.back().at("error").as_string());
  }
  std::error_code ec;
  fs::remove_all(base, ec);
  return error;
}

TEST(AgentRelay, ARelayOnlyAgentReachesItsModelThroughTheRelayAndNothingElse) {
  const auto error = probe_network("relay-only");
  for (const char* seen : {"model_direct=closed", "tether_api=closed", "relay_status=200", "relay_answer=yes"})
    EXPECT_NE(error.find(seen), std::string::npos) << seen << " in " << error;
}

TEST(AgentRelay, AFullNetworkAgentReachesTheHostsLoopbackToo) {
  const auto error = probe_network("full");
  for (const char* seen : {"model_direct=open", "tether_api=open", "relay_status=200", "relay_answer=yes"})
    EXPECT_NE(error.find(seen), std::string::npos) << seen << " in " << error;
}

// The agent process that served an execution (executions.agent_process.pid; 0 when none was recorded).
std::int64_t served_by(const json::value& x) {
  const auto* p = x.as_object().if_contains("agent_process");
  if (p == nullptr || !p->is_object()) return 0;
  const auto* pid = p->as_object().if_contains("pid");
  return pid != nullptr && pid->is_int64() ? pid->as_int64() : 0;
}

TEST_P(AgentRuntime, ServesASessionFromOneWarmProcessAndResumesInANewOneAfterAKill) {
  if (!GetParam().warm) GTEST_SKIP() << GetParam().kind << " runs a process per turn";
  TETHER_REQUIRE_AGENT(bin, GetParam().binary);
  cluster c({}, profile_config(GetParam()));
  const auto s = create(c);
  say(c, s, "Remember the phrase: silver birch");
  say(c, s, "Reply with exactly: second");
  say(c, s, "Recall the phrase.");
  EXPECT_EQ(c.last_answer(s), "silver birch");
  const auto first = binding(c, s);
  auto runs = c.executions(s);
  ASSERT_EQ(runs.size(), 3u);
  const auto pid = served_by(runs[0]);
  ASSERT_GT(pid, 0) << json::serialize(runs[0]);
  for (const auto& x : runs) EXPECT_EQ(served_by(x), pid) << json::serialize(x);
  // It is the live process: between turns it waits for the next one.
  EXPECT_EQ(::kill(static_cast<pid_t>(pid), 0), 0);
  c.kill_server(SIGKILL);
  c.start_server();
  say(c, s, "Recall the phrase.");
  EXPECT_EQ(c.last_answer(s), "silver birch");
  runs = c.executions(s);
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_GT(served_by(runs[3]), 0);
  EXPECT_NE(served_by(runs[3]), pid) << "the killed server's agent process served the next turn";
  EXPECT_EQ(binding(c, s), first);  // the new process resumed the agent's session
  expect_no_agent_left(c, true);
}

// A follow-up sent while the agent waits in a tool: where the protocol takes
// input mid-turn it is promoted at once and the agent's next model request,
// inside the same turn, follows it (the first turn's answer is never
// given); elsewhere it waits for the turn's end and runs as the next turn.
TEST_P(AgentRuntime, AFollowUpSentMidTurnReachesTheAgentWhereItCan) {
  if (!GetParam().warm) GTEST_SKIP() << GetParam().kind << " takes no input mid-turn";
  TETHER_REQUIRE_AGENT(bin, GetParam().binary);
  cluster c({}, profile_config(GetParam()));
  const auto s = create(c);
  say(c, s, "Reply with exactly: ready");  // the process is warm
  const auto before = c.model_requests().size();
  // In the workspace: a contained agent has a /tmp of its own, so a flag
  // elsewhere under /tmp would never appear to its tool.
  const auto flag = fs::path(std::string(c.session(s).at("workspace").as_string())) / "go";
  c.send(s, "Wait for file " + flag.string() + "\nReply with exactly: FIRST");
  const auto until = std::chrono::steady_clock::now() + 120s;
  while (c.model_requests().size() <= before && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(100ms);
  std::this_thread::sleep_for(500ms);
  const auto steer = c.send(s, "Reply with exactly: STEERED");
  const std::string steer_id(steer.at("id").as_string());
  auto promoted = [&] {
    const auto listed = c.call("GET", "/v1/sessions/" + s + "/inputs");  // kept: the loop reads into it
    for (const auto& in : listed.json.at("inputs").as_array())
      if (in.at("id").as_string() == steer_id) return !in.at("promoted_seq").is_null();
    return false;
  };
  if (GetParam().steer) {
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (!promoted() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(50ms);
    ASSERT_TRUE(promoted()) << "the steer was not delivered into the running turn";
    std::this_thread::sleep_for(1s);  // the agent has it before its tool ends
  } else {
    std::this_thread::sleep_for(1s);
    EXPECT_FALSE(promoted()) << "the steer was promoted while the turn ran";
  }
  std::ofstream(flag) << "go";
  c.wait_idle(s, 120s);
  EXPECT_EQ(c.last_answer(s), "STEERED");
  std::vector<std::string> answers;
  for (const auto& m : c.messages(s))
    if (m.at("role").as_string() == "assistant" && m.as_object().contains("text"))
      answers.emplace_back(m.at("text").as_string());
  const bool answered_first = std::find(answers.begin(), answers.end(), "FIRST") != answers.end();
  const auto runs = c.executions(s);
  if (GetParam().steer) {
    EXPECT_FALSE(answered_first) << "the turn ended before the follow-up reached it";
    EXPECT_EQ(runs.size(), 2u);  // "ready", then one turn for both inputs
    // The model's request log: the request that carries the follow-up
    // continues the first input's turn (its tool's result is in it).
    bool inside = false;
    for (const auto& r : c.model_requests()) {
      const auto text = json::serialize(r);
      if (text.find("STEERED") != std::string::npos && text.find("FIRST") != std::string::npos) inside = true;
    }
    EXPECT_TRUE(inside);
  } else {
    // The first turn answered; the follow-up ran as the next turn of the
    // same run (the runner's turn loop promotes it at the boundary).
    EXPECT_TRUE(answered_first);
    EXPECT_EQ(runs.size(), 2u);
  }
  expect_no_agent_left(c, true);
}

// Without bubblewrap (no pid namespace), what an agent starts in a session
// of its own outlives the kill of its group and can keep the agent's output
// open. An interrupted turn still ends: its reads are given up a moment
// after the kill, instead of waiting for an end of output that never comes.
TEST(AgentOutput, AnInterruptedTurnEndsThoughAnEscapedProcessHoldsItsOutput) {
  const auto escaping = script("escaping", "/usr/bin/setsid /bin/sleep 600 &\nexec /bin/sleep 600\n");
  const std::string path = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "/usr/bin:/bin";
  ::setenv("PATH", "/nonexistent", 1);  // the server finds no bubblewrap: the agent runs unsandboxed
  std::optional<cluster> c;
  c.emplace(std::vector<std::string>{}, "\n[profiles.esc]\nruntime = \"codex-exec\"\ncommand = \"" + escaping.string() +
                                            "\"\nbase_url = \"{mock}/v1\"\nmodel = \"m\"\n");
  ::setenv("PATH", path.c_str(), 1);
  auto r = c->call("POST", "/v1/sessions", json::object{{"profile", "esc"}});
  ASSERT_EQ(r.status, 201u) << r.body;
  const std::string s(r.json.at("session").at("id").as_string());
  c->send(s, "hello");
  const auto data = c->dir() / "data";
  // Both must be `sleep` by now, one in a session of its own: counting
  // processes alone also counted the forked shell before it had called
  // setsid, which the interrupt then killed with the agent's group (seen
  // under load).
  const auto set_free = [&] {
    int sleeping = 0;
    bool escaped = false;
    for (const int pid : agent_processes(data)) {
      std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
      const std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      const auto close = stat.rfind(')');
      if (stat.find("(sleep)") == std::string::npos || close == std::string::npos) continue;
      ++sleeping;
      std::istringstream rest(stat.substr(close + 2));
      std::string state;
      long ppid = 0, pgrp = 0, session = 0;
      rest >> state >> ppid >> pgrp >> session;
      escaped = escaped || session == pid;
    }
    return sleeping == 2 && escaped;
  };
  for (int i = 0; i < 300 && !set_free(); ++i) std::this_thread::sleep_for(100ms);
  ASSERT_TRUE(set_free()) << "the agent and the process it set free";
  EXPECT_EQ(c->call("POST", "/v1/sessions/" + s + "/interrupt").status, 200u);
  c->wait_idle(s, 60s);  // without giving up the reads, the turn would run until the escaped sleep ends
  const auto runs = c->executions(s);
  ASSERT_FALSE(runs.empty());
  EXPECT_EQ(runs.back().at("outcome").as_string(), "interrupted");
  // Nothing contained the escaped process: it is still there, and the test ends it.
  const auto left = agent_processes(data);
  EXPECT_EQ(left.size(), 1u);
  for (const int pid : left) ::kill(pid, SIGKILL);
  c.reset();
  fs::remove(escaping);
}

INSTANTIATE_TEST_SUITE_P(Agents, AgentRuntime,
                         ::testing::Values(codex, claude, opencode, codex_server, claude_stream, opencode_serve, acp_codex,
                                           acp_claude, acp_opencode),
                         [](const ::testing::TestParamInfo<agent_case>& i) { return i.param.profile; });

}  // namespace
}  // namespace tether::e2e
