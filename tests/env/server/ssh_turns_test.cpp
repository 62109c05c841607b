// Turns in an SSH environment, end to end: a real `tether serve` whose
// profile (claude-print, one agent process per turn; claude and opencode
// serve, warm; native) names an environment
// on the test's sshd, the agent program and `tether` seen there, the model
// relay and the tool bridge forwarded over the lease's connection. Three
// turns append to one file there: the lease is created, kept warm, and
// after a SIGKILL of Tether found again (resumed) — one provider id — and
// the host copy holds what the agent wrote.
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "env/environment.h"
#include "server/harness.h"
#include "support/agents.h"
#include "support/files.h"
#include "support/sshd.h"

namespace tether::e2e {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace std::chrono_literals;

// The session's env.* events, in order: (type, data).
std::vector<std::pair<std::string, json::object>> env_events(cluster& c, const std::string& s) {
  auto r = c.call("GET", "/v1/sessions/" + s + "/events?limit=1000");
  EXPECT_EQ(r.status, 200u) << r.body;
  std::vector<std::pair<std::string, json::object>> out;
  for (const auto& e : r.json.at("events").as_array()) {
    const std::string type(e.at("type").as_string());
    if (type.rfind("env.", 0) == 0) out.emplace_back(type, e.at("data").as_object());
  }
  return out;
}

std::vector<json::object> of_type(const std::vector<std::pair<std::string, json::object>>& events,
                                  const std::string& type) {
  std::vector<json::object> out;
  for (const auto& [t, d] : events)
    if (t == type) out.push_back(d);
  return out;
}

// The environment "box" on the test's sshd, the agent programs beside `agents_bin` on its PATH.
std::string environment_for(const test::sshd& server, const fs::path& agents_bin) {
  const auto o = server.options();
  return "\n[environments.box]\nkind = \"ssh\"\nhost = \"" + o.host + "\"\nport = " + std::to_string(o.port) +
         "\nuser = \"agent\"\nidentity_file = \"" + o.identity_file.string() + "\"\nknown_hosts = \"" +
         o.known_hosts.string() + "\"\nremote_root = \"/home/agent/leases\"\ncontrol_dir = \"" +
         o.control_dir.string() + "\"\nremote_path = \"/opt/tether/bin:" + agents_bin.string() +
         ":/usr/bin:/bin\"\nkeep_warm_ms = 600000\n";
}

std::string config_for(const test::sshd& server, const fs::path& agents_bin) {
  return environment_for(server, agents_bin) +
         "\n[profiles.remote]\nruntime = \"claude-print\"\nenvironment = \"box\"\nbase_url = \"{mock}\"\n"
         "model = \"scripted\"\nidle_timeout_ms = 120000\n";
}

// The profile "remote" as the native runtime on the scripted model there, with `extra` profile lines.
std::string native_config_for(const test::sshd& server, const std::string& extra) {
  return environment_for(server, "/nowhere") +
         "\n[profiles.remote]\nruntime = \"native\"\nprovider = \"openai-chat\"\nenvironment = \"box\"\n"
         "base_url = \"{mock}/v1\"\nmodel = \"scripted\"\n" + extra;
}

// The test's sshd, where the agent programs (beside `agents_bin`) and `tether` are seen at the paths the profile names.
result<std::unique_ptr<test::sshd>> sshd_with_agents(const fs::path& agents_bin) {
  const fs::path modules = agents_bin.parent_path();  // …/node_modules
  test::sshd_options so;
  so.read_only = {{modules, modules.string()}, {tether_binary(), "/opt/tether/bin/tether"}};
  return test::sshd::start(so);
}

// A session of the profile that runs in the environment.
std::string remote_session(cluster& c) {
  auto created = c.call("POST", "/v1/sessions", json::object{{"profile", "remote"}});
  EXPECT_EQ(created.status, 201u) << created.body;
  return std::string(created.json.at("session").at("id").as_string());
}

TEST(SshTurns, ThreeTurnsOnOneLeaseCreatedKeptWarmAndFoundAgainAfterASigkill) {
  TETHER_REQUIRE_AGENT(claude, "claude");
  const fs::path agents_bin = claude.parent_path();  // …/node_modules/.bin
  auto server = sshd_with_agents(agents_bin);
  ASSERT_TRUE(server) << server.error().describe();
  cluster c({}, config_for(**server, agents_bin));
  const std::string s = remote_session(c);
  const auto lease_dir = "/home/agent/leases/" + env::provider_name("session-" + s);
  const auto host_copy = c.dir() / "data" / "workspaces" / s;

  c.send(s, "Append line T1-alpha to log.txt\nReply with exactly: ONE");
  c.wait_idle(s, 120s);
  EXPECT_EQ(c.last_answer(s), "ONE") << json::serialize(c.executions(s));
  EXPECT_EQ(test::slurp(host_copy / "log.txt"), "T1-alpha\n");
  EXPECT_EQ(test::slurp((*server)->host_path(lease_dir + "/workspace/log.txt")), "T1-alpha\n");
  // The agent ran there: its home is the lease's, and the turn's prompt file is not left in it.
  EXPECT_TRUE(fs::is_directory((*server)->host_path(lease_dir + "/agent-home/.claude")));
  for (const auto& e : fs::directory_iterator((*server)->host_path(lease_dir + "/agent-home")))
    EXPECT_NE(e.path().filename().string().rfind("prompt-", 0), 0U) << e.path();
  auto events = env_events(c, s);
  ASSERT_EQ(of_type(events, "env.lease.requested").size(), 1U) << events.size();
  auto acquired = of_type(events, "env.lease.acquired");
  ASSERT_EQ(acquired.size(), 1U);
  EXPECT_EQ(acquired[0].at("outcome").as_string(), "created");
  EXPECT_FALSE(acquired[0].at("warm").as_bool());
  const std::string id(acquired[0].at("provider_id").as_string());
  auto syncs = of_type(events, "env.workspace.synced");
  ASSERT_EQ(syncs.size(), 2U);
  EXPECT_EQ(syncs[0].at("direction").as_string(), "up");
  EXPECT_EQ(syncs[1].at("direction").as_string(), "down");

  c.send(s, "Append line T2-beta to log.txt\nReply with exactly: TWO");
  c.wait_idle(s, 120s);
  EXPECT_EQ(c.last_answer(s), "TWO") << json::serialize(c.executions(s));
  events = env_events(c, s);
  EXPECT_EQ(of_type(events, "env.lease.requested").size(), 1U);  // warm: no new request
  acquired = of_type(events, "env.lease.acquired");
  ASSERT_EQ(acquired.size(), 2U);
  EXPECT_EQ(acquired[1].at("outcome").as_string(), "resumed");
  EXPECT_TRUE(acquired[1].at("warm").as_bool());
  EXPECT_EQ(acquired[1].at("provider_id").as_string(), id);
  // Nothing changed here since the last sync: the workspace did not go up again.
  syncs = of_type(events, "env.workspace.synced");
  ASSERT_EQ(syncs.size(), 3U);
  EXPECT_EQ(syncs[2].at("direction").as_string(), "down");

  c.kill_server(SIGKILL);
  c.start_server();
  c.send(s, "Append line T3-gamma to log.txt\nReply with exactly: THREE");
  c.wait_idle(s, 120s);
  EXPECT_EQ(c.last_answer(s), "THREE") << json::serialize(c.executions(s));
  EXPECT_EQ(test::slurp(host_copy / "log.txt"), "T1-alpha\nT2-beta\nT3-gamma\n");
  events = env_events(c, s);
  EXPECT_EQ(of_type(events, "env.lease.requested").size(), 2U);
  acquired = of_type(events, "env.lease.acquired");
  ASSERT_EQ(acquired.size(), 3U);
  EXPECT_EQ(acquired[2].at("outcome").as_string(), "resumed");
  EXPECT_FALSE(acquired[2].at("warm").as_bool());
  EXPECT_EQ(acquired[2].at("provider_id").as_string(), id);
  for (const auto& e : of_type(events, "env.lease.released")) ADD_FAILURE() << json::serialize(e);

  // A clean stop stops the lease (its directory stays for the next turn).
  c.kill_server(SIGTERM);
  c.start_server();
  events = env_events(c, s);
  const auto released = of_type(events, "env.lease.released");
  ASSERT_EQ(released.size(), 1U);
  EXPECT_EQ(released[0].at("reason").as_string(), "shutdown");
  EXPECT_TRUE(fs::exists((*server)->host_path(lease_dir + "/workspace/log.txt")));
}

// Processes of this machine (the sshd's namespace included) whose command line holds `needle`.
std::vector<int> processes_with(const std::string& needle) {
  std::vector<int> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const auto name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = test::slurp(e.path() / "cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(needle) != std::string::npos) out.push_back(std::stoi(name));
  }
  return out;
}

// Tether killed while the agent's command runs there: the program it left
// running is stopped before the next turn, the turn is told, and nothing
// runs it again behind the agent's back.
TEST(SshTurns, ASigkillMidTurnLeavesNothingRunningThereAndTheNextTurnIsTold) {
  TETHER_REQUIRE_AGENT(claude, "claude");
  const fs::path agents_bin = claude.parent_path();  // …/node_modules/.bin
  auto server = sshd_with_agents(agents_bin);
  ASSERT_TRUE(server) << server.error().describe();
  cluster c({}, config_for(**server, agents_bin));
  const std::string s = remote_session(c);
  const auto remote_ws =
      (*server)->host_path("/home/agent/leases/" + env::provider_name("session-" + s) + "/workspace");
  c.send(s, "Remember the phrase: blue kite\nReply with exactly: NOTED");
  c.wait_idle(s, 120s);
  ASSERT_EQ(c.last_answer(s), "NOTED") << json::serialize(c.executions(s));

  const std::string loop = "while [ ! -e go-" + s + " ]; do sleep 0.2; done";
  c.send(s, "Run: touch started && " + loop + "; echo once >> ran.txt\nReply with exactly: RAN");
  const auto until = std::chrono::steady_clock::now() + 120s;
  while (!fs::exists(remote_ws / "started") && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(100ms);
  ASSERT_TRUE(fs::exists(remote_ws / "started"));
  ASSERT_FALSE(processes_with(loop).empty());
  c.kill_server(SIGKILL);
  ASSERT_FALSE(processes_with(loop).empty());  // it outlived Tether, there

  c.start_server();
  c.send(s, "Recall the phrase.");
  // Told before anything else ran there: then the loop is gone.
  json::object notice;
  const auto told_by = std::chrono::steady_clock::now() + 120s;
  while (notice.empty() && std::chrono::steady_clock::now() < told_by) {
    const auto page = c.call("GET", "/v1/sessions/" + s + "/events?limit=1000");
    for (const auto& e : page.json.at("events").as_array())
      if (e.at("type").as_string() == "synthetic" && e.at("data").at("reason").as_string() == "environment")
        notice = e.at("data").as_object();
    if (notice.empty()) std::this_thread::sleep_for(100ms);
  }
  ASSERT_FALSE(notice.empty());
  EXPECT_NE(notice.at("text").as_string().find("was still running"), std::string::npos) << json::serialize(notice);
  // It names the agent's program, not the shell that started it there.
  EXPECT_NE(notice.at("text").as_string().find("claude (command"), std::string::npos) << json::serialize(notice);
  EXPECT_TRUE(processes_with(loop).empty());
  // Now nothing is left to finish the loop; a command the agent issues again may.
  std::ofstream(remote_ws / ("go-" + s)).put('x');
  c.wait_idle(s, 120s);
  EXPECT_EQ(c.last_answer(s), "blue kite") << json::serialize(c.executions(s));
  const auto ran = test::slurp(c.dir() / "data" / "workspaces" / s / "ran.txt");
  EXPECT_LE(std::count(ran.begin(), ran.end(), '\n'), 1) << ran;
}

// A warm agent kind there: one process there serves the session's turns
// while the lease stays warm (the same pid each turn, started once), the
// files it writes come back after each turn, and a stop reaches it there.
TEST(SshTurns, AWarmAgentThereServesEveryTurnFromOneProcessAndAStopReachesIt) {
  TETHER_REQUIRE_AGENT(claude, "claude");
  const fs::path agents_bin = claude.parent_path();
  auto server = sshd_with_agents(agents_bin);
  ASSERT_TRUE(server) << server.error().describe();
  std::string config = config_for(**server, agents_bin);
  config.replace(config.find("runtime = \"claude-print\""), std::string("runtime = \"claude-print\"").size(),
                 "runtime = \"claude\"");
  cluster c({}, config);
  const std::string s = remote_session(c);
  const auto host_copy = c.dir() / "data" / "workspaces" / s;
  for (const char* n : {"1", "2", "3"}) {
    c.send(s, std::string("Append line T") + n + " to log.txt\nReply with exactly: R" + n);
    c.wait_idle(s, 120s);
    EXPECT_EQ(c.last_answer(s), std::string("R") + n) << json::serialize(c.executions(s));
  }
  EXPECT_EQ(test::slurp(host_copy / "log.txt"), "T1\nT2\nT3\n");
  std::vector<std::int64_t> pids;
  for (const auto& x : c.executions(s)) {
    const auto* p = x.as_object().if_contains("agent_process");
    ASSERT_TRUE(p != nullptr && p->is_object()) << json::serialize(x);
    pids.push_back(p->at("pid").as_int64());
  }
  ASSERT_EQ(pids.size(), 3U);
  EXPECT_EQ(pids[0], pids[1]);
  EXPECT_EQ(pids[1], pids[2]);
  // The agent's own state is in the lease's home there, not this machine's.
  const auto lease_dir = "/home/agent/leases/" + env::provider_name("session-" + s);
  EXPECT_TRUE(fs::is_directory((*server)->host_path(lease_dir + "/agent-home/.claude")));
  EXPECT_FALSE(fs::exists(c.dir() / "data" / "agents" / s));
  auto acquired = of_type(env_events(c, s), "env.lease.acquired");
  ASSERT_EQ(acquired.size(), 3U);
  EXPECT_EQ(acquired[1].at("outcome").as_string(), "resumed");
  EXPECT_TRUE(acquired[2].at("warm").as_bool());

  // A stop while its command runs there: the turn ends interrupted, and the command is gone there.
  const std::string loop = "while [ ! -e never-" + s + " ]; do sleep 0.2; done";
  c.send(s, "Run: touch started && " + loop + "\nReply with exactly: NEVER");
  const auto remote_ws = (*server)->host_path(lease_dir + "/workspace");
  const auto until = std::chrono::steady_clock::now() + 120s;
  while (!fs::exists(remote_ws / "started") && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(100ms);
  ASSERT_TRUE(fs::exists(remote_ws / "started"));
  EXPECT_EQ(c.call("POST", "/v1/sessions/" + s + "/interrupt").status, 200u);
  c.wait_idle(s, 120s);
  const auto xs = c.executions(s);
  EXPECT_EQ(xs.back().at("outcome").as_string(), "interrupted") << json::serialize(xs.back());
  const auto gone_by = std::chrono::steady_clock::now() + 30s;
  while (!processes_with(loop).empty() && std::chrono::steady_clock::now() < gone_by)
    std::this_thread::sleep_for(100ms);
  EXPECT_TRUE(processes_with(loop).empty());
}

// The native runtime there: its bash runs in the lease's workspace, its file
// tools on the host copy, and the two copies are in step around each
// command — what `write` made here is there before the command runs, what
// the command made there is here after it, and what a file tool wrote last
// is not lost to the workspace that comes back at the turn's end. A stop
// reaches the command there.
TEST(SshTurns, ANativeTurnRunsItsCommandsThereWithTheFilesItsOtherToolsWroteHere) {
  auto server = test::sshd::start();
  ASSERT_TRUE(server) << server.error().describe();
  const std::string config = native_config_for(**server, "");
  cluster c({}, config);
  const std::string s = remote_session(c);
  const auto host_copy = c.dir() / "data" / "workspaces" / s;
  const std::string lease_ws = "/home/agent/leases/" + env::provider_name("session-" + s) + "/workspace";
  c.send(s,
         "Write file notes.txt: written here\n"
         "Run: pwd > where.txt && cat notes.txt > seen.txt && echo made there > made.txt\n"
         "Write file after.txt: written after the last command\n"
         "Reply with exactly: DONE");
  c.wait_idle(s, 120s);
  ASSERT_EQ(c.last_answer(s), "DONE") << json::serialize(c.executions(s));
  EXPECT_EQ(test::slurp(host_copy / "where.txt"), lease_ws + "\n");  // it ran there, not here
  EXPECT_EQ(test::slurp(host_copy / "seen.txt"), "written here");   // write's file was there first
  EXPECT_EQ(test::slurp(host_copy / "made.txt"), "made there\n");   // and the command's came back
  EXPECT_EQ(test::slurp((*server)->host_path(lease_ws + "/notes.txt")), "written here");
  // What a file tool wrote after the last command went there before the
  // workspace came back at the turn's end, so neither copy lost it.
  EXPECT_EQ(test::slurp(host_copy / "after.txt"), "written after the last command");
  EXPECT_EQ(test::slurp((*server)->host_path(lease_ws + "/after.txt")), "written after the last command");
  const auto acquired = of_type(env_events(c, s), "env.lease.acquired");
  ASSERT_EQ(acquired.size(), 1U);
  EXPECT_EQ(acquired[0].at("outcome").as_string(), "created");

  // A stop while its command runs there: the turn ends interrupted, and the command is gone there.
  const std::string loop = "while [ ! -e never-" + s + " ]; do sleep 0.2; done";
  c.send(s, "Run: touch started && " + loop + "\nReply with exactly: NEVER");
  const auto remote_started = (*server)->host_path(lease_ws + "/started");
  const auto until = std::chrono::steady_clock::now() + 120s;
  while (!fs::exists(remote_started) && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(100ms);
  ASSERT_TRUE(fs::exists(remote_started));
  EXPECT_FALSE(fs::exists(host_copy / "started"));  // the host copy is not written mid-command
  ASSERT_FALSE(processes_with(loop).empty());
  EXPECT_EQ(c.call("POST", "/v1/sessions/" + s + "/interrupt").status, 200u);
  c.wait_idle(s, 120s);
  const auto xs = c.executions(s);
  EXPECT_EQ(xs.back().at("outcome").as_string(), "interrupted") << json::serialize(xs.back());
  const auto gone_by = std::chrono::steady_clock::now() + 30s;
  while (!processes_with(loop).empty() && std::chrono::steady_clock::now() < gone_by)
    std::this_thread::sleep_for(100ms);
  EXPECT_TRUE(processes_with(loop).empty());
  EXPECT_TRUE(fs::exists(host_copy / "started"));  // the turn's end brought the workspace back
}

// The inode of a directory (a pull swaps the whole host copy in: a new one).
ino_t inode_of(const fs::path& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 ? st.st_ino : 0;
}

// Nothing is moved when nothing changed: a turn, or a command, that changed
// nothing there leaves the host copy as it was (the same directory), while
// one that changed a file brings the tree back (a new one swapped in). Each
// turn still records its env.workspace.synced {down}, naming the tree.
TEST(SshTurns, ATurnOrCommandThatChangesNothingThereMovesNoTree) {
  auto server = test::sshd::start();
  ASSERT_TRUE(server) << server.error().describe();
  const std::string config = native_config_for(**server, "");
  cluster c({}, config);
  const std::string s = remote_session(c);
  const auto host_copy = c.dir() / "data" / "workspaces" / s;
  fs::create_directories(host_copy);
  std::ofstream(host_copy / "kept.txt") << "kept";
  const auto say = [&](const std::string& text, const std::string& answer) {
    c.send(s, text + "\nReply with exactly: " + answer);
    c.wait_idle(s, 120s);
    EXPECT_EQ(c.last_answer(s), answer) << json::serialize(c.executions(s));
  };
  const auto at_start = inode_of(host_copy);
  say("Remember the phrase: quiet", "ONE");
  EXPECT_EQ(inode_of(host_copy), at_start);  // sent there, nothing changed, nothing came back
  say("Run: echo x > x.txt", "TWO");
  const auto after_change = inode_of(host_copy);
  EXPECT_NE(after_change, at_start);  // the command's file came back
  EXPECT_EQ(test::slurp(host_copy / "x.txt"), "x\n");
  say("Run: cat x.txt kept.txt", "THREE");
  EXPECT_EQ(inode_of(host_copy), after_change);  // a command that changed nothing: no pull
  const auto down = of_type(env_events(c, s), "env.workspace.synced");
  std::vector<std::string> trees;
  for (const auto& d : down)
    if (d.at("direction").as_string() == "down") trees.emplace_back(d.at("tree_sha256").as_string());
  ASSERT_EQ(trees.size(), 3U);
  EXPECT_NE(trees[1], trees[0]);
  EXPECT_EQ(trees[2], trees[1]);
}

// A read-only native profile there: its command runs, and what it changed
// there is undone (the host copy goes there again), so neither copy keeps it.
TEST(SshTurns, AReadOnlyNativeTurnsCommandThereChangesNeitherCopy) {
  auto server = test::sshd::start();
  ASSERT_TRUE(server) << server.error().describe();
  const std::string config = native_config_for(**server, "sandbox = \"read-only\"\n");
  cluster c({}, config);
  const std::string s = remote_session(c);
  const auto host_copy = c.dir() / "data" / "workspaces" / s;
  fs::create_directories(host_copy);
  std::ofstream(host_copy / "kept.txt") << "as it was";
  const std::string lease_ws = "/home/agent/leases/" + env::provider_name("session-" + s) + "/workspace";
  c.send(s, "Run: cat kept.txt && echo changed > kept.txt && echo new > new.txt\nReply with exactly: TRIED");
  c.wait_idle(s, 120s);
  ASSERT_EQ(c.last_answer(s), "TRIED") << json::serialize(c.executions(s));
  EXPECT_EQ(test::slurp(host_copy / "kept.txt"), "as it was");
  EXPECT_FALSE(fs::exists(host_copy / "new.txt"));
  EXPECT_EQ(test::slurp((*server)->host_path(lease_ws + "/kept.txt")), "as it was");
  EXPECT_FALSE(fs::exists((*server)->host_path(lease_ws + "/new.txt")));
}

// opencode serve there: Tether reaches its HTTP server, which listens on the
// loopback where it runs, through a port forwarded here over the lease's
// connection. One process serves both turns, and it asks through Tether.
TEST(SshTurns, AnOpencodeServerThereIsReachedThroughAPortForwardedHere) {
  TETHER_REQUIRE_AGENT(opencode, "opencode");
  const fs::path agents_bin = opencode.parent_path();
  auto server = sshd_with_agents(agents_bin);
  ASSERT_TRUE(server) << server.error().describe();
  std::string config = config_for(**server, agents_bin);
  config.replace(config.find("runtime = \"claude-print\""), std::string("runtime = \"claude-print\"").size(),
                 "runtime = \"opencode\"");
  config.replace(config.find("base_url = \"{mock}\""), std::string("base_url = \"{mock}\"").size(),
                 "base_url = \"{mock}/v1\"");
  cluster c({}, config);
  const std::string s = remote_session(c);
  const auto host_copy = c.dir() / "data" / "workspaces" / s;
  for (const char* n : {"1", "2"}) {
    c.send(s, std::string("Append line T") + n + " to log.txt\nReply with exactly: R" + n);
    c.wait_idle(s, 120s);
    EXPECT_EQ(c.last_answer(s), std::string("R") + n) << json::serialize(c.executions(s));
  }
  EXPECT_EQ(test::slurp(host_copy / "log.txt"), "T1\nT2\n");
  std::vector<std::int64_t> pids;
  for (const auto& x : c.executions(s)) {
    const auto* p = x.as_object().if_contains("agent_process");
    ASSERT_TRUE(p != nullptr && p->is_object()) << json::serialize(x);
    pids.push_back(p->at("pid").as_int64());
  }
  ASSERT_EQ(pids.size(), 2U);
  EXPECT_EQ(pids[0], pids[1]);
  EXPECT_FALSE(fs::exists(c.dir() / "data" / "agents" / s));  // its state is there

  c.send(s, "Ask: Which colour? | Red | Blue\nReply with the answer.");
  const auto waiting = c.wait_idle(s, 120s);
  ASSERT_EQ(waiting.at("status").as_string(), "waiting") << json::serialize(c.executions(s));
  const auto listed = c.call("GET", "/v1/sessions/" + s + "/interactions");
  ASSERT_EQ(listed.json.at("interactions").as_array().size(), 1U) << listed.body;
  const json::object answer{
      {"answers", json::array{json::object{{"question_id", "q1"}, {"option_ids", json::array{"blue"}}}}}};
  const auto id = std::string(listed.json.at("interactions").at(0).at("id").as_string());
  EXPECT_EQ(c.call("POST", "/v1/interactions/" + id + "/answer", answer).status, 200u);
  c.wait_idle(s, 120s);
  EXPECT_EQ(c.last_answer(s), "Blue") << json::serialize(c.executions(s));
}

}  // namespace
}  // namespace tether::e2e
