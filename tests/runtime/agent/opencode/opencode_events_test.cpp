// What opencode serve's events mean for a session's turns, on sequences the
// real opencode 1.18.33 sent against a scripted model (shortened).
#include "runtime/agent/opencode/events.h"

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "runtime/agent/opencode/opencode.h"

namespace tether::runtime::agent::opencode {
namespace {

namespace json = boost::json;

constexpr const char* ses = "ses_a";

std::string updated(const char* id, const char* role) {
  return std::string(R"({"type":"message.updated","properties":{"sessionID":"ses_a","info":{"id":")") + id +
         R"(","role":")" + role + R"("}}})";
}
std::string part(const std::string& body) {
  return R"({"type":"message.part.updated","properties":{"sessionID":"ses_a","part":)" + body + "}}";
}
std::string status(const char* type) {
  return std::string(R"({"type":"session.status","properties":{"sessionID":"ses_a","status":{"type":")") + type +
         R"("}}})";
}
const std::string idle = R"({"type":"session.idle","properties":{"sessionID":"ses_a"}})";

std::vector<agent_event> feed(serve_events& m, const std::vector<std::string>& events) {
  std::vector<agent_event> out;
  for (const auto& e : events) m.feed(json::parse(e).as_object(), out);
  return out;
}

template <class T>
std::vector<T> all_of(const std::vector<agent_event>& es) {
  std::vector<T> out;
  for (const auto& e : es)
    if (const auto* x = std::get_if<T>(&e)) out.push_back(*x);
  return out;
}

TEST(opencode_serve_events, a_turn_maps_its_text_tools_and_usage_and_ends_at_idle) {
  serve_events m(ses);
  m.begin_turn();
  const auto es = feed(
      m,
      {updated("msg_u", "user"),
       part(R"({"id":"prt_u","messageID":"msg_u","type":"text","text":"write it"})"),
       status("busy"),
       updated("msg_a", "assistant"),
       part(R"({"id":"prt_r","messageID":"msg_a","type":"reasoning","text":""})"),
       R"({"type":"message.part.delta","properties":{"sessionID":"ses_a","messageID":"msg_a","partID":"prt_r","field":"text","delta":"thinking"}})",
       part(
           R"({"id":"prt_t1","messageID":"msg_a","type":"tool","callID":"call_1","tool":"write","state":{"status":"pending","input":{}}})"),
       part(
           R"({"id":"prt_t1","messageID":"msg_a","type":"tool","callID":"call_1","tool":"write","state":{"status":"running","input":{"filePath":"/w/a"}}})"),
       part(
           R"({"id":"prt_t1","messageID":"msg_a","type":"tool","callID":"call_1","tool":"write","state":{"status":"completed","input":{"filePath":"/w/a"},"output":"Wrote file"}})"),
       part(
           R"({"id":"prt_t1","messageID":"msg_a","type":"tool","callID":"call_1","tool":"write","state":{"status":"completed","input":{"filePath":"/w/a"},"output":"Wrote file"}})"),
       part(
           R"({"id":"prt_s1","messageID":"msg_a","type":"step-finish","reason":"tool-calls","cost":0.5,"tokens":{"input":10,"output":3,"reasoning":1,"cache":{"read":4,"write":0}}})"),
       updated("msg_b", "assistant"),
       part(R"({"id":"prt_x","messageID":"msg_b","type":"text","text":"","time":{"start":1}})"),
       R"({"type":"message.part.delta","properties":{"sessionID":"ses_a","messageID":"msg_b","partID":"prt_x","field":"text","delta":"do"}})",
       R"({"type":"message.part.delta","properties":{"sessionID":"ses_b","messageID":"msg_b","partID":"prt_x","field":"text","delta":"other session"}})",
       part(R"({"id":"prt_x","messageID":"msg_b","type":"text","text":"done","time":{"start":1,"end":2}})"),
       part(R"({"id":"prt_x","messageID":"msg_b","type":"text","text":"done","time":{"start":1,"end":2}})"),
       part(
           R"({"id":"prt_s2","messageID":"msg_b","type":"step-finish","reason":"stop","cost":0,"tokens":{"input":20,"output":1,"reasoning":0,"cache":{"read":0,"write":0}}})"),
       status("idle"),
       idle});
  const auto pieces = all_of<text_piece>(es);
  ASSERT_EQ(pieces.size(), 1U);  // not the reasoning, not another session's
  EXPECT_EQ(pieces[0].text, "do");
  const auto messages = all_of<agent_message>(es);
  ASSERT_EQ(messages.size(), 1U);  // not the user's, once though updated twice
  EXPECT_EQ(messages[0].text, "done");
  const auto starts = all_of<tool_start>(es);
  ASSERT_EQ(starts.size(), 1U);
  EXPECT_EQ(starts[0].input.as_object().at("filePath"), "/w/a");  // from the running state, not the pending one
  ASSERT_EQ(all_of<tool_end>(es).size(), 1U);
  EXPECT_EQ(all_of<tool_end>(es)[0].output, "Wrote file");
  const auto usage = all_of<turn_usage>(es);
  ASSERT_EQ(usage.size(), 2U);
  EXPECT_EQ(usage[0].usage.input_tokens, 14);
  EXPECT_EQ(usage[0].usage.cached_input_tokens, 4);
  EXPECT_EQ(usage[0].usage.output_tokens, 4);
  EXPECT_EQ(usage[0].agent_cost_usd, 0.5);
  ASSERT_EQ(all_of<turn_done>(es).size(), 1U);
  EXPECT_TRUE(std::holds_alternative<turn_done>(es.back()));
  EXPECT_FALSE(m.turn_running());
}

TEST(opencode_serve_events, an_abort_fails_the_turn_and_its_late_events_stay_out_of_the_next) {
  serve_events m(ses);
  m.begin_turn();
  auto es = feed(
      m,
      {updated("msg_u", "user"), status("busy"), updated("msg_a", "assistant"),
       part(R"({"id":"prt_x","messageID":"msg_a","type":"text","text":"","time":{"start":1}})"),
       R"({"type":"session.error","properties":{"sessionID":"ses_a","error":{"name":"MessageAbortedError","data":{"message":"Aborted"}}}})",
       status("idle"), idle});
  ASSERT_EQ(all_of<turn_failed>(es).size(), 1U);
  EXPECT_EQ(all_of<turn_failed>(es)[0].message, "Aborted");
  EXPECT_FALSE(m.turn_running());
  // The next turn begins before the aborted message's last update and the
  // second idle arrive: neither belongs to it.
  m.begin_turn();
  es = feed(m, {part(R"({"id":"prt_x","messageID":"msg_a","type":"text","text":"a b c","time":{"start":1,"end":2}})"),
                updated("msg_a", "assistant"), status("idle"), idle});
  EXPECT_TRUE(es.empty());
  EXPECT_TRUE(m.turn_running());
  es = feed(
      m, {updated("msg_u2", "user"), status("busy"), updated("msg_c", "assistant"),
          part(R"({"id":"prt_y","messageID":"msg_c","type":"text","text":"after","time":{"start":1,"end":2}})"), idle});
  ASSERT_EQ(all_of<agent_message>(es).size(), 1U);
  EXPECT_EQ(all_of<agent_message>(es)[0].text, "after");
  EXPECT_EQ(all_of<turn_done>(es).size(), 1U);
}

TEST(opencode_serve_events, a_prompt_refused_before_the_loop_ends_at_its_idle) {
  serve_events m(ses);
  m.begin_turn();
  const auto es = feed(
      m,
      {R"({"type":"session.error","properties":{"sessionID":"ses_a","error":{"name":"UnknownError","data":{"message":"Model not found"}}}})",
       idle});
  ASSERT_EQ(all_of<turn_failed>(es).size(), 1U);
  EXPECT_EQ(all_of<turn_failed>(es)[0].message, "Model not found");
}

TEST(opencode_serve_events, nothing_is_mapped_without_a_turn) {
  serve_events m(ses);
  const auto es = feed(
      m, {status("busy"), updated("msg_a", "assistant"),
          part(R"({"id":"prt_x","messageID":"msg_a","type":"text","text":"x","time":{"start":1,"end":2}})"), idle});
  EXPECT_TRUE(es.empty());
}

TEST(opencode_permissions, each_policy_answers_as_the_profile_says) {
  EXPECT_EQ(reply(agent_permissions::approve_all, "external_directory"), "once");
  EXPECT_EQ(reply(agent_permissions::approve_all, "bash"), "once");
  EXPECT_EQ(reply(agent_permissions::approve_reads, "read"), "once");
  EXPECT_EQ(reply(agent_permissions::approve_reads, "edit"), "reject");
  EXPECT_EQ(reply(agent_permissions::approve_reads, "external_directory"), "reject");
  EXPECT_EQ(reply(agent_permissions::deny_all, "read"), "reject");
}

}  // namespace
}  // namespace tether::runtime::agent::opencode
