// Restarts that lose nothing (docs/architecture.md §4), through the real binaries: the
// server is killed with SIGKILL (or stopped with SIGTERM) and started again
// on the same data directory.
#include <signal.h>

#include <gtest/gtest.h>

#include "server/harness.h"

namespace tether::e2e {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

bool has_message(const json::array& msgs, std::string_view role, std::string_view text) {
  for (const auto& m : msgs)
    if (m.at("role").as_string() == role &&
        std::string_view(m.at("text").as_string()).find(text) != std::string_view::npos)
      return true;
  return false;
}

TEST(Restart, APhraseIsRecalledAfterSigkill) {
  cluster c;
  const auto s = c.create_session();
  c.send(s, "Remember the phrase: purple elephant");
  c.wait_idle(s);
  EXPECT_EQ(c.last_answer(s), "Noted.");

  c.kill_server(SIGKILL);
  c.start_server();
  c.send(s, "Recall the phrase.");
  c.wait_idle(s);
  EXPECT_EQ(c.last_answer(s), "purple elephant");
}

TEST(Restart, SigkillDuringAToolCallFailsTheCallAndTheExecutionGoesOn) {
  cluster c;
  const auto s = c.create_session();
  c.send(s, "Run: sleep 30\nReply with exactly: finished after the restart");
  // The call is running: tool.called is durable, its result is not.
  c.wait_for("/v1/sessions/" + s + "/messages", [](const json::value& v) {
    for (const auto& m : v.at("messages").as_array())
      if (m.at("role").as_string() == "assistant")
        for (const auto& call : m.at("tool_calls").as_array())
          if (call.at("status").as_string() == "running") return true;
    return false;
  });
  // Admitted before the kill, queued behind the running turn.
  c.send(s, "Reply with exactly: queued before the kill", "queue");

  c.kill_server(SIGKILL);
  c.start_server();
  const auto idle = c.wait_idle(s, 60s);
  EXPECT_EQ(idle.at("status").as_string(), "idle");

  const auto msgs = c.messages(s);
  // The interrupted call is failed, not left running.
  bool failed_call = false;
  for (const auto& m : msgs) {
    if (m.at("role").as_string() != "assistant") continue;
    for (const auto& call : m.at("tool_calls").as_array()) {
      EXPECT_NE(call.at("status").as_string(), "running");
      if (call.at("name").as_string() == "bash" && call.at("status").as_string() == "failed") failed_call = true;
    }
  }
  EXPECT_TRUE(failed_call);
  EXPECT_TRUE(has_message(msgs, "synthetic", "restart")) << json::serialize(msgs);
  EXPECT_TRUE(has_message(msgs, "assistant", "finished after the restart"));
  EXPECT_TRUE(has_message(msgs, "assistant", "queued before the kill"));

  // The first execution was taken over and finished; nothing is left open.
  const auto exes = c.executions(s);
  ASSERT_FALSE(exes.empty());
  for (const auto& x : exes) EXPECT_EQ(x.at("status").as_string(), "finished") << json::serialize(x);
  EXPECT_EQ(exes.front().at("outcome").as_string(), "succeeded");
}

json::object pending_question(cluster& c, const std::string& s) {
  auto v = c.wait_for("/v1/sessions/" + s + "/interactions", [](const json::value& v) {
    for (const auto& i : v.at("interactions").as_array())
      if (i.at("status").as_string() == "pending") return true;
    return false;
  });
  for (const auto& i : v.at("interactions").as_array())
    if (i.at("status").as_string() == "pending") return i.as_object();
  return {};
}

TEST(Restart, AQuestionIsAnsweredAfterARestartAndTheAnswerIsUsed) {
  cluster c;
  const auto s = c.create_session();
  c.send(s, "Ask: Which color? | Red | Blue\nReply with the answer.");
  const auto q = pending_question(c, s);
  EXPECT_EQ(c.wait_idle(s).at("status").as_string(), "waiting");

  c.kill_server(SIGKILL);
  c.start_server();
  EXPECT_EQ(c.session(s).at("status").as_string(), "waiting");
  const std::string id(q.at("id").as_string());
  const auto& question = q.at("payload").at("questions").at(0);
  std::string blue;
  for (const auto& o : question.at("options").as_array())
    if (o.at("label").as_string() == "Blue") blue = std::string(o.at("id").as_string());
  ASSERT_FALSE(blue.empty());

  json::object answer;
  answer["question_id"] = question.at("id");
  answer["option_ids"] = json::array{json::value(blue)};
  json::object body;
  body["answers"] = json::array{answer};
  auto r = c.call("POST", "/v1/interactions/" + id + "/answer", body);
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.json.at("interaction").at("status").as_string(), "answered");
  c.wait_idle(s);
  EXPECT_EQ(c.last_answer(s), "Blue");

  // Answered once; a second answer is a conflict.
  EXPECT_EQ(c.call("POST", "/v1/interactions/" + id + "/answer", body).status, 409u);
}

TEST(Restart, SigtermStopsCleanlyAndTheNextStartFinishesTheTurn) {
  cluster c;
  const auto s = c.create_session();
  sse_stream live(c.port(), "/v1/sessions/" + s + "/events", c.token());
  c.send(s, "Stream slowly: 100\nReply with exactly: one two three four five six seven eight nine ten");
  const auto seen = live.read_until([](const sse_event& e) { return e.type == "text.delta"; }, 10s);
  ASSERT_FALSE(seen.empty());
  c.server().signal(SIGTERM);
  EXPECT_EQ(c.server().wait(20s), 0);  // a clean exit
  c.start_server();
  c.wait_idle(s, 60s);
  EXPECT_EQ(c.last_answer(s), "one two three four five six seven eight nine ten");
  const auto exes = c.executions(s);
  ASSERT_EQ(exes.size(), 1u);
  EXPECT_EQ(exes[0].at("outcome").as_string(), "succeeded");
}

TEST(Restart, ServePrintsOnlyItsAddressOnStdoutAndLogsToStderr) {
  cluster c;
  const auto s = c.create_session();
  c.send(s, "Reply with exactly: quiet");
  c.wait_idle(s);
  c.server().signal(SIGTERM);
  const std::string rest = c.server().rest_of_stdout(20s);
  EXPECT_EQ(c.server().wait(20s), 0);
  EXPECT_EQ(rest, "");  // the "listening on" line was the only one
}

}  // namespace
}  // namespace tether::e2e
