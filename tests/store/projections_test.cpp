#include "store/event_store.h"

#include "store_fixture.h"

namespace tether::store::test {
namespace {

using inputs = store_test;

TEST_F(inputs, an_exact_retry_is_duplicate_input_and_writes_nothing) {
  open();
  const auto s = new_session();
  const auto id = input_id::generate();
  auto first = append(s, {admitted(id, "hello", model::delivery::queue)});
  ASSERT_TRUE(first) << why(first);
  auto retry = append(s, {admitted(id, "hello", model::delivery::queue)});
  ASSERT_FALSE(retry);
  EXPECT_EQ(retry.error(), store_errc::duplicate_input);
  EXPECT_EQ(last_seq(s), 2);
  auto original = run(store().get_input(id));
  ASSERT_TRUE(original) << why(original);
  EXPECT_EQ(original->prompt, "hello");
  EXPECT_EQ(original->delivery, model::delivery::queue);
  EXPECT_EQ(original->status, input_status::pending);
  EXPECT_EQ(original->admitted_seq.value, 2);
  EXPECT_EQ(original->session, s);
}

TEST_F(inputs, the_same_id_with_another_prompt_delivery_or_session_is_input_conflict) {
  open();
  const auto s = new_session();
  const auto other = new_session();
  const auto id = input_id::generate();
  ASSERT_TRUE(append(s, {admitted(id, "hello")}));
  auto prompt = append(s, {admitted(id, "bye")});
  ASSERT_FALSE(prompt);
  EXPECT_EQ(prompt.error(), store_errc::input_conflict);
  auto delivery = append(s, {admitted(id, "hello", model::delivery::queue)});
  ASSERT_FALSE(delivery);
  EXPECT_EQ(delivery.error(), store_errc::input_conflict);
  auto session = append(other, {admitted(id, "hello")});
  ASSERT_FALSE(session);
  EXPECT_EQ(session.error(), store_errc::input_conflict);
  EXPECT_EQ(last_seq(other), 1);
}

TEST_F(inputs, an_id_already_used_by_an_assistant_message_is_input_conflict) {
  open();
  const auto s = new_session();
  const auto answer = message_id::generate();
  ASSERT_TRUE(append(s, {model::text_ended{answer, "I am the model"}}));
  auto r = append(s, {admitted(answer, "hello")});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::input_conflict);
}

TEST_F(inputs, an_admitted_input_waits_outside_the_transcript_until_promoted) {
  open();
  const auto s = new_session();
  const auto a = input_id::generate();
  const auto b = input_id::generate();
  const auto e = execution_id::generate();
  ASSERT_TRUE(append(s, {admitted(a, "first", model::delivery::queue), admitted(b, "second")}));
  auto pending = run(store().pending_inputs(s));
  ASSERT_TRUE(pending);
  ASSERT_EQ(pending->size(), 2U);
  EXPECT_EQ((*pending)[0].id, a) << "admission order";
  EXPECT_EQ((*pending)[1].id, b);
  auto before = run(store().context(s));
  ASSERT_TRUE(before);
  EXPECT_TRUE(before->empty());

  ASSERT_TRUE(append(s, {started(e), model::input_promoted{b, e}}));
  auto after = run(store().context(s));
  ASSERT_TRUE(after);
  ASSERT_EQ(after->size(), 1U);
  EXPECT_EQ((*after)[0].role, message_role::user);
  EXPECT_EQ((*after)[0].id, b.str());
  EXPECT_EQ((*after)[0].text, "second");
  auto promoted = run(store().get_input(b));
  ASSERT_TRUE(promoted);
  EXPECT_EQ(promoted->status, input_status::promoted);
  EXPECT_EQ(promoted->execution, e);
  pending = run(store().pending_inputs(s));
  ASSERT_TRUE(pending);
  ASSERT_EQ(pending->size(), 1U);
  EXPECT_EQ((*pending)[0].id, a);
}

TEST_F(inputs, promotion_requires_a_pending_input_of_the_session) {
  open();
  const auto s = new_session();
  const auto other = new_session();
  const auto id = input_id::generate();
  const auto e = execution_id::generate();
  ASSERT_TRUE(append(s, {admitted(id, "hi"), started(e)}));
  auto unknown = append(s, {model::input_promoted{input_id::generate(), e}});
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error(), store_errc::rejected);
  auto elsewhere = append(other, {model::input_promoted{id, e}});
  ASSERT_FALSE(elsewhere);
  EXPECT_EQ(elsewhere.error(), store_errc::rejected);
  ASSERT_TRUE(append(s, {model::input_promoted{id, e}}));
  auto twice = append(s, {model::input_promoted{id, e}});
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error(), store_errc::rejected);
  auto cancel_promoted = append(s, {model::input_cancelled{id, "too late"}});
  ASSERT_FALSE(cancel_promoted);
  EXPECT_EQ(cancel_promoted.error(), store_errc::rejected);
}

TEST_F(inputs, a_cancelled_input_leaves_the_inbox_and_cannot_be_promoted) {
  open();
  const auto s = new_session();
  const auto id = input_id::generate();
  ASSERT_TRUE(append(s, {admitted(id, "hi")}));
  ASSERT_TRUE(append(s, {model::input_cancelled{id, "user"}}));
  auto pending = run(store().pending_inputs(s));
  ASSERT_TRUE(pending);
  EXPECT_TRUE(pending->empty());
  auto row = run(store().get_input(id));
  ASSERT_TRUE(row);
  EXPECT_EQ(row->status, input_status::cancelled);
  const auto e = execution_id::generate();
  auto r = append(s, {started(e), model::input_promoted{id, e}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::rejected);
}

using executions = store_test;

TEST_F(executions, one_open_execution_per_session) {
  open();
  const auto s = new_session();
  const auto e = execution_id::generate();
  ASSERT_TRUE(append(s, {started(e)}));
  auto again = append(s, {started(execution_id::generate())});
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error(), store_errc::rejected);
  auto wrong = append(s, {finished(execution_id::generate())});
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error(), store_errc::rejected);

  model::usage u{10, 5, 2};
  ASSERT_TRUE(append(s, {model::execution_finished{e, model::outcome::failed, "boom", "it broke", u}}));
  auto sess = run(store().get_session(s));
  ASSERT_TRUE(sess);
  EXPECT_FALSE(sess->open_execution);
  auto row = run(store().get_execution(e));
  ASSERT_TRUE(row) << why(row);
  EXPECT_EQ(row->status, execution_status::finished);
  EXPECT_EQ(row->outcome, model::outcome::failed);
  EXPECT_EQ(row->reason, "boom");
  EXPECT_EQ(row->error, "it broke");
  EXPECT_EQ(row->usage, u);
  EXPECT_EQ(row->started_seq.value, 2);
  EXPECT_EQ(row->node, "node-a");
  auto twice = append(s, {finished(e)});
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error(), store_errc::rejected);
  ASSERT_TRUE(append(s, {started(execution_id::generate())})) << "a new execution may start";
  auto all = run(store().list_executions(s));
  ASSERT_TRUE(all);
  EXPECT_EQ(all->size(), 2U);
}

TEST_F(executions, steps_track_the_open_step) {
  open();
  const auto s = new_session();
  const auto e = execution_id::generate();
  ASSERT_TRUE(append(s, {started(e), model::step_started{e, 1}}));
  auto row = run(store().get_execution(e));
  ASSERT_TRUE(row);
  EXPECT_EQ(row->open_step, 1);
  ASSERT_TRUE(append(s, {model::step_ended{"stop", {}}}));
  row = run(store().get_execution(e));
  ASSERT_TRUE(row);
  EXPECT_FALSE(row->open_step);
  auto foreign = append(s, {model::step_started{execution_id::generate(), 2}});
  ASSERT_FALSE(foreign);
  EXPECT_EQ(foreign.error(), store_errc::rejected);
}

TEST_F(executions, recovered_must_name_the_open_execution) {
  open();
  const auto s = new_session();
  const auto e = execution_id::generate();
  auto none = append(s, {model::execution_recovered{e, "node-a/2", 1}});
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error(), store_errc::rejected);
  ASSERT_TRUE(append(s, {started(e)}));
  EXPECT_TRUE(append(s, {model::execution_recovered{e, "node-a/2", 1}}));
}

using tools = store_test;

TEST_F(tools, a_tool_result_needs_a_running_call_of_the_session) {
  open();
  const auto s = new_session();
  const auto e = execution_id::generate();
  const auto call = call_id::generate();
  auto unknown = append(s, {model::tool_succeeded{call_id::generate(), "out", ""}});
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error(), store_errc::rejected);
  ASSERT_TRUE(append(s, {started(e), model::tool_called{call, "bash", boost::json::object{{"cmd", "ls"}}, false}}));
  auto calls = run(store().unsettled_calls(s));
  ASSERT_TRUE(calls);
  ASSERT_EQ(calls->size(), 1U);
  EXPECT_EQ((*calls)[0].execution, e);
  EXPECT_EQ((*calls)[0].tool, "bash");
  EXPECT_EQ((*calls)[0].input, boost::json::value(boost::json::object{{"cmd", "ls"}}));
  ASSERT_TRUE(append(s, {model::tool_failed{call, "exit 1"}}));
  auto twice = append(s, {model::tool_succeeded{call, "late", ""}});
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error(), store_errc::rejected);
  calls = run(store().unsettled_calls(s));
  ASSERT_TRUE(calls);
  EXPECT_TRUE(calls->empty());

  auto ctx = run(store().context(s));
  ASSERT_TRUE(ctx);
  ASSERT_EQ(ctx->size(), 2U);
  EXPECT_EQ((*ctx)[0].role, message_role::tool_call);
  EXPECT_EQ((*ctx)[0].tool, "bash");
  EXPECT_EQ((*ctx)[0].input, boost::json::value(boost::json::object{{"cmd", "ls"}}));
  EXPECT_EQ((*ctx)[1].role, message_role::tool_result);
  EXPECT_EQ((*ctx)[1].id, call.str());
  EXPECT_EQ((*ctx)[1].text, "exit 1");
  EXPECT_TRUE((*ctx)[1].is_error);
}

TEST_F(tools, a_call_id_cannot_be_reused) {
  open();
  const auto s = new_session();
  const auto call = call_id::generate();
  ASSERT_TRUE(append(s, {model::tool_called{call, "read", nullptr, true}}));
  auto r = append(s, {model::tool_called{call, "read", nullptr, true}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::rejected);
}

using interactions = store_test;

TEST_F(interactions, resolving_twice_is_interaction_not_pending) {
  open();
  const auto s = new_session();
  const auto id = interaction_id::generate();
  const auto call = call_id::generate();
  ASSERT_TRUE(append(s, {model::interaction_requested{id, call, "question", boost::json::object{{"q", "?"}}}}));
  auto pending = run(store().pending_interactions(s));
  ASSERT_TRUE(pending);
  ASSERT_EQ(pending->size(), 1U);
  EXPECT_EQ((*pending)[0].call, call);
  ASSERT_TRUE(append(s, {model::interaction_resolved{id, "answered", "yes"}}));
  auto row = run(store().get_interaction(id));
  ASSERT_TRUE(row);
  EXPECT_EQ(row->status, interaction_status::answered);
  ASSERT_TRUE(row->result.is_string());
  EXPECT_EQ(row->result.get_string(), "yes");
  auto sess = run(store().get_session(s));
  ASSERT_TRUE(sess);
  EXPECT_TRUE(sess->continuation_pending);

  auto twice = append(s, {model::interaction_resolved{id, "answered", "again"}});
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error(), store_errc::interaction_not_pending);
  auto unknown = append(s, {model::interaction_resolved{interaction_id::generate(), "answered", "x"}});
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error(), store_errc::not_found);

  ASSERT_TRUE(append(s, {started(execution_id::generate())}));
  sess = run(store().get_session(s));
  ASSERT_TRUE(sess);
  EXPECT_FALSE(sess->continuation_pending) << "execution.started consumes the continuation";
}

TEST_F(interactions, a_resolution_needs_a_known_status) {
  open();
  const auto s = new_session();
  const auto id = interaction_id::generate();
  ASSERT_TRUE(append(s, {model::interaction_requested{id, {}, "question", nullptr}}));
  auto r = append(s, {model::interaction_resolved{id, "maybe", nullptr}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::rejected);
}

using transcript = store_test;

TEST_F(transcript, reset_starts_a_new_generation_and_context_shows_only_it) {
  open();
  const auto s = new_session();
  const auto e = execution_id::generate();
  const auto in = input_id::generate();
  ASSERT_TRUE(append(s, {admitted(in, "before"), started(e), model::input_promoted{in, e},
                         model::text_ended{message_id::generate(), "old answer"}, finished(e),
                         model::runtime_bound{"codex", "thread-1"}}));
  auto reset = append(s, {model::session_reset{}});
  ASSERT_TRUE(reset) << why(reset);
  ASSERT_EQ(reset->events.size(), 1U);
  ASSERT_NE(reset->events[0].as<model::session_reset>(), nullptr);
  EXPECT_EQ(reset->events[0].as<model::session_reset>()->generation, 1) << "the append returns the stored payload";
  const auto stored = all_events(s);
  EXPECT_EQ(stored.back().as<model::session_reset>()->generation, 1) << "the generation is in the stored row";

  auto sess = run(store().get_session(s));
  ASSERT_TRUE(sess);
  EXPECT_EQ(sess->generation, 1);
  EXPECT_EQ(sess->runtime, "");
  EXPECT_EQ(sess->external_session_id, "");
  auto ctx = run(store().context(s));
  ASSERT_TRUE(ctx);
  EXPECT_TRUE(ctx->empty());

  ASSERT_TRUE(append(s, {notice("after reset"), model::text_ended{message_id::generate(), "new answer"}}));
  ctx = run(store().context(s));
  ASSERT_TRUE(ctx);
  ASSERT_EQ(ctx->size(), 2U);
  EXPECT_EQ((*ctx)[0].role, message_role::notice);
  EXPECT_EQ((*ctx)[0].text, "after reset");
  EXPECT_EQ((*ctx)[1].role, message_role::assistant);
  EXPECT_EQ((*ctx)[1].text, "new answer");
  EXPECT_EQ((*ctx)[1].generation, 1);

  auto again = append(s, {model::session_reset{}});
  ASSERT_TRUE(again);
  EXPECT_EQ(again->events[0].as<model::session_reset>()->generation, 2);
}

TEST_F(transcript, compaction_puts_its_summary_first_and_keeps_the_messages_from_its_seq) {
  open();
  const auto s = new_session();
  ASSERT_TRUE(append(s, {notice("old 1"), notice("old 2")}));
  auto kept = append(s, {notice("kept 1"), notice("kept 2")});
  ASSERT_TRUE(kept);
  const auto from = kept->events[0].seq.value;
  ASSERT_TRUE(append(s, {model::compaction_ended{"the summary", from}}));
  auto ctx = run(store().context(s));
  ASSERT_TRUE(ctx) << ctx.error().describe();
  ASSERT_EQ(ctx->size(), 3U);
  EXPECT_EQ((*ctx)[0].role, message_role::summary);
  EXPECT_EQ((*ctx)[0].text, "the summary");
  EXPECT_EQ((*ctx)[1].text, "kept 1");
  EXPECT_EQ((*ctx)[2].text, "kept 2");

  ASSERT_TRUE(append(s, {model::session_reset{}}));
  ctx = run(store().context(s));
  ASSERT_TRUE(ctx);
  EXPECT_TRUE(ctx->empty()) << "a reset drops the summary too";
}

TEST_F(transcript, a_compaction_must_keep_from_a_seq_of_the_session) {
  open();
  const auto s = new_session();
  auto r = append(s, {model::compaction_ended{"summary", 99}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::rejected);
  r = append(s, {model::compaction_ended{"summary", 0}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::rejected);
}

TEST_F(transcript, runtime_bound_and_session_updated_change_the_session_row) {
  open();
  const auto s = new_session("old");
  ASSERT_TRUE(append(s, {model::runtime_bound{"claude", "abc"}, model::session_updated{"new title"}}));
  auto sess = run(store().get_session(s));
  ASSERT_TRUE(sess);
  EXPECT_EQ(sess->runtime, "claude");
  EXPECT_EQ(sess->external_session_id, "abc");
  EXPECT_EQ(sess->title, "new title");
  EXPECT_EQ(sess->workspace, "/srv/project");
  EXPECT_EQ(sess->profile, "default");
}

TEST_F(transcript, an_assistant_message_id_must_be_new) {
  open();
  const auto s = new_session();
  const auto id = message_id::generate();
  ASSERT_TRUE(append(s, {model::text_ended{id, "one"}}));
  auto dup = append(s, {model::text_ended{id, "two"}});
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error(), store_errc::rejected);
  const auto pending = input_id::generate();
  ASSERT_TRUE(append(s, {admitted(pending, "waiting")}));
  auto input = append(s, {model::text_ended{pending, "steals an input id"}});
  ASSERT_FALSE(input);
  EXPECT_EQ(input.error(), store_errc::rejected);
}

TEST_F(transcript, store_only_events_are_stored_without_messages) {
  open();
  const auto s = new_session();
  ASSERT_TRUE(append(s, {model::reasoning_ended{"thinking"}, model::step_retry_scheduled{1, 5, "429"}}));
  EXPECT_EQ(all_events(s).size(), 3U);
  auto ctx = run(store().context(s));
  ASSERT_TRUE(ctx);
  EXPECT_TRUE(ctx->empty());
}

TEST_F(transcript, list_sessions_shows_the_most_recently_updated_first) {
  open();
  const auto a = new_session("a");
  clock_.advance(10);
  const auto b = new_session("b");
  clock_.advance(10);
  ASSERT_TRUE(append(a, {notice("touch")}));
  auto list = run(store().list_sessions(10));
  ASSERT_TRUE(list);
  ASSERT_EQ(list->size(), 2U);
  EXPECT_EQ((*list)[0].id, a);
  EXPECT_EQ((*list)[1].id, b);
  EXPECT_EQ((*list)[0].updated_at, clock_.now());
}

}  // namespace
}  // namespace tether::store::test
