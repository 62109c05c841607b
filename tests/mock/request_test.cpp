#include "mock/request.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include "mock/errors.h"
#include "mock/script.h"

namespace tether::mock {
namespace {

conversation parse(wire_format w, std::string_view body) {
  auto r = parse_request(w, boost::json::parse(body));
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().describe());
  return r ? std::move(r).value() : conversation{};
}

TEST(chat_request, roles_tool_calls_and_tool_results_are_normalized) {
  const auto c = parse(wire_format::chat, R"({
    "model":"m","stream":true,"stream_options":{"include_usage":true},
    "messages":[
      {"role":"developer","content":"be brief"},
      {"role":"user","content":[{"type":"text","text":"Run: ls"},{"type":"image_url","image_url":{"url":"x"}}]},
      {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}]},
      {"role":"tool","tool_call_id":"c1","content":"a.txt"}],
    "tools":[{"type":"function","function":{"name":"bash","description":"shell","parameters":{"type":"object"}}}]})");
  EXPECT_EQ(c.format, wire_format::chat);
  EXPECT_TRUE(c.stream);
  EXPECT_TRUE(c.include_usage);
  ASSERT_EQ(c.messages.size(), 4U);
  EXPECT_EQ(c.messages[0].role, role::system);
  EXPECT_EQ(c.messages[1].text, "Run: ls");
  ASSERT_EQ(c.messages[2].calls.size(), 1U);
  EXPECT_EQ(c.messages[2].calls[0].name, "bash");
  EXPECT_EQ(c.messages[2].calls[0].arguments, R"({"command":"ls"})");
  EXPECT_EQ(c.messages[3].role, role::tool_result);
  EXPECT_EQ(c.messages[3].call_id, "c1");
  ASSERT_EQ(c.tools.size(), 1U);
  EXPECT_EQ(c.tools[0].name, "bash");
  EXPECT_EQ(c.tools[0].description, "shell");
}

TEST(responses_request, instructions_items_and_tool_kinds_are_normalized) {
  const auto c = parse(wire_format::responses, R"({
    "model":"m","instructions":"system words",
    "input":[
      {"type":"message","role":"developer","content":[{"type":"input_text","text":"dev"}]},
      {"type":"message","role":"user","content":[{"type":"input_text","text":"Run: ls"}]},
      {"type":"reasoning","summary":[]},
      {"type":"function_call","call_id":"c1","name":"exec_command","arguments":"{\"cmd\":\"ls\"}"},
      {"type":"function_call_output","call_id":"c1","output":"a.txt"},
      {"type":"custom_tool_call","call_id":"c2","name":"apply_patch","input":"*** Begin Patch"},
      {"type":"custom_tool_call_output","call_id":"c2","output":[{"type":"input_text","text":"done"}]},
      {"role":"assistant","content":[{"type":"output_text","text":"ok"}]}],
    "tools":[{"type":"function","name":"exec_command","parameters":{"type":"object"}},
             {"type":"custom","name":"apply_patch"},{"type":"local_shell"},{"type":"web_search"}]})");
  ASSERT_EQ(c.messages.size(), 8U);
  EXPECT_EQ(c.messages[0].role, role::system);
  EXPECT_EQ(c.messages[0].text, "system words");
  EXPECT_EQ(c.messages[1].role, role::system);
  EXPECT_EQ(c.messages[2].text, "Run: ls");
  EXPECT_EQ(c.messages[3].calls[0].name, "exec_command");
  EXPECT_EQ(c.messages[4].call_id, "c1");
  EXPECT_EQ(c.messages[5].calls[0].kind, tool_kind::custom);
  EXPECT_EQ(c.messages[6].text, "done");
  EXPECT_EQ(c.messages[7].role, role::assistant);
  ASSERT_EQ(c.tools.size(), 3U);
  EXPECT_EQ(c.tools[1].kind, tool_kind::custom);
  EXPECT_EQ(c.tools[2].name, "local_shell");
  EXPECT_EQ(c.tools[2].kind, tool_kind::local_shell);
}

TEST(responses_request, functions_of_a_namespace_tool_are_offered_with_their_namespace) {
  // How codex offers an MCP server's tools: a namespace of functions.
  const auto c = parse(wire_format::responses, R"({
    "model":"m","input":[
      {"type":"message","role":"user","content":[{"type":"input_text","text":"Ask: ok?"}]},
      {"type":"function_call","call_id":"c1","namespace":"mcp__tether","name":"ask_user","arguments":"{}"}],
    "tools":[{"type":"function","name":"exec_command","parameters":{"type":"object"}},
             {"type":"namespace","name":"mcp__tether","description":"d",
              "tools":[{"type":"function","name":"ask_user","parameters":{"type":"object"}}]}]})");
  ASSERT_EQ(c.tools.size(), 2U);
  EXPECT_EQ(c.tools[0].tool_namespace, "");
  EXPECT_EQ(c.tools[1].name, "ask_user");
  EXPECT_EQ(c.tools[1].tool_namespace, "mcp__tether");
  EXPECT_EQ(c.messages[1].calls[0].tool_namespace, "mcp__tether");
}

TEST(responses_request, a_string_input_is_one_user_message) {
  const auto c = parse(wire_format::responses, R"({"model":"m","input":"Reply with exactly: x"})");
  ASSERT_EQ(c.messages.size(), 1U);
  EXPECT_EQ(c.messages[0].role, role::user);
}

TEST(anthropic_request, system_blocks_system_messages_and_tool_results_are_normalized) {
  const auto c = parse(wire_format::anthropic, R"({
    "model":"m","system":[{"type":"text","text":"one"},{"type":"text","text":"two"}],
    "messages":[
      {"role":"system","content":"inline system"},
      {"role":"user","content":[{"type":"text","text":"Run: ls"},{"type":"image","source":{}}]},
      {"role":"assistant","content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"running"},
                                     {"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}]},
      {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"a.txt"}],"is_error":true},
                                {"type":"text","text":"<system-reminder>x</system-reminder>"}]},
      {"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"only"}]}],
    "tools":[{"name":"Bash","description":"d","input_schema":{"type":"object"}}]})");
  ASSERT_EQ(c.messages.size(), 7U);
  EXPECT_EQ(c.messages[0].text, "one\ntwo");
  EXPECT_EQ(c.messages[1].role, role::system);
  EXPECT_EQ(c.messages[2].text, "Run: ls");
  EXPECT_EQ(c.messages[3].text, "running");
  EXPECT_EQ(c.messages[3].calls[0].arguments, R"({"command":"ls"})");
  EXPECT_EQ(c.messages[4].role, role::tool_result);
  EXPECT_TRUE(c.messages[4].is_error);
  EXPECT_EQ(c.messages[4].text, "a.txt");
  EXPECT_EQ(c.messages[5].role, role::user);
  EXPECT_TRUE(c.messages[5].beside_tool_results);
  EXPECT_EQ(c.messages[6].role, role::tool_result);
  EXPECT_EQ(c.messages[6].call_id, "t2");
  ASSERT_EQ(c.tools.size(), 1U);
  EXPECT_EQ(c.tools[0].name, "Bash");
}

TEST(anthropic_request, a_message_claude_code_relays_as_a_system_entry_is_the_users_steer) {
  const auto c = parse(wire_format::anthropic, R"({
    "model":"m",
    "messages":[
      {"role":"user","content":[{"type":"text","text":"Run: sleep 1"}]},
      {"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"sleep 1"}}]},
      {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]},
      {"role":"system","content":"The user sent a new message while you were working:\nReply with exactly: STEERED\n\nIMPORTANT: After completing your current task, you MUST address the user's message above."},
      {"role":"system","content":"Available agent types: none"}],
    "tools":[{"name":"Bash","description":"d","input_schema":{"type":"object"}}]})");
  ASSERT_EQ(c.messages.size(), 5U);
  EXPECT_EQ(c.messages[3].role, role::user);
  EXPECT_FALSE(c.messages[3].beside_tool_results);
  EXPECT_EQ(c.messages[4].role, role::system);  // other system entries stay the client's
  const auto d = decide(c);
  EXPECT_FALSE(d.output.call);
  EXPECT_EQ(d.output.text, "STEERED");
}

// As claude-agent-acp sends a question's answer after it loaded the session:
// Claude Code's own /model output stands in the same user message, in blocks
// of its own, before the user's words.
TEST(requests, claude_local_command_blocks_are_not_the_users_words) {
  const std::string caveat = R"({"type":"text","text":"<local-command-caveat>Caveat: The messages below were generated by the user while running local commands.</local-command-caveat>\n"},
      {"type":"text","text":"<command-name>/model</command-name>\n  <command-message>model</command-message>\n"},
      {"type":"text","text":"<local-command-stdout>Set model to claude</local-command-stdout>\n"})";
  auto c = parse(wire_format::anthropic, R"({
    "model":"m",
    "messages":[
      {"role":"user","content":[)" + caveat + R"(,{"type":"text","text":"Ask: Color? | Red | Blue\nReply with the answer."}]},
      {"role":"assistant","content":[{"type":"tool_use","id":"q","name":"mcp__tether__ask_user","input":{"question":"Color?"}}]},
      {"role":"user","content":[{"type":"tool_result","tool_use_id":"q","content":"{\"status\":\"waiting_for_user\"}"}]},
      {"role":"assistant","content":[{"type":"text","text":"WAITING_FOR_ANSWER"}]},
      {"role":"user","content":[)" + caveat + R"(]},
      {"role":"user","content":[)" + caveat + R"(,{"type":"text","text":"answered: Blue"}]}],
    "tools":[{"name":"mcp__tether__ask_user","description":"d","input_schema":{"type":"object"}}]})");
  ASSERT_EQ(c.messages.size(), 5U);  // the message of nothing but local commands is not there
  EXPECT_EQ(c.messages[0].text, "Ask: Color? | Red | Blue\nReply with the answer.");
  EXPECT_EQ(c.messages[4].role, role::user);
  EXPECT_EQ(c.messages[4].text, "answered: Blue");
  EXPECT_EQ(decide(c).output.text, "Blue");
}

TEST(requests, wrong_shapes_are_invalid_requests_naming_the_field) {
  auto r = parse_request(wire_format::chat, boost::json::parse(R"({"messages":{}})"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, mock_errc::invalid_request);
  EXPECT_NE(r.error().message.find("messages"), std::string::npos);
  EXPECT_FALSE(parse_request(wire_format::anthropic, boost::json::parse(R"([1])")));
  EXPECT_FALSE(parse_request(wire_format::chat, boost::json::parse(R"({"model":"m"})")));
  EXPECT_FALSE(parse_request(wire_format::responses, boost::json::parse(R"({"input":5})")));
  EXPECT_FALSE(parse_request(wire_format::chat, boost::json::parse(R"({"messages":[{"role":"wizard"}]})")));
}

}  // namespace
}  // namespace tether::mock
