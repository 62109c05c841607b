// Steering, stopping, resetting and queueing a session through `tether serve`,
// with the scripted model as a separate `tether mock-llm` process.
#include <gtest/gtest.h>

#include "server/harness.h"

namespace tether::e2e {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

std::vector<std::string> roles_and_texts(const json::array& msgs) {
  std::vector<std::string> out;
  for (const auto& m : msgs)
    out.push_back(std::string(m.at("role").as_string()) + ":" + std::string(m.at("text").as_string()));
  return out;
}

// The user messages' texts of one recorded chat-completions request.
std::vector<std::string> user_texts(const json::value& request) {
  std::vector<std::string> out;
  const auto& body = request.at("body");
  for (const auto& m : body.at("messages").as_array()) {
    if (m.at("role").as_string() != "user") continue;
    const auto& content = m.at("content");
    if (content.is_string()) {
      out.emplace_back(content.as_string());
    } else if (content.is_array()) {
      for (const auto& part : content.as_array())
        if (part.is_object() && part.as_object().contains("text")) out.emplace_back(part.at("text").as_string());
    }
  }
  return out;
}

bool contains(const std::vector<std::string>& texts, std::string_view needle) {
  for (const auto& t : texts)
    if (t.find(needle) != std::string::npos) return true;
  return false;
}

TEST(Control, StopMidStreamThenANewInputWorks) {
  cluster c;
  const auto s = c.create_session();
  sse_stream live(c.port(), "/v1/sessions/" + s + "/events", c.token());
  c.send(s, "Stream slowly: 200\nReply with exactly: a b c d e f g h i j k l m n o p q r s t u v w x y z");
  // Mid-stream: the first delta has arrived.
  const auto seen = live.read_until([](const sse_event& e) { return e.type == "text.delta"; }, 10s);
  ASSERT_FALSE(seen.empty());
  ASSERT_EQ(seen.back().type, "text.delta");
  auto r = c.call("POST", "/v1/sessions/" + s + "/interrupt");
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_TRUE(r.json.at("interrupted").as_bool());
  c.wait_idle(s);
  auto exes = c.executions(s);
  ASSERT_EQ(exes.size(), 1u);
  EXPECT_EQ(exes[0].at("outcome").as_string(), "interrupted");
  EXPECT_EQ(exes[0].at("reason").as_string(), "user");

  // Idle now: interrupting again changes nothing.
  r = c.call("POST", "/v1/sessions/" + s + "/interrupt");
  EXPECT_FALSE(r.json.at("interrupted").as_bool());

  c.send(s, "Reply with exactly: back again");
  c.wait_idle(s);
  EXPECT_EQ(c.last_answer(s), "back again");
  exes = c.executions(s);
  ASSERT_EQ(exes.size(), 2u);
  EXPECT_EQ(exes[1].at("outcome").as_string(), "succeeded");
}

TEST(Control, ResetForgetsTheContextButKeepsTheMessages) {
  cluster c;
  const auto s = c.create_session();
  c.send(s, "Remember the phrase: quiet lighthouse");
  c.wait_idle(s);
  auto r = c.call("POST", "/v1/sessions/" + s + "/reset");
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.json.at("generation").as_int64(), 1);
  c.send(s, "Recall the phrase.");
  c.wait_idle(s);
  EXPECT_EQ(c.last_answer(s), "NO_PHRASE");
  const auto msgs = c.messages(s);
  ASSERT_GE(msgs.size(), 4u);
  EXPECT_EQ(msgs[0].at("text").as_string(), "Remember the phrase: quiet lighthouse");
  EXPECT_EQ(msgs[0].at("generation").as_int64(), 0);
  EXPECT_EQ(msgs.back().at("generation").as_int64(), 1);
}

TEST(Control, SteersDuringASlowTurnReachTheModelTogether) {
  cluster c;
  const auto s = c.create_session();
  c.send(s, "Run: sleep 1\nReply with exactly: done steering");
  c.wait_for("/v1/sessions/" + s + "/messages", [](const json::value& v) {
    for (const auto& m : v.at("messages").as_array())
      if (m.at("role").as_string() == "assistant" && !m.at("tool_calls").as_array().empty()) return true;
    return false;
  });
  c.send(s, "steer one");
  c.send(s, "steer two");
  c.wait_idle(s);
  EXPECT_EQ(c.last_answer(s), "done steering");

  // No request saw one steer without the other: they joined at one boundary.
  const auto requests = c.model_requests();
  int with_both = 0;
  for (const auto& req : requests) {
    const auto texts = user_texts(req);
    const bool one = contains(texts, "steer one");
    const bool two = contains(texts, "steer two");
    EXPECT_EQ(one, two) << json::serialize(req);
    if (one && two) ++with_both;
  }
  EXPECT_GE(with_both, 1);
  // Both were promoted into the one execution.
  EXPECT_EQ(c.executions(s).size(), 1u);
}

TEST(Control, QueuedInputsEachGetTheirOwnTurnInOrder) {
  cluster c;
  const auto s = c.create_session();
  c.send(s, "Run: sleep 1\nReply with exactly: first");
  c.send(s, "Reply with exactly: second", "queue");
  c.send(s, "Reply with exactly: third", "queue");
  auto listed = c.call("GET", "/v1/sessions/" + s + "/inputs");
  ASSERT_EQ(listed.status, 200u);
  ASSERT_EQ(listed.json.at("inputs").as_array().size(), 3u);
  c.wait_idle(s);
  const auto got = roles_and_texts(c.messages(s));
  std::vector<std::string> answers;
  for (const auto& t : got)
    if (t.starts_with("assistant:") && t.size() > 10) answers.push_back(t.substr(10));
  EXPECT_EQ(answers, (std::vector<std::string>{"first", "second", "third"}));
  // Each input is promoted, with the seq of its promotion after its admission.
  listed = c.call("GET", "/v1/sessions/" + s + "/inputs");
  std::int64_t previous = 0;
  for (const auto& in : listed.json.at("inputs").as_array()) {
    EXPECT_EQ(in.at("status").as_string(), "promoted");
    ASSERT_TRUE(in.at("promoted_seq").is_int64());
    EXPECT_GT(in.at("promoted_seq").as_int64(), in.at("admitted_seq").as_int64());
    EXPECT_GT(in.at("promoted_seq").as_int64(), previous);
    previous = in.at("promoted_seq").as_int64();
  }
}

TEST(Control, APendingInputCanBeCancelledAPromotedOneCannot) {
  cluster c;
  const auto s = c.create_session();
  json::object body;
  body["text"] = "Reply with exactly: never";
  body["resume"] = false;
  auto r = c.call("POST", "/v1/sessions/" + s + "/inputs", body);
  ASSERT_EQ(r.status, 202u) << r.body;
  const std::string pending(r.json.at("input").at("id").as_string());
  EXPECT_EQ(r.json.at("input").at("status").as_string(), "pending");
  r = c.call("DELETE", "/v1/sessions/" + s + "/inputs/" + pending);
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.json.at("input").at("status").as_string(), "cancelled");
  EXPECT_EQ(c.call("DELETE", "/v1/sessions/" + s + "/inputs/" + pending).status, 409u);
  // Resume finds nothing to do.
  r = c.call("POST", "/v1/sessions/" + s + "/resume");
  EXPECT_FALSE(r.json.at("started").as_bool());

  const auto done = c.send(s, "Reply with exactly: ran");
  c.wait_idle(s);
  EXPECT_EQ(c.call("DELETE", "/v1/sessions/" + s + "/inputs/" + std::string(done.at("id").as_string())).status, 409u);
  EXPECT_EQ(c.call("DELETE", "/v1/sessions/" + s + "/inputs/msg_0000000000000000000000000").status, 404u);
  EXPECT_EQ(c.last_answer(s), "ran");
}

TEST(Control, ResumeRunsInputsRecordedWithoutResuming) {
  cluster c;
  const auto s = c.create_session();
  json::object body;
  body["text"] = "Reply with exactly: later";
  body["resume"] = false;
  ASSERT_EQ(c.call("POST", "/v1/sessions/" + s + "/inputs", body).status, 202u);
  EXPECT_EQ(c.session(s).at("pending_inputs").as_int64(), 1);
  auto r = c.call("POST", "/v1/sessions/" + s + "/resume");
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_TRUE(r.json.at("started").as_bool());
  c.wait_idle(s);
  EXPECT_EQ(c.last_answer(s), "later");
}

TEST(Control, ExecutionsReportUsageAndCost) {
  cluster c;
  const auto s = c.create_session();
  c.send(s, "Reply with exactly: counted");
  c.wait_idle(s);
  const auto exes = c.executions(s);
  ASSERT_EQ(exes.size(), 1u);
  const auto& u = exes[0].at("usage");
  EXPECT_GT(u.at("input_tokens").as_int64(), 0);
  EXPECT_GT(u.at("output_tokens").as_int64(), 0);
  EXPECT_TRUE(u.as_object().contains("cost_usd"));
  EXPECT_FALSE(u.at("cost_status").as_string().empty());
  EXPECT_GT(exes[0].at("finished_at").as_int64(), 0);
  EXPECT_GE(exes[0].at("finished_at").as_int64(), exes[0].at("started_at").as_int64());
}

}  // namespace
}  // namespace tether::e2e
