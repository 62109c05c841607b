// The HTTP API's streams and its refusals, against a real `tether serve`.
#include <signal.h>
#include <sys/stat.h>

#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "server/harness.h"

namespace tether::e2e {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

bool finished(const sse_event& e) { return e.type == "execution.finished"; }

TEST(Stream, ReplaysFromAfterThenFollowsLiveWithDeltas) {
  cluster c;
  const auto s = c.create_session();
  const std::string answer = "streamed one delta at a time over server sent events";
  sse_stream live(c.port(), "/v1/sessions/" + s + "/events", c.token());
  c.send(s, "Stream slowly: 5\nReply with exactly: " + answer);
  const auto events = live.read_until(finished, 30s);
  ASSERT_EQ(live.status(), 200u);
  ASSERT_FALSE(events.empty());
  ASSERT_TRUE(finished(events.back()));

  // Durable events carry their seq as the id, from 1 with no gap; deltas have none.
  std::int64_t expected = 1;
  std::string deltas;
  std::string ended;
  for (const auto& e : events) {
    if (e.type == "text.delta") {
      EXPECT_TRUE(e.id.empty());
      deltas += std::string(e.data.at("data").at("text").as_string());
      continue;
    }
    ASSERT_FALSE(e.id.empty()) << e.type;
    EXPECT_EQ(std::stoll(e.id), expected) << e.type;
    EXPECT_EQ(e.data.at("seq").as_int64(), expected);
    EXPECT_EQ(e.data.at("type").as_string(), e.type);
    ++expected;
    if (e.type == "text.ended") ended = std::string(e.data.at("data").at("text").as_string());
  }
  EXPECT_EQ(ended, answer);
  EXPECT_EQ(deltas, answer);  // the live deltas add up to the stored text

  // Replay after N starts at N+1 and ends with the same last event.
  sse_stream replay(c.port(), "/v1/sessions/" + s + "/events?after=3", c.token());
  const auto again = replay.read_until(finished, 10s);
  ASSERT_FALSE(again.empty());
  EXPECT_EQ(again.front().id, "4");
  EXPECT_EQ(again.back().id, events.back().id);

  // Last-Event-ID wins over the query, as a reconnecting EventSource sends it.
  sse_stream resumed(c.port(), "/v1/sessions/" + s + "/events?after=1", c.token(), {{"Last-Event-ID", "5"}});
  const auto rest = resumed.read_until(finished, 10s);
  ASSERT_FALSE(rest.empty());
  EXPECT_EQ(rest.front().id, "6");

  // The JSON page of the same log.
  auto page = c.call("GET", "/v1/sessions/" + s + "/events?after=2&limit=3");
  ASSERT_EQ(page.status, 200u);
  const auto& list = page.json.at("events").as_array();
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].at("seq").as_int64(), 3);
  EXPECT_TRUE(page.json.at("more").as_bool());
}

// A delta never precedes the step.started of its step (recorded without
// waiting for its commit), and carries no seq: its own id, "ephemeral", and
// the seq of the durable event it follows.
TEST(Stream, DeltasFollowTheirStepAndCarryNoSeq) {
  cluster c;
  const auto s = c.create_session();
  sse_stream live(c.port(), "/v1/sessions/" + s + "/events", c.token());
  std::this_thread::sleep_for(200ms);
  for (int turn = 0; turn < 3; ++turn) {
    c.send(s, "Stream slowly: 1\nRun: echo step one\nReply with exactly: the second step streams this answer");
    c.wait_idle(s);
  }
  int finishes = 0;
  const auto events = live.read_until([&](const sse_event& e) { return finished(e) && ++finishes == 3; }, 60s);
  ASSERT_EQ(finishes, 3);
  bool step_open = false;
  std::int64_t last_seq = 0;
  std::set<std::string> ids;
  int deltas = 0;
  for (const auto& e : events) {
    if (e.type == "text.delta") {
      ++deltas;
      EXPECT_TRUE(step_open) << "a delta before the step.started of its step (after seq " << last_seq << ")";
      EXPECT_TRUE(e.id.empty()) << "no SSE id: a reconnect resumes after the last durable event";
      EXPECT_FALSE(e.data.as_object().contains("seq")) << json::serialize(e.data);
      EXPECT_TRUE(e.data.at("ephemeral").as_bool());
      EXPECT_EQ(e.data.at("after_seq").as_int64(), last_seq);
      const std::string id(e.data.at("id").as_string());
      EXPECT_TRUE(id.starts_with("eph_")) << id;
      EXPECT_TRUE(ids.insert(id).second) << "ids are distinct: " << id;
      continue;
    }
    last_seq = std::stoll(e.id);
    EXPECT_FALSE(e.data.as_object().contains("ephemeral")) << e.type;
    if (e.type == "step.started") step_open = true;
    if (e.type == "step.ended" || e.type == "step.failed") step_open = false;
  }
  EXPECT_GE(deltas, 3 * 5) << "the answers streamed as deltas";
}

TEST(Stream, TheGlobalStreamCarriesEverySession) {
  cluster c;
  const auto a = c.create_session();
  const auto b = c.create_session();
  sse_stream all(c.port(), "/v1/events", c.token());
  // Subscribed before the inputs: give the server a moment to register it.
  std::this_thread::sleep_for(200ms);
  c.send(a, "Reply with exactly: from a");
  c.wait_idle(a);
  c.send(b, "Reply with exactly: from b");
  std::set<std::string> seen;
  all.read_until(
      [&](const sse_event& e) {
        if (e.type == "execution.finished") seen.insert(std::string(e.data.at("session_id").as_string()));
        return seen.size() == 2;
      },
      30s);
  EXPECT_EQ(seen, (std::set<std::string>{a, b}));
}

TEST(Stream, HeartbeatsKeepAnIdleStreamOpen) {
  cluster c({"--heartbeat-ms", "100"});
  const auto s = c.create_session();
  sse_stream idle(c.port(), "/v1/sessions/" + s + "/events", c.token());
  idle.read_until([](const sse_event&) { return false; }, 700ms);
  EXPECT_EQ(idle.status(), 200u);
  EXPECT_GE(idle.comments(), 3u);
}

TEST(Refusals, EveryBadRequestGetsAClearErrorAndDisturbsNothing) {
  cluster c({"--max-body-bytes", "4096"});
  const auto s = c.create_session();
  const std::string inputs = "/v1/sessions/" + s + "/inputs";
  auto code = [](const http_result& r) {
    return r.json.is_object() && r.json.as_object().contains("error")
               ? std::string(r.json.at("error").at("code").as_string())
               : std::string("<no error object: ") + r.body + ">";
  };

  auto r = c.call_raw("POST", inputs, "{not json");
  EXPECT_EQ(r.status, 400u);
  EXPECT_EQ(code(r), "bad_request");

  r = c.call_raw("POST", inputs, R"({"text": 42})");
  EXPECT_EQ(r.status, 400u);
  EXPECT_NE(r.json.at("error").at("message").as_string().find("text"), json::string::npos);

  r = c.call_raw("POST", inputs, R"({"text": "x", "delivery": "sideways"})");
  EXPECT_EQ(r.status, 400u);
  EXPECT_NE(r.json.at("error").at("message").as_string().find("delivery"), json::string::npos);

  r = c.call_raw("POST", inputs, "{\"text\": \"bad \xff\xfe utf8\"}");
  EXPECT_EQ(r.status, 400u);

  r = c.call_raw("POST", inputs, R"({"text": ")" + std::string(8000, 'a') + R"("})");
  EXPECT_EQ(r.status, 413u);
  EXPECT_EQ(code(r), "payload_too_large");

  EXPECT_EQ(c.call("GET", "/v1/sessions/ses_unknown").status, 404u);
  EXPECT_EQ(c.call("GET", "/v1/sessions/not-an-id").status, 404u);
  EXPECT_EQ(c.call("POST", "/v1/sessions/ses_unknown/inputs", json::object{{"text", "hi"}}).status, 404u);
  EXPECT_EQ(c.call("GET", "/v1/nothing/here").status, 404u);
  EXPECT_EQ(c.call("GET", "/v1/sessions/" + s + "/bogus").status, 404u);
  EXPECT_EQ(c.call("DELETE", "/v1/sessions").status, 405u);
  EXPECT_EQ(c.call("GET", "/v1/sessions/" + s + "/interrupt").status, 405u);
  EXPECT_EQ(c.call("GET", "/v1/sessions/" + s + "/events?after=-1").status, 400u);
  EXPECT_EQ(c.call("POST", "/v1/interactions/int_missing/answer", json::object{{"answers", json::array{}}}).status,
            404u);
  EXPECT_EQ(c.call("POST", "/v1/sessions", json::object{{"profile", "nope"}}).status, 400u);
  EXPECT_EQ(c.call("POST", "/v1/sessions", json::object{{"workspace", "relative/dir"}}).status, 400u);
  EXPECT_EQ(c.call("GET", "/v1/events").status, 400u);  // a stream needs Accept: text/event-stream

  // A create retried with the same id and attributes returns the session; other attributes conflict.
  json::object create{{"id", "ses_e2e_fixed"}, {"title", "one"}};
  EXPECT_EQ(c.call("POST", "/v1/sessions", create).status, 201u);
  EXPECT_EQ(c.call("POST", "/v1/sessions", create).status, 200u);
  create["title"] = "two";
  EXPECT_EQ(c.call("POST", "/v1/sessions", create).status, 409u);

  // An answer naming an option the question does not have.
  c.send(s, "Ask: Proceed? | Yes | No\nReply with the answer.");
  auto v = c.wait_for("/v1/sessions/" + s + "/interactions",
                      [](const json::value& v) { return !v.at("interactions").as_array().empty(); });
  const std::string iid(v.at("interactions").at(0).at("id").as_string());
  const json::object bad_answer{
      {"answers", json::array{json::object{{"question_id", "q1"}, {"option_ids", json::array{"maybe"}}}}}};
  r = c.call("POST", "/v1/interactions/" + iid + "/answer", bad_answer);
  EXPECT_EQ(r.status, 400u) << r.body;

  // Still serving, and the session still works.
  EXPECT_EQ(request(c.port(), "GET", "/v1/health").status, 200u);
  const auto& q = v.at("interactions").at(0).at("payload").at("questions").at(0);
  const json::object good{
      {"answers", json::array{json::object{{"question_id", q.at("id")}, {"option_ids", json::array{"yes"}}}}}};
  r = c.call("POST", "/v1/interactions/" + iid + "/answer", good);
  EXPECT_EQ(r.status, 200u) << r.body;
  c.wait_idle(s);
  EXPECT_EQ(c.last_answer(s), "Yes");
}

TEST(Refusals, AMissingOrWrongTokenIs401) {
  cluster c;
  const auto none = request(c.port(), "GET", "/v1/sessions");
  EXPECT_EQ(none.status, 401u);
  EXPECT_EQ(none.json.at("error").at("code").as_string(), "unauthorized");
  EXPECT_EQ(request(c.port(), "GET", "/v1/sessions", "", {{"Authorization", "Bearer wrong"}}).status, 401u);
  EXPECT_EQ(request(c.port(), "GET", "/v1/no/such/route").status, 401u);  // routes are not revealed
  EXPECT_EQ(request(c.port(), "GET", "/metrics").status, 401u);
  sse_stream denied(c.port(), "/v1/events", "wrong");
  denied.read_until([](const sse_event&) { return true; }, 2s);
  EXPECT_EQ(denied.status(), 401u);
  const auto health = request(c.port(), "GET", "/v1/health");
  EXPECT_EQ(health.status, 200u);
  EXPECT_EQ(health.json.at("status").as_string(), "ok");
  // The token file is private to its owner.
  struct stat st {};
  ASSERT_EQ(::stat((c.dir() / "data" / "token").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777U, 0600U);
}

TEST(Documents, OpenapiAndMetricsAreServed) {
  cluster c;
  const auto s = c.create_session();
  c.send(s, "Reply with exactly: measured");
  c.wait_idle(s);
  const auto doc = c.call("GET", "/v1/openapi.json");
  ASSERT_EQ(doc.status, 200u);
  EXPECT_TRUE(doc.json.at("paths").as_object().contains("/v1/sessions/{id}/events"));
  const auto m = c.call("GET", "/metrics");
  ASSERT_EQ(m.status, 200u);
  EXPECT_NE(m.content_type.find("text/plain"), std::string::npos);
  EXPECT_NE(m.body.find("tether_executions_total{outcome=\"succeeded\"} 1"), std::string::npos) << m.body;
  EXPECT_NE(m.body.find("tether_admission_seconds_count"), std::string::npos);
}

}  // namespace
}  // namespace tether::e2e

namespace tether::e2e {
namespace {

TEST(Stream, AReaderThatFallsTooFarBehindIsDisconnectedAndCanResume) {
  cluster c({"--sse-max-buffered-bytes", "65536", "--sse-stall-timeout-ms", "1000"});
  const auto s = c.create_session();
  // Subscribed, then not read while about 4,000 deltas (over 1 MB of frames)
  // are streamed: more than the kernel buffers and the server's queue hold,
  // so the server's write waits, and after a second it gives up.
  sse_stream stalled(c.port(), "/v1/sessions/" + s + "/events", c.token(), {}, 4096);
  std::string words;
  while (words.size() < 100'000) words += "lagging reader ";
  c.send(s, "Reply with exactly: " + words);
  c.wait_idle(s, 60s);
  std::this_thread::sleep_for(1500ms);

  const auto got = stalled.read_until(finished, 20s);
  EXPECT_TRUE(stalled.closed()) << "the server should have dropped the stream";
  EXPECT_TRUE(got.empty() || got.back().type != "execution.finished");
  EXPECT_EQ(request(c.port(), "GET", "/v1/health").status, 200u);

  // Reconnecting after the last id it saw, the client gets the rest.
  std::string last_id = "0";
  for (const auto& e : got)
    if (!e.id.empty()) last_id = e.id;
  sse_stream resumed(c.port(), "/v1/sessions/" + s + "/events", c.token(), {{"Last-Event-ID", last_id}});
  const auto rest = resumed.read_until(finished, 20s);
  ASSERT_FALSE(rest.empty()) << "status " << resumed.status() << " after id " << last_id << ", " << got.size()
                             << " events before the drop";
  EXPECT_EQ(rest.back().type, "execution.finished");
}

}  // namespace
}  // namespace tether::e2e

namespace tether::e2e {
namespace {

TEST(Sessions, MetadataIsStoredReturnedAndPartOfAnIdempotentCreate) {
  cluster c;
  const json::object create{
      {"id", "ses_meta"}, {"title", "t"}, {"metadata", json::object{{"ticket", "T-1"}, {"n", 3}}}};
  auto r = c.call("POST", "/v1/sessions", create);
  ASSERT_EQ(r.status, 201u) << r.body;
  EXPECT_EQ(r.json.at("session").at("metadata").at("ticket"), "T-1");
  EXPECT_EQ(c.call("POST", "/v1/sessions", create).status, 200u);
  auto other = create;
  other["metadata"] = json::object{{"ticket", "T-2"}};
  EXPECT_EQ(c.call("POST", "/v1/sessions", other).status, 409u);
  EXPECT_EQ(c.call("POST", "/v1/sessions", json::object{{"metadata", "not an object"}}).status, 400u);

  c.kill_server(SIGKILL);  // it is durable
  c.start_server();
  EXPECT_EQ(c.session("ses_meta").at("metadata").at("n").as_int64(), 3);
}

}  // namespace
}  // namespace tether::e2e

namespace tether::e2e {
namespace {

// The node builds each profile's runtime by its kind: what ran is recorded
// and shown, not read back from the configuration.
TEST(Sessions, TheSessionAndItsExecutionsNameTheRuntimeThatRanThem) {
  cluster c;
  const auto s = c.create_session();
  auto before = c.call("GET", "/v1/sessions/" + s);
  ASSERT_EQ(before.status, 200u);
  EXPECT_EQ(before.json.at("session").at("runtime"), "") << "nothing ran yet";
  c.send(s, "Reply with exactly: ran");
  c.wait_idle(s);
  auto after = c.call("GET", "/v1/sessions/" + s);
  ASSERT_EQ(after.status, 200u);
  EXPECT_EQ(after.json.at("session").at("runtime"), "native");
  auto runs = c.call("GET", "/v1/sessions/" + s + "/executions");
  ASSERT_EQ(runs.status, 200u);
  const auto& list = runs.json.at("executions").as_array();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].at("runtime"), "native");
}

}  // namespace
}  // namespace tether::e2e
