// Forking a session whole through a real `tether serve` (native runtime,
// the scripted model): POST /v1/sessions/{id}/fork, `tether fork`, what the
// fork recalls, its workspace, the source unaffected, and every refusal.
#include <fstream>

#include <gtest/gtest.h>

#include "server/harness.h"
#include "support/files.h"

namespace tether::e2e {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace std::chrono_literals;

void say(cluster& c, const std::string& s, const std::string& text) {
  c.send(s, text);
  c.wait_idle(s, 60s);
}

json::array events(cluster& c, const std::string& s) {
  return c.call("GET", "/v1/sessions/" + s + "/events?limit=10000").json.at("events").as_array();
}

std::vector<std::int64_t> turn_ends(cluster& c, const std::string& s) {
  std::vector<std::int64_t> out;
  for (const auto& e : events(c, s))
    if (e.at("type").as_string() == "execution.finished") out.push_back(e.at("seq").to_number<std::int64_t>());
  return out;
}

std::vector<std::string> texts(const json::array& messages) {
  std::vector<std::string> out;
  for (const auto& m : messages) out.emplace_back(m.at("text").as_string());
  return out;
}

// Three turns: a phrase, a file written, a later phrase and the file again.
struct three_turns {
  std::string s;
  std::vector<std::int64_t> ends;
};
three_turns three(cluster& c) {
  three_turns t{c.create_session(), {}};
  say(c, t.s, "Remember the phrase: violet harbour");
  say(c, t.s, "Write file notes.txt: two\nReply with exactly: WROTE");
  say(c, t.s, "Write file notes.txt: three\nRemember the phrase: amber lantern");
  t.ends = turn_ends(c, t.s);
  return t;
}

TEST(Fork, AtTurnTwoOfThreeRecallsWhatCameBeforeAndHasThatTurnsWorkspace) {
  cluster c;
  const auto t = three(c);
  ASSERT_EQ(t.ends.size(), 3u);
  const auto source_messages = c.messages(t.s);

  const auto made = c.call("POST", "/v1/sessions/" + t.s + "/fork", json::object{{"at", t.ends[1]}});
  ASSERT_EQ(made.status, 201u) << made.body;
  const auto& view = made.json.at("session").as_object();
  const std::string f(view.at("id").as_string());
  EXPECT_EQ(view.at("forked_from").at("session").as_string(), t.s);
  EXPECT_EQ(view.at("forked_from").at("at").to_number<std::int64_t>(), t.ends[1]);
  EXPECT_EQ(view.at("status").as_string(), "idle");
  EXPECT_EQ(view.at("pending_inputs").to_number<std::int64_t>(), 0);
  // The copied runs cost the fork nothing: the source spent it.
  EXPECT_EQ(view.at("usage").at("input_tokens").to_number<std::int64_t>(), 0);

  // Its transcript is the source's first two turns, under new ids.
  const auto fork_messages = c.messages(f);
  const auto copied = texts(fork_messages);
  const auto all = texts(source_messages);
  ASSERT_LT(copied.size(), all.size());
  EXPECT_EQ(copied, std::vector<std::string>(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(copied.size())));
  EXPECT_NE(fork_messages.front().at("id"), source_messages.front().at("id"));
  for (const auto& m : copied) EXPECT_EQ(m.find("amber lantern"), std::string::npos) << m;

  const fs::path data = c.dir() / "data";
  EXPECT_EQ(test::slurp(data / "workspaces" / f / "notes.txt"), "two");
  EXPECT_EQ(test::slurp(data / "workspaces" / t.s / "notes.txt"), "three");

  say(c, f, "Recall the phrase.");
  EXPECT_EQ(c.last_answer(f), "violet harbour");
  say(c, f, "Write file notes.txt: the fork's\nReply with exactly: OK");

  // The source goes on as if nothing happened, but for its record.
  say(c, t.s, "Recall the phrase.");
  EXPECT_EQ(c.last_answer(t.s), "amber lantern");
  EXPECT_EQ(test::slurp(data / "workspaces" / t.s / "notes.txt"), "three");
  bool recorded = false;
  for (const auto& e : events(c, t.s)) {
    if (e.at("type").as_string() != "session.forked") continue;
    recorded = true;
    EXPECT_EQ(e.at("data").at("fork").as_string(), f);
    EXPECT_EQ(e.at("data").at("at").to_number<std::int64_t>(), t.ends[1]);
  }
  EXPECT_TRUE(recorded);
  const auto fork_log = events(c, f);
  EXPECT_EQ(fork_log.front().at("type").as_string(), "session.created");
  bool own = false;
  for (const auto& e : fork_log) own = own || e.at("type").as_string() == "session.forked";
  EXPECT_TRUE(own);
}

TEST(Fork, TheLatestTurnByDefaultAForkOfAForkAndAGitWorkspaceWhole) {
  cluster c;
  const auto s = c.create_session();
  // The workspace is a git repository with a commit and a change on top.
  const fs::path ws = c.dir() / "data" / "workspaces" / s;
  fs::create_directories(ws);
  std::ofstream(ws / "tracked.txt") << "committed";
  ASSERT_EQ(std::system(("cd '" + ws.string() +
                         "' && GIT_CONFIG_NOSYSTEM=1 HOME=/nonexistent git init -q . && git add tracked.txt && "
                         "git -c user.name=t -c user.email=t@t commit -qm one")
                            .c_str()),
            0);
  say(c, s, "Write file tracked.txt: changed\nRemember the phrase: copper kettle");

  const auto made = c.call("POST", "/v1/sessions/" + s + "/fork", json::object{{"at", "latest"}});
  ASSERT_EQ(made.status, 201u) << made.body;
  const std::string f(made.json.at("session").at("id").as_string());
  const fs::path fws = c.dir() / "data" / "workspaces" / f;
  EXPECT_EQ(test::slurp(fws / "tracked.txt"), "changed");
  EXPECT_TRUE(fs::is_regular_file(fws / ".git" / "HEAD"));
  EXPECT_EQ(test::slurp(fws / ".git" / "HEAD"), test::slurp(ws / ".git" / "HEAD"));

  // A fork of the fork, through the CLI: empty body, the last turn.
  say(c, f, "Reply with exactly: FIRST OF THE FORK");
  const auto out = run_to_exit({tether_binary(), "fork", f, "--title", "grandchild", "--json", "--server",
                                "http://127.0.0.1:" + std::to_string(c.port()), "--token", c.token()},
                               c.dir() / "fork-cli.log");
  ASSERT_EQ(out.status, 0) << test::slurp(c.dir() / "fork-cli.log");
  const auto sessions = c.call("GET", "/v1/sessions").json.at("sessions").as_array();
  std::string grandchild;
  for (const auto& v : sessions)
    if (v.at("title").as_string() == "grandchild") grandchild = std::string(v.at("id").as_string());
  ASSERT_FALSE(grandchild.empty());
  EXPECT_EQ(c.session(grandchild).at("forked_from").at("session").as_string(), f);
  say(c, grandchild, "Recall the phrase.");
  EXPECT_EQ(c.last_answer(grandchild), "copper kettle");
  EXPECT_EQ(test::slurp(c.dir() / "data" / "workspaces" / grandchild / "tracked.txt"), "changed");
}

TEST(Fork, RefusesWhatIsNotATurnBoundaryOrHasNoSnapshotAndWritesNothing) {
  cluster c;
  const auto fresh = c.create_session();
  auto none = c.call("POST", "/v1/sessions/" + fresh + "/fork");
  EXPECT_EQ(none.status, 400u) << none.body;
  EXPECT_NE(none.body.find("no finished turn"), std::string::npos) << none.body;

  const auto s = c.create_session();
  say(c, s, "Reply with exactly: ONE");
  const auto ends = turn_ends(c, s);
  ASSERT_EQ(ends.size(), 1u);
  const auto sessions_before = c.call("GET", "/v1/sessions").json.at("sessions").as_array().size();
  for (const auto& at : {json::value(1), json::value(ends[0] - 1), json::value(ends[0] + 100), json::value(0),
                         json::value("first"), json::value(true)}) {
    auto r = c.call("POST", "/v1/sessions/" + s + "/fork", json::object{{"at", at}});
    EXPECT_EQ(r.status, 400u) << json::serialize(at) << ": " << r.body;
  }
  EXPECT_EQ(c.call("POST", "/v1/sessions/" + s + "/fork", json::object{{"depth", 1}}).status, 400u);
  EXPECT_EQ(c.call_raw("POST", "/v1/sessions/" + s + "/fork", "{\"at\":", {{"Content-Type", "application/json"}}).status,
            400u);
  EXPECT_EQ(c.call("POST", "/v1/sessions/ses_nosuchsession/fork").status, 404u);
  EXPECT_EQ(c.call("POST", "/v1/sessions/" + s + "/fork", json::object{{"id", s}}).status, 409u);

  EXPECT_EQ(c.call("GET", "/v1/sessions").json.at("sessions").as_array().size(), sessions_before);
  for (const auto& e : events(c, s)) EXPECT_NE(e.at("type").as_string(), "session.forked");

  // A snapshot lost (taken on another node, say): refused with the reason.
  // A fork first, which waits for the turn's snapshot to be taken (in the
  // background, after the turn's end), so nothing writes the repository
  // while it is removed.
  ASSERT_EQ(c.call("POST", "/v1/sessions/" + s + "/fork").status, 201u);
  const auto forks_before = c.call("GET", "/v1/sessions").json.at("sessions").as_array().size();
  fs::remove_all(c.dir() / "data" / "snapshots" / (s + ".git"));
  auto gone = c.call("POST", "/v1/sessions/" + s + "/fork");
  EXPECT_EQ(gone.status, 409u) << gone.body;
  EXPECT_NE(gone.body.find("no snapshot"), std::string::npos) << gone.body;
  EXPECT_EQ(c.call("GET", "/v1/sessions").json.at("sessions").as_array().size(), forks_before);
  say(c, s, "Reply with exactly: TWO");  // the source is unharmed
  EXPECT_EQ(c.last_answer(s), "TWO");
}

}  // namespace
}  // namespace tether::e2e
