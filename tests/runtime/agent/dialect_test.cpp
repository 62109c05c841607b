// The dialects' output mappers, on lines the real programs printed against
// the scripted model (shortened), and the prompt an agent gets.
#include <gtest/gtest.h>

#include "model/reported.h"
#include "runtime/agent/dialect.h"
#include "runtime/agent/prompt.h"

namespace tether::runtime::agent {
namespace {

namespace json = boost::json;

std::vector<agent_event> feed_all(line_mapper& m, const std::vector<std::string>& lines) {
  std::vector<agent_event> out;
  for (const auto& l : lines) {
    auto e = m.feed(l);
    EXPECT_TRUE(e) << l << ": " << e.error().message;
    if (e)
      for (auto& x : *e) out.push_back(std::move(x));
  }
  return out;
}

template <class T>
std::vector<T> all_of(const std::vector<agent_event>& es) {
  std::vector<T> out;
  for (const auto& e : es)
    if (const auto* x = std::get_if<T>(&e)) out.push_back(*x);
  return out;
}

TEST(codex_mapper, maps_a_turn_with_a_command) {
  auto m = make_codex_exec()->mapper();
  const auto es = feed_all(
      *m,
      {R"({"type":"thread.started","thread_id":"01a2343b-a44f"})",
       R"({"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `mock` not found."}})",
       R"({"type":"turn.started"})",
       R"({"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"/bin/bash -lc \"printf hi > a\"","aggregated_output":"","exit_code":null,"status":"in_progress"}})",
       R"({"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"/bin/bash -lc \"printf hi > a\"","aggregated_output":"","exit_code":0,"status":"completed"}})",
       R"({"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"DONE_OK"}})",
       R"({"type":"turn.completed","usage":{"input_tokens":13404,"cached_input_tokens":6670,"output_tokens":17,"reasoning_output_tokens":3}})"});
  ASSERT_EQ(all_of<agent_session>(es).size(), 1u);
  EXPECT_EQ(all_of<agent_session>(es)[0].id, "01a2343b-a44f");
  const auto starts = all_of<tool_start>(es);
  ASSERT_EQ(starts.size(), 1u);  // started once, though two lines name it
  EXPECT_EQ(starts[0].tool, "exec_command");
  const auto ends = all_of<tool_end>(es);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_TRUE(ends[0].ok);
  ASSERT_EQ(all_of<agent_message>(es).size(), 1u);
  EXPECT_EQ(all_of<agent_message>(es)[0].text, "DONE_OK");
  const auto u = all_of<turn_usage>(es);
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].usage.input_tokens, 13404);
  EXPECT_EQ(u[0].usage.cached_input_tokens, 6670);
  EXPECT_EQ(u[0].usage.output_tokens, 20);
  EXPECT_EQ(all_of<turn_done>(es).size(), 1u);
  EXPECT_TRUE(all_of<turn_failed>(es).empty());  // the metadata warning is not a failure
}

TEST(codex_mapper, a_failed_turn_carries_its_message_and_a_failed_command_its_code) {
  auto m = make_codex_exec()->mapper();
  const auto es = feed_all(
      *m,
      {R"({"type":"item.completed","item":{"id":"i","type":"command_execution","command":"false","aggregated_output":"boom","exit_code":1,"status":"failed"}})",
       R"({"type":"turn.failed","error":{"message":"stream disconnected"}})"});
  const auto ends = all_of<tool_end>(es);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_FALSE(ends[0].ok);
  EXPECT_EQ(ends[0].output, "exit code 1: boom");
  ASSERT_EQ(all_of<turn_failed>(es).size(), 1u);
  EXPECT_EQ(all_of<turn_failed>(es)[0].message, "stream disconnected");
  EXPECT_TRUE(all_of<turn_done>(es).empty());
}

TEST(codex_mapper, tethers_own_question_tool_is_left_to_the_bridge) {
  auto m = make_codex_exec()->mapper();
  const auto es = feed_all(
      *m,
      {R"({"type":"item.started","item":{"id":"q","type":"mcp_tool_call","server":"tether","tool":"ask_user","arguments":{"question":"?"},"status":"in_progress"}})",
       R"({"type":"item.started","item":{"id":"o","type":"mcp_tool_call","server":"other","tool":"search","arguments":{},"status":"in_progress"}})"});
  const auto starts = all_of<tool_start>(es);
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].tool, "other.search");
}

TEST(claude_mapper, maps_a_turn_with_a_write) {
  auto m = make_claude_print()->mapper();
  const auto es = feed_all(
      *m,
      {R"({"type":"system","subtype":"init","cwd":"/w","session_id":"62c3f4ee","tools":["Bash","Write"]})",
       R"({"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_1","name":"Write","input":{"file_path":"/w/a","content":"hi"}}]},"session_id":"62c3f4ee"})",
       R"({"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":"File created"}]}})",
       R"({"type":"assistant","message":{"content":[{"type":"text","text":"DONE_OK"}]}})",
       R"({"type":"result","subtype":"success","is_error":false,"result":"DONE_OK","session_id":"62c3f4ee","total_cost_usd":0.0123,"usage":{"input_tokens":70,"cache_creation_input_tokens":30,"cache_read_input_tokens":18345,"output_tokens":9}})"});
  EXPECT_EQ(all_of<agent_session>(es).at(0).id, "62c3f4ee");
  EXPECT_EQ(all_of<tool_start>(es).at(0).tool, "Write");
  EXPECT_EQ(all_of<tool_end>(es).at(0).output, "File created");
  EXPECT_EQ(all_of<agent_message>(es).at(0).text, "DONE_OK");
  const auto u = all_of<turn_usage>(es).at(0);
  EXPECT_EQ(u.usage.input_tokens, 70 + 30 + 18345);
  EXPECT_EQ(u.usage.cached_input_tokens, 18345);
  EXPECT_EQ(u.usage.output_tokens, 9);
  ASSERT_TRUE(u.agent_cost_usd);
  EXPECT_DOUBLE_EQ(*u.agent_cost_usd, 0.0123);
  EXPECT_EQ(all_of<turn_done>(es).size(), 1u);
}

TEST(claude_mapper, partial_messages_stream_as_text_pieces) {
  auto m = make_claude_print()->mapper();
  const auto es = feed_all(
      *m,
      {R"({"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}})",
       R"({"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"partial "}}})",
       R"({"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{"}}})",
       R"({"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hello"}}})"});
  const auto pieces = all_of<text_piece>(es);
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_EQ(pieces[0].text + pieces[1].text, "partial hello");
  EXPECT_TRUE(all_of<agent_message>(es).empty());  // the whole message comes in its assistant line
}

TEST(claude_mapper, an_error_result_fails_the_turn) {
  auto m = make_claude_print()->mapper();
  const auto es = feed_all(
      *m, {R"({"type":"result","subtype":"error_during_execution","is_error":true,"result":"API Error: 401"})"});
  ASSERT_EQ(all_of<turn_failed>(es).size(), 1u);
  EXPECT_EQ(all_of<turn_failed>(es)[0].message, "API Error: 401");
  EXPECT_TRUE(all_of<turn_done>(es).empty());
}

TEST(opencode_mapper, maps_steps_tools_and_usage) {
  auto m = make_opencode_run()->mapper();
  const auto es = feed_all(
      *m,
      {R"({"type":"step_start","sessionID":"ses_1","part":{"type":"step-start"}})",
       R"({"type":"tool_use","sessionID":"ses_1","part":{"type":"tool","tool":"write","callID":"call_1","state":{"status":"completed","input":{"filePath":"/w/a","content":"hi"},"output":"Wrote file successfully."}}})",
       R"({"type":"step_finish","sessionID":"ses_1","part":{"reason":"tool-calls","tokens":{"input":7368,"output":16,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}})",
       R"({"type":"text","sessionID":"ses_1","part":{"type":"text","text":"Done."}})",
       R"({"type":"step_finish","sessionID":"ses_1","part":{"reason":"stop","tokens":{"input":46,"output":2,"reasoning":0,"cache":{"write":0,"read":7368}},"cost":0}})"});
  ASSERT_EQ(all_of<agent_session>(es).size(), 1u);  // named once though every line carries it
  EXPECT_EQ(all_of<tool_start>(es).at(0).tool, "write");
  EXPECT_TRUE(all_of<tool_end>(es).at(0).ok);
  EXPECT_EQ(all_of<agent_message>(es).at(0).text, "Done.");
  const auto u = all_of<turn_usage>(es);
  ASSERT_EQ(u.size(), 2u);
  EXPECT_EQ(u[1].usage.input_tokens, 46 + 7368);
  EXPECT_EQ(u[1].usage.cached_input_tokens, 7368);
  EXPECT_EQ(all_of<turn_done>(es).size(), 1u);  // only the step that did not end in tool calls
}

// An agent reports its tokens as it likes: a count out of range or
// negative is clamped to [0, max_reported_tokens] where it is read, and the
// parts of a sum (input + cache read + cache write) cannot overflow.
TEST(mappers, token_counts_out_of_range_are_clamped) {
  constexpr auto most = model::max_reported_tokens;
  auto opencode = make_opencode_run()->mapper();
  auto u = all_of<turn_usage>(feed_all(
      *opencode,
      {R"({"type":"step_finish","sessionID":"ses_1","part":{"reason":"stop","tokens":{"input":9223372036854775807,)"
       R"("output":-4,"reasoning":1e13,"cache":{"write":18446744073709551615,"read":12}},"cost":0}})"}));
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].usage.input_tokens, most + 12 + most);
  EXPECT_EQ(u[0].usage.cached_input_tokens, 12);
  EXPECT_EQ(u[0].usage.output_tokens, most);
  auto claude = make_claude_print()->mapper();
  u = all_of<turn_usage>(feed_all(
      *claude, {R"({"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"s",)"
                R"("usage":{"input_tokens":9223372036854775807,"cache_read_input_tokens":9223372036854775807,)"
                R"("cache_creation_input_tokens":9223372036854775807,"output_tokens":-1}})"}));
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].usage.input_tokens, 3 * most);
  EXPECT_EQ(u[0].usage.cached_input_tokens, most);
  EXPECT_EQ(u[0].usage.output_tokens, 0);
}

// A cost is used only when finite and not negative; a number out of the
// range of a double (1e400, read as infinity, written back as `Infinity`,
// which is not JSON) makes the line a protocol error quoting it.
TEST(mappers, an_agent_cost_must_be_sane_and_a_number_out_of_range_is_a_protocol_error) {
  auto claude = make_claude_print()->mapper();
  auto u = all_of<turn_usage>(feed_all(
      *claude, {R"({"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"s","total_cost_usd":-2})"}));
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].agent_cost_usd, std::nullopt);
  auto opencode = make_opencode_run()->mapper();
  const auto line = R"({"type":"step_finish","sessionID":"ses_1","part":{"reason":"stop","tokens":{"input":1},"cost":1e400}})";
  auto r = opencode->feed(line);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("a number out of range in"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("step_finish"), std::string::npos) << r.error().message;
}

TEST(mappers, garbage_is_an_error_quoting_it) {
  for (const auto& d : {make_codex_exec(), make_claude_print(), make_opencode_run()}) {
    auto m = d->mapper();
    auto r = m->feed("Segmentation fault (core dumped)");
    ASSERT_FALSE(r) << d->program();
    EXPECT_NE(r.error().message.find("Segmentation fault"), std::string::npos);
    EXPECT_FALSE(m->feed("[1,2,3]"));                     // JSON, but not an object
    EXPECT_FALSE(m->feed("\xff\xfe{"));                   // not even text
    EXPECT_TRUE(m->feed(R"({"type":"something-new"})"));  // an unknown event is no error
  }
}

store::message_row row(std::int64_t seq, store::message_role role, std::string text, std::string id = "",
                       std::string tool = "") {
  store::message_row r;
  r.seq = event_seq{seq};
  r.role = role;
  r.text = std::move(text);
  r.id = std::move(id);
  r.tool = std::move(tool);
  return r;
}

TEST(prompt, a_first_turn_is_its_input) {
  session::turn_context ctx;
  ctx.transcript = {row(3, store::message_role::user, "Reply with exactly: hi")};
  ctx.promoted = {{input_id::generate(), event_seq{3}, "Reply with exactly: hi"}};
  EXPECT_EQ(render_prompt(ctx, "codex-exec"), "Reply with exactly: hi");
  EXPECT_FALSE(can_resume(ctx, "codex-exec"));
}

TEST(prompt, resuming_sends_only_what_the_agent_has_not_seen) {
  using store::message_role;
  session::turn_context ctx;
  ctx.transcript = {row(3, message_role::user, "Remember the phrase: x"), row(6, message_role::assistant, "Noted."),
                    row(9, message_role::tool_call, "", "call_q", "ask_user"),
                    row(10, message_role::tool_result,
                        R"({"answers":[{"question_id":"q1","option_ids":["blue"],"labels":["Blue"]}]})", "call_q"),
                    row(11, message_role::notice, "Tether restarted while this turn was running.")};
  ctx.binding = store::runtime_binding{"codex-exec", "thread-1", 0, event_seq{6}, ""};
  EXPECT_TRUE(can_resume(ctx, "codex-exec"));
  EXPECT_FALSE(can_resume(ctx, "claude-print"));  // another runtime's session is not ours to resume
  EXPECT_EQ(render_prompt(ctx, "codex-exec"), "answered: Blue\n\nTether restarted while this turn was running.");
}

TEST(prompt, an_input_of_a_turn_stopped_before_the_agent_took_it_up_is_context_not_a_request) {
  using store::message_role;
  session::turn_context ctx;
  // Seq 8 was stopped before the agent printed a word (no new binding); 12 is this turn's.
  ctx.transcript = {row(3, message_role::user, "Remember the phrase: x"), row(6, message_role::assistant, "Noted."),
                    row(8, message_role::user, "Wait for file /never\nReply with exactly: \"no\""),
                    row(12, message_role::user, "Recall the phrase.")};
  ctx.promoted = {{input_id::generate(), event_seq{12}, "Recall the phrase."}};
  ctx.binding = store::runtime_binding{"opencode-run", "ses-1", 0, event_seq{6}, ""};
  const auto p = render_prompt(ctx, "opencode-run");
  // Each line of the stopped input is inside one JSON string, so no line of the prompt starts with it.
  EXPECT_NE(p.find("\nuser: \"Wait for file /never\\nReply with exactly: \\\"no\\\"\"\n"), std::string::npos) << p;
  EXPECT_EQ(p.find("\nWait for file"), std::string::npos) << p;
  EXPECT_EQ(p.find("\nReply with exactly"), std::string::npos) << p;
  EXPECT_NE(p.find("not requests"), std::string::npos) << p;
  EXPECT_TRUE(p.ends_with("\n\n---\n\nRecall the phrase.")) << p;
  // An answer or a notice before this turn's input is still news to act on, not a quote.
  ctx.transcript.insert(ctx.transcript.begin() + 3, row(9, message_role::notice, "Tether restarted."));
  EXPECT_TRUE(render_prompt(ctx, "opencode-run").ends_with("---\n\nTether restarted.\n\nRecall the phrase."));
  // Without this turn's inputs (a continuation), everything since the binding is news, as before.
  ctx.promoted.clear();
  EXPECT_TRUE(render_prompt(ctx, "opencode-run").starts_with("Wait for file /never\n"));
}

TEST(prompt, another_runtimes_history_is_rendered_before_the_new_input) {
  using store::message_role;
  session::turn_context ctx;
  ctx.transcript = {row(3, message_role::user, "Remember the phrase: teal"), row(6, message_role::assistant, "Noted."),
                    row(8, message_role::user, "Recall the phrase.")};
  ctx.promoted = {{input_id::generate(), event_seq{8}, "Recall the phrase."}};
  const auto p = render_prompt(ctx, "claude-print");
  EXPECT_NE(p.find("conversation so far"), std::string::npos) << p;
  EXPECT_NE(p.find("user: Remember the phrase: teal"), std::string::npos) << p;
  EXPECT_NE(p.find("assistant: Noted."), std::string::npos) << p;
  EXPECT_TRUE(p.ends_with("---\n\nRecall the phrase.")) << p;
}

}  // namespace
}  // namespace tether::runtime::agent
