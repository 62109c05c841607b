// Turns in a Daytona sandbox, end to end: a real `tether serve` whose
// claude-print profile names an environment of kind "daytona" on the
// project's Daytona-compatible server; the sandbox sees the agent program
// at the same path (the profile's command) and reaches the model relay at
// reach_host. Two turns append to one file in the sandbox: the sandbox is
// created, then kept warm (one provider id), and the host copy holds what
// the agent wrote. An agent there asks through Tether's tools.
#include <signal.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "env/environment.h"
#include "server/harness.h"
#include "support/agents.h"
#include "support/daytona/fake_daytona.h"
#include "support/files.h"

namespace tether::e2e {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace std::chrono_literals;

std::vector<json::object> events_of(cluster& c, const std::string& s, const std::string& type) {
  auto r = c.call("GET", "/v1/sessions/" + s + "/events?limit=1000");
  EXPECT_EQ(r.status, 200u) << r.body;
  std::vector<json::object> out;
  for (const auto& e : r.json.at("events").as_array())
    if (e.at("type").as_string() == type) out.push_back(e.at("data").as_object());
  return out;
}

// The environment "cloud" on the fake, and the profile "sandboxed" (claude-print there). The key reaches
// the server through its environment, never the configuration.
std::string config_for(const test::daytona::fake_daytona& fake, const fs::path& claude) {
  ::setenv("TETHER_TEST_DAYTONA_KEY", "fake-daytona-key", 1);
  return "\n[environments.cloud]\nkind = \"daytona\"\napi_url = \"" + fake.api_url() +
         "\"\napi_key_env = \"TETHER_TEST_DAYTONA_KEY\"\nreach_host = \"127.0.0.1\"\n"
         "\n[profiles.sandboxed]\nruntime = \"claude-print\"\nenvironment = \"cloud\"\ncommand = \"" +
         claude.string() + "\"\nbase_url = \"{mock}\"\nmodel = \"scripted\"\nidle_timeout_ms = 120000\n";
}

TEST(DaytonaTurns, TwoTurnsInOneSandboxCreatedThenKeptWarm) {
  TETHER_REQUIRE_AGENT(claude, "claude");
  const fs::path modules = claude.parent_path().parent_path();  // …/node_modules
  test::daytona::fake_options fo;
  fo.read_only = {{modules, modules.string()}};
  test::daytona::fake_daytona fake(fo);
  ASSERT_TRUE(fake.start());
  const std::string config = config_for(fake, claude);
  cluster c({}, config);
  auto created = c.call("POST", "/v1/sessions", json::object{{"profile", "sandboxed"}});
  ASSERT_EQ(created.status, 201u) << created.body;
  const std::string s(created.json.at("session").at("id").as_string());
  const auto host_copy = c.dir() / "data" / "workspaces" / s;

  c.send(s, "Append line T1-alpha to log.txt\nReply with exactly: ONE");
  c.wait_idle(s, 120s);
  EXPECT_EQ(c.last_answer(s), "ONE") << json::serialize(c.executions(s));
  EXPECT_EQ(test::slurp(host_copy / "log.txt"), "T1-alpha\n");
  const auto root = fake.sandbox_root(env::provider_name("session-" + s));  // made by the turn
  EXPECT_EQ(test::slurp(root / "home/daytona/workspace/log.txt"), "T1-alpha\n");
  c.send(s, "Append line T2-beta to log.txt\nReply with exactly: TWO");
  c.wait_idle(s, 120s);
  EXPECT_EQ(c.last_answer(s), "TWO") << json::serialize(c.executions(s));
  EXPECT_EQ(test::slurp(host_copy / "log.txt"), "T1-alpha\nT2-beta\n");
  const auto acquired = events_of(c, s, "env.lease.acquired");
  ASSERT_EQ(acquired.size(), 2U);
  EXPECT_EQ(acquired[0].at("outcome").as_string(), "created");
  EXPECT_EQ(acquired[1].at("outcome").as_string(), "resumed");
  EXPECT_TRUE(acquired[1].at("warm").as_bool());
  EXPECT_EQ(acquired[0].at("provider_id"), acquired[1].at("provider_id"));
  EXPECT_EQ(fake.sandboxes(), 1U);
  // A clean stop stops the sandbox; it is not deleted.
  c.kill_server(SIGTERM);
  EXPECT_EQ(fake.state_of(env::provider_name("session-" + s)), "stopped");
}

// Tether's tools from a sandbox: it forwards no Unix socket, so `tether mcp`
// there (from the sandbox's PATH) reaches the tool bridge's TCP port at
// reach_host. The agent asks through Tether; the question waits for a
// person; the answer reaches the agent's next turn.
TEST(DaytonaTurns, AnAgentThereAsksThroughTetherAndGetsTheAnswer) {
  TETHER_REQUIRE_AGENT(claude, "claude");
  const fs::path modules = claude.parent_path().parent_path();  // …/node_modules
  test::daytona::fake_options fo;
  fo.read_only = {{modules, modules.string()}, {tether_binary(), "/usr/local/bin/tether"}};
  test::daytona::fake_daytona fake(fo);
  ASSERT_TRUE(fake.start());
  const std::string config = config_for(fake, claude);
  cluster c({}, config);
  auto created = c.call("POST", "/v1/sessions", json::object{{"profile", "sandboxed"}});
  ASSERT_EQ(created.status, 201u) << created.body;
  const std::string s(created.json.at("session").at("id").as_string());
  c.send(s, "Ask: Which colour? | Red | Blue\nReply with the answer.");
  const auto waiting = c.wait_idle(s, 120s);
  ASSERT_EQ(waiting.at("status").as_string(), "waiting") << json::serialize(c.executions(s));
  const auto listed = c.call("GET", "/v1/sessions/" + s + "/interactions");
  ASSERT_EQ(listed.json.at("interactions").as_array().size(), 1U) << listed.body;
  const auto& it = listed.json.at("interactions").at(0);
  EXPECT_EQ(it.at("kind").as_string(), "question");
  const json::object answer{
      {"answers", json::array{json::object{{"question_id", "q1"}, {"option_ids", json::array{"blue"}}}}}};
  const auto r = c.call("POST", "/v1/interactions/" + std::string(it.at("id").as_string()) + "/answer", answer);
  EXPECT_EQ(r.status, 200u) << r.body;
  c.wait_idle(s, 120s);
  EXPECT_EQ(c.last_answer(s), "Blue") << json::serialize(c.executions(s));
}

}  // namespace
}  // namespace tether::e2e
