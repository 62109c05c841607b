// The native runtime end to end: the session service drives it against the
// scripted model over loopback HTTP, once per wire format.
#include "runtime/native/native_runtime.h"

#include <fstream>
#include <iterator>

#include <boost/json.hpp>

#include "fixture.h"
#include "util/metrics.h"

namespace tether::testing {
namespace {

using model::outcome;

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class agent_loop : public native_fixture {};

TEST_P(agent_loop, a_file_written_by_a_tool_lands_in_the_workspace_and_the_answer_follows) {
  start();
  const auto s = new_session();
  turn(s, "Write file notes/a.txt: hello\\nworld\nReply with exactly: written");
  EXPECT_EQ(read_file(workspace(s) / "notes" / "a.txt"), "hello\nworld");
  EXPECT_EQ(last_answer(s), "written");
  const auto exes = executions(s);
  ASSERT_EQ(exes.size(), 1U);
  EXPECT_EQ(exes[0].outcome, outcome::succeeded);
  EXPECT_GT(exes[0].usage.input_tokens, 0);
  EXPECT_GT(exes[0].usage.output_tokens, 0);
  EXPECT_EQ(exes[0].usage.cost_status, "unpriced") << "the scripted model has no price";
  // The call was durable before it ran, and settled before the next step.
  std::vector<std::string> order;
  for (const auto& e : events(s)) {
    const auto t = std::string(e.type());
    if (t == "tool.called" || t == "tool.succeeded" || t == "step.started") order.push_back(t);
  }
  EXPECT_EQ(order, (std::vector<std::string>{"step.started", "tool.called", "tool.succeeded", "step.started"}));
}

TEST_P(agent_loop, tool_calls_of_one_step_settle_before_the_next_step_and_a_failed_call_is_reported) {
  start();
  const auto s = new_session();
  turn(s, "Run: cat missing-file.txt\nRun: echo second\nReply with exactly: both ran");
  EXPECT_EQ(last_answer(s), "both ran");
  EXPECT_EQ(count(s, "tool.called"), 2U);
  EXPECT_EQ(count(s, "tool.succeeded") + count(s, "tool.failed"), 2U);
}

TEST_P(agent_loop, a_question_makes_the_run_wait_and_the_answer_continues_it) {
  start();
  const auto s = new_session();
  turn(s, "Ask: Which color? | Red | Blue\nReply with the answer.");
  auto exes = executions(s);
  ASSERT_EQ(exes.size(), 1U);
  EXPECT_EQ(exes[0].outcome, outcome::waiting);
  auto pending = run(store_->pending_interactions(s));
  ASSERT_TRUE(pending);
  ASSERT_EQ(pending->size(), 1U);
  const auto& q = (*pending)[0].payload.at("questions").at(0);
  EXPECT_EQ(q.at("question"), "Which color?");
  ASSERT_TRUE(run(service_->answer((*pending)[0].id,
                                   boost::json::parse(R"({"answers":[{"question_id":"q1","option_ids":["blue"]}]})"))));
  eventually([&] { return executions(s).size() == 2 && executions(s)[1].outcome.has_value(); });
  idle(s);
  exes = executions(s);
  EXPECT_EQ(exes[1].outcome, outcome::succeeded);
  EXPECT_EQ(last_answer(s), "Blue");
}

TEST_P(agent_loop, a_steer_sent_mid_turn_joins_the_running_turn) {
  start();
  const auto s = new_session();
  admit(s, "Stream slowly: 30\nRun: echo one\nReply with exactly: first");
  eventually([&] { return count(s, "step.started") >= 1; });
  admit(s, "Reply with exactly: steered");
  eventually([&] { return !executions(s).empty() && executions(s)[0].outcome.has_value(); });
  idle(s);
  EXPECT_EQ(executions(s).size(), 1U) << "the steer ran inside the same execution";
  EXPECT_EQ(last_answer(s), "steered");
  EXPECT_EQ(count(s, "input.promoted"), 2U);
}

// A final answer costs no commit of its own: it is written with the
// execution's end (turn_host::boundary_after), and step.started is not
// waited for. One turn: admission, start + promotion, step.started, then
// answer + execution.finished + lease release (it used to take six).
TEST_P(agent_loop, a_turn_that_ends_with_an_answer_takes_at_most_four_commits_the_answer_written_with_the_end) {
  start();
  const auto s = new_session();
  turn(s, "Reply with exactly: warm-up");  // the first request of a process may differ (connections, caches)
  const auto before = metrics::store_commit_seconds().count();
  turn(s, "Reply with exactly: counted");
  // 4, or 3 when the writer happens to take step.started together with the answer.
  const auto commits = metrics::store_commit_seconds().count() - before;
  EXPECT_LE(commits, 4U) << "the answer has a commit of its own, or step.started was waited for";
  EXPECT_GE(commits, 3U);
  EXPECT_EQ(last_answer(s), "counted");
  const auto all = events(s);
  ASSERT_GE(all.size(), 3U);
  std::vector<std::string> tail;
  for (auto it = all.end() - 3; it != all.end(); ++it) tail.emplace_back(it->type());
  EXPECT_EQ(tail, (std::vector<std::string>{"text.ended", "step.ended", "execution.finished"}));
}

// A queued input admitted while the answer streams gets its own turn in the
// same execution: the held answer is written with that input's promotion,
// before it.
TEST_P(agent_loop, a_held_answer_is_written_before_the_next_queued_input_is_promoted) {
  start();
  const auto s = new_session();
  admit(s, "Stream slowly: 30\nReply with exactly: first one two three four five six seven eight");
  eventually([&] { return count(s, "step.started") >= 1; });
  admit(s, "Reply with exactly: second", model::delivery::queue);
  idle(s);
  EXPECT_EQ(last_answer(s), "second");
  std::vector<std::string> order;
  for (const auto& e : events(s)) {
    const auto t = std::string(e.type());
    if (t == "text.ended" || t == "step.ended" || t == "input.promoted" || t == "execution.finished")
      order.push_back(t);
  }
  EXPECT_EQ(order, (std::vector<std::string>{"input.promoted", "text.ended", "step.ended", "input.promoted",
                                             "text.ended", "step.ended", "execution.finished"}));
}

TEST_P(agent_loop, an_interrupt_mid_stream_finishes_the_run_interrupted) {
  start();
  const auto s = new_session();
  admit(s, "Stream slowly: 200\nReply with exactly: this answer takes a long time to stream out");
  eventually([&] { return count(s, "step.started") >= 1; });
  auto ack = run(service_->interrupt(s));
  ASSERT_TRUE(ack);
  idle(s);
  const auto exes = executions(s);
  ASSERT_EQ(exes.size(), 1U);
  EXPECT_EQ(exes[0].outcome, outcome::interrupted);
  EXPECT_EQ(count(s, "text.ended"), 0U);
  EXPECT_EQ(count(s, "step.failed"), 1U) << "the open step is failed";
}

struct retried_kind {
  std::string kind;
};

TEST_P(agent_loop, retried_failures_schedule_a_retry_and_then_succeed) {
  start();
  for (const std::string kind : {"rate_limit", "server_error", "overloaded"}) {
    SCOPED_TRACE(kind);
    const auto s = new_session();
    turn(s, "Fail with: " + kind + " once\nReply with exactly: recovered " + kind);
    EXPECT_EQ(count(s, "step.retry_scheduled"), 1U);
    EXPECT_EQ(last_answer(s), "recovered " + kind);
    EXPECT_EQ(executions(s).at(0).outcome, outcome::succeeded);
  }
}

TEST_P(agent_loop, a_failure_that_keeps_coming_back_gives_up_after_four_retries) {
  start();
  const auto s = new_session();
  turn(s, "Fail with: server_error\nReply with exactly: never");
  EXPECT_EQ(count(s, "step.retry_scheduled"), 4U);
  EXPECT_EQ(count(s, "step.failed"), 1U);
  const auto exes = executions(s);
  ASSERT_EQ(exes.size(), 1U);
  EXPECT_EQ(exes[0].outcome, outcome::failed);
}

TEST_P(agent_loop, an_auth_failure_is_not_retried_and_fails_the_run_with_the_providers_message) {
  start();
  const auto s = new_session();
  turn(s, "Fail with: auth\nReply with exactly: never");
  EXPECT_EQ(count(s, "step.retry_scheduled"), 0U);
  const auto exes = executions(s);
  ASSERT_EQ(exes.size(), 1U);
  EXPECT_EQ(exes[0].outcome, outcome::failed);
  EXPECT_FALSE(exes[0].error.empty());
  EXPECT_EQ(exes[0].error.find("test-key"), std::string::npos) << "the key never reaches a result";
}

TEST_P(agent_loop, an_overflow_before_output_rebuilds_the_step_once) {
  start();
  const auto s = new_session();
  turn(s, "Fail with: overflow once\nReply with exactly: fits now");
  EXPECT_EQ(last_answer(s), "fits now");
  EXPECT_EQ(executions(s).at(0).outcome, outcome::succeeded);

  const auto t = new_session();
  turn(t, "Fail with: overflow\nReply with exactly: never");
  const auto exes = executions(t);
  EXPECT_EQ(exes.at(0).outcome, outcome::failed) << "a second overflow fails the step";
  const auto& why = exes.at(0).error;
  EXPECT_TRUE(why.find("context") != std::string::npos || why.find("too long") != std::string::npos)
      << "the provider's own words: " << why;
}

TEST_P(agent_loop, a_stream_cut_after_output_continues_in_a_new_step_after_a_note) {
  start();
  const auto s = new_session();
  turn(s, "Fail with: disconnect once\nReply with exactly: after the cut");
  EXPECT_EQ(count(s, "step.failed"), 1U);
  std::size_t notes = 0;
  for (const auto& e : events(s))
    if (const auto* n = e.as<model::synthetic>(); n != nullptr && n->reason == "stream_cut") ++notes;
  EXPECT_EQ(notes, 1U);
  EXPECT_EQ(last_answer(s), "after the cut");
  EXPECT_EQ(executions(s).at(0).outcome, outcome::succeeded);
}

TEST_P(agent_loop, max_steps_ends_with_tools_disabled_and_a_final_answer) {
  options().max_steps = 2;
  start();
  const auto s = new_session();
  turn(s, "Run: echo 1\nRun: echo 2\nRun: echo 3\nReply with exactly: unreachable");
  EXPECT_EQ(count(s, "step.started"), 2U);
  const auto requests = mock_.requests();
  ASSERT_FALSE(requests.empty());
  const auto& last = requests.back().at("body").as_object();
  const auto* tools = last.if_contains("tools");
  const auto* choice = last.if_contains("tool_choice");
  // Anthropic refuses tool_use history without tool definitions: it gets them
  // with tool_choice "none" instead.
  const bool none = choice != nullptr && choice->is_object() && choice->as_object().if_contains("type") != nullptr &&
                    choice->as_object().at("type") == "none";
  EXPECT_TRUE(tools == nullptr || tools->as_array().empty() || none) << "the last request offers no tools";
  EXPECT_EQ(executions(s).at(0).outcome, outcome::succeeded);
}

TEST_P(agent_loop, a_large_history_is_compacted_with_the_template_and_recent_messages_kept) {
  options().compaction.context_window = 2'000;
  options().compaction.reserve = 500;
  options().compaction.keep_recent = 2;
  start();
  const auto s = new_session();
  const std::string filler(2'000, 'x');
  turn(s, "Remember the phrase: " + filler);
  turn(s, "Reply with exactly: still here");
  EXPECT_GE(count(s, "compaction.ended"), 1U);
  EXPECT_EQ(last_answer(s), "still here");
  // The summary request quoted the history and asked for the fixed sections.
  bool asked = false;
  for (const auto& r : mock_.requests()) {
    const auto text = boost::json::serialize(r.at("body"));
    if (text.find("Relevant files") != std::string::npos && text.find("Next move") != std::string::npos) asked = true;
  }
  EXPECT_TRUE(asked);
  auto ctx = run(store_->context(s));
  ASSERT_TRUE(ctx);
  ASSERT_FALSE(ctx->empty());
  EXPECT_EQ(ctx->front().role, store::message_role::summary);
}

INSTANTIATE_TEST_SUITE_P(wire, agent_loop,
                         ::testing::Values(wire_api::openai_chat, wire_api::openai_responses, wire_api::anthropic),
                         wire_name);

}  // namespace
}  // namespace tether::testing
