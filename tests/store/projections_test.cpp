#include "store/event_store.h"

#include "backends.h"

namespace tether::store::test {
namespace {

template <class F>
class inputs : public store_test<F> {};
TYPED_TEST_SUITE(inputs, backends, backend_names);

TYPED_TEST(inputs, an_exact_retry_is_duplicate_input_and_writes_nothing) {
  this->open();
  const auto s = this->new_session();
  const auto id = input_id::generate();
  auto first = this->append(s, {admitted(id, "hello", model::delivery::queue)});
  ASSERT_TRUE(first) << why(first);
  auto retry = this->append(s, {admitted(id, "hello", model::delivery::queue)});
  ASSERT_FALSE(retry);
  EXPECT_EQ(retry.error(), store_errc::duplicate_input);
  EXPECT_EQ(this->last_seq(s), 2);
  auto original = this->run(this->store().get_input(id));
  ASSERT_TRUE(original) << why(original);
  EXPECT_EQ(original->prompt, "hello");
  EXPECT_EQ(original->delivery, model::delivery::queue);
  EXPECT_EQ(original->status, input_status::pending);
  EXPECT_EQ(original->admitted_seq.value, 2);
  EXPECT_EQ(original->session, s);
}

TYPED_TEST(inputs, the_same_id_with_another_prompt_delivery_or_session_is_input_conflict) {
  this->open();
  const auto s = this->new_session();
  const auto other = this->new_session();
  const auto id = input_id::generate();
  ASSERT_TRUE(this->append(s, {admitted(id, "hello")}));
  auto prompt = this->append(s, {admitted(id, "bye")});
  ASSERT_FALSE(prompt);
  EXPECT_EQ(prompt.error(), store_errc::input_conflict);
  auto delivery = this->append(s, {admitted(id, "hello", model::delivery::queue)});
  ASSERT_FALSE(delivery);
  EXPECT_EQ(delivery.error(), store_errc::input_conflict);
  auto session = this->append(other, {admitted(id, "hello")});
  ASSERT_FALSE(session);
  EXPECT_EQ(session.error(), store_errc::input_conflict);
  EXPECT_EQ(this->last_seq(other), 1);
}

TYPED_TEST(inputs, an_id_already_used_by_an_assistant_message_is_input_conflict) {
  this->open();
  const auto s = this->new_session();
  const auto answer = message_id::generate();
  ASSERT_TRUE(this->append(s, {model::text_ended{answer, "I am the model"}}));
  auto r = this->append(s, {admitted(answer, "hello")});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::input_conflict);
}

TYPED_TEST(inputs, an_admitted_input_waits_outside_the_transcript_until_promoted) {
  this->open();
  const auto s = this->new_session();
  const auto a = input_id::generate();
  const auto b = input_id::generate();
  const auto e = execution_id::generate();
  ASSERT_TRUE(this->append(s, {admitted(a, "first", model::delivery::queue), admitted(b, "second")}));
  auto pending = this->run(this->store().pending_inputs(s));
  ASSERT_TRUE(pending);
  ASSERT_EQ(pending->size(), 2U);
  EXPECT_EQ((*pending)[0].id, a) << "admission order";
  EXPECT_EQ((*pending)[1].id, b);
  auto before = this->run(this->store().context(s));
  ASSERT_TRUE(before);
  EXPECT_TRUE(before->empty());

  ASSERT_TRUE(this->append(s, {started(e), model::input_promoted{b, e}}));
  auto after = this->run(this->store().context(s));
  ASSERT_TRUE(after);
  ASSERT_EQ(after->size(), 1U);
  EXPECT_EQ((*after)[0].role, message_role::user);
  EXPECT_EQ((*after)[0].id, b.str());
  EXPECT_EQ((*after)[0].text, "second");
  auto promoted = this->run(this->store().get_input(b));
  ASSERT_TRUE(promoted);
  EXPECT_EQ(promoted->status, input_status::promoted);
  EXPECT_EQ(promoted->execution, e);
  pending = this->run(this->store().pending_inputs(s));
  ASSERT_TRUE(pending);
  ASSERT_EQ(pending->size(), 1U);
  EXPECT_EQ((*pending)[0].id, a);
}

TYPED_TEST(inputs, promotion_requires_a_pending_input_of_the_session) {
  this->open();
  const auto s = this->new_session();
  const auto other = this->new_session();
  const auto id = input_id::generate();
  const auto e = execution_id::generate();
  ASSERT_TRUE(this->append(s, {admitted(id, "hi"), started(e)}));
  auto unknown = this->append(s, {model::input_promoted{input_id::generate(), e}});
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error(), store_errc::rejected);
  auto elsewhere = this->append(other, {model::input_promoted{id, e}});
  ASSERT_FALSE(elsewhere);
  EXPECT_EQ(elsewhere.error(), store_errc::rejected);
  ASSERT_TRUE(this->append(s, {model::input_promoted{id, e}}));
  auto twice = this->append(s, {model::input_promoted{id, e}});
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error(), store_errc::rejected);
  auto cancel_promoted = this->append(s, {model::input_cancelled{id, "too late"}});
  ASSERT_FALSE(cancel_promoted);
  EXPECT_EQ(cancel_promoted.error(), store_errc::rejected);
}

TYPED_TEST(inputs, a_cancelled_input_leaves_the_inbox_and_cannot_be_promoted) {
  this->open();
  const auto s = this->new_session();
  const auto id = input_id::generate();
  ASSERT_TRUE(this->append(s, {admitted(id, "hi")}));
  ASSERT_TRUE(this->append(s, {model::input_cancelled{id, "user"}}));
  auto pending = this->run(this->store().pending_inputs(s));
  ASSERT_TRUE(pending);
  EXPECT_TRUE(pending->empty());
  auto row = this->run(this->store().get_input(id));
  ASSERT_TRUE(row);
  EXPECT_EQ(row->status, input_status::cancelled);
  const auto e = execution_id::generate();
  auto r = this->append(s, {started(e), model::input_promoted{id, e}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::rejected);
}

TYPED_TEST(inputs, a_returned_input_is_pending_again_in_its_admission_place_and_leaves_the_transcript) {
  this->open();
  const auto s = this->new_session();
  const auto a = input_id::generate();
  const auto b = input_id::generate();
  const auto e = execution_id::generate();
  ASSERT_TRUE(this->append(s, {admitted(a, "first"), admitted(b, "second", model::delivery::queue)}));
  ASSERT_TRUE(this->append(s, {started(e), model::input_promoted{a, e}}));
  auto r = this->append(s, {model::input_returned{a, e, "storage_failed", 1}, finished(e, model::outcome::failed)});
  ASSERT_TRUE(r) << why(r);
  const auto* returned = r->events[0].template as<model::input_returned>();
  ASSERT_NE(returned, nullptr);
  EXPECT_EQ(returned->returns, 1);

  auto row = this->run(this->store().get_input(a));
  ASSERT_TRUE(row) << why(row);
  EXPECT_EQ(row->status, input_status::pending);
  EXPECT_EQ(row->admitted_seq.value, 2) << "its admission stays where it was";
  EXPECT_FALSE(row->execution);
  EXPECT_FALSE(row->promoted_seq);
  EXPECT_EQ(row->returns, 1);
  auto pending = this->run(this->store().pending_inputs(s));
  ASSERT_TRUE(pending);
  ASSERT_EQ(pending->size(), 2U);
  EXPECT_EQ((*pending)[0].id, a) << "admission order: before the input admitted after it";
  EXPECT_EQ((*pending)[1].id, b);
  auto transcript = this->run(this->store().transcript(s));
  ASSERT_TRUE(transcript);
  EXPECT_TRUE(transcript->empty()) << "its user message left with its promotion";

  // Promoted again: one user message, at the new promotion.
  const auto next = execution_id::generate();
  auto again = this->append(s, {started(next), model::input_promoted{a, next}});
  ASSERT_TRUE(again) << why(again);
  transcript = this->run(this->store().transcript(s));
  ASSERT_TRUE(transcript);
  ASSERT_EQ(transcript->size(), 1U);
  EXPECT_EQ((*transcript)[0].id, a.str());
  EXPECT_EQ((*transcript)[0].seq, again->events[1].seq);
  row = this->run(this->store().get_input(a));
  ASSERT_TRUE(row);
  EXPECT_EQ(row->status, input_status::promoted);
  EXPECT_EQ(row->execution, next);
  EXPECT_EQ(row->returns, 1) << "the count survives the next promotion";
}

TYPED_TEST(inputs, only_an_input_promoted_into_the_open_execution_it_names_can_be_returned_with_the_next_count) {
  this->open();
  const auto s = this->new_session();
  const auto other = this->new_session();
  const auto a = input_id::generate();
  const auto pending = input_id::generate();
  const auto e = execution_id::generate();
  ASSERT_TRUE(this->append(s, {admitted(a, "first"), admitted(pending, "second")}));
  ASSERT_TRUE(this->append(s, {started(e), model::input_promoted{a, e}}));
  const auto rejected = [&](const session_id& where, model::input_returned p) {
    auto r = this->append(where, {std::move(p)});
    return !r && r.error() == store_errc::rejected;
  };
  EXPECT_TRUE(rejected(s, {pending, e, "storage_failed", 1})) << "a pending input";
  EXPECT_TRUE(rejected(s, {input_id::generate(), e, "storage_failed", 1})) << "no such input";
  EXPECT_TRUE(rejected(other, {a, e, "storage_failed", 1})) << "another session's input";
  EXPECT_TRUE(rejected(s, {a, execution_id::generate(), "storage_failed", 1})) << "another execution";
  EXPECT_TRUE(rejected(s, {a, e, "storage_failed", 2})) << "not its next count";
  EXPECT_TRUE(rejected(s, {a, e, "storage_failed", 0})) << "not its next count";
  ASSERT_TRUE(this->append(s, {model::input_returned{a, e, "storage_failed", 1}}));
  EXPECT_TRUE(rejected(s, {a, e, "storage_failed", 2})) << "pending again: nothing to give back";
  ASSERT_TRUE(this->append(s, {model::input_promoted{a, e}}));
  ASSERT_TRUE(this->append(s, {model::input_returned{a, e, "storage_failed", 2}}));
  ASSERT_TRUE(this->append(s, {finished(e, model::outcome::failed)}));
  const auto closed = execution_id::generate();
  ASSERT_TRUE(this->append(s, {started(closed), model::input_promoted{a, closed}, finished(closed)}));
  EXPECT_TRUE(rejected(s, {a, closed, "storage_failed", 3})) << "its execution has finished";
  auto row = this->run(this->store().get_input(a));
  ASSERT_TRUE(row);
  EXPECT_EQ(row->returns, 2);
  EXPECT_EQ(row->status, input_status::promoted);
}

template <class F>
class executions : public store_test<F> {};
TYPED_TEST_SUITE(executions, backends, backend_names);

TYPED_TEST(executions, one_open_execution_per_session) {
  this->open();
  const auto s = this->new_session();
  const auto e = execution_id::generate();
  ASSERT_TRUE(this->append(s, {started(e)}));
  auto again = this->append(s, {started(execution_id::generate())});
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error(), store_errc::rejected);
  auto wrong = this->append(s, {finished(execution_id::generate())});
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error(), store_errc::rejected);

  model::usage u{10, 5, 2};
  ASSERT_TRUE(this->append(s, {model::execution_finished{e, model::outcome::failed, "boom", "it broke", u}}));
  auto sess = this->run(this->store().get_session(s));
  ASSERT_TRUE(sess);
  EXPECT_FALSE(sess->open_execution);
  auto row = this->run(this->store().get_execution(e));
  ASSERT_TRUE(row) << why(row);
  EXPECT_EQ(row->status, execution_status::finished);
  EXPECT_EQ(row->outcome, model::outcome::failed);
  EXPECT_EQ(row->reason, "boom");
  EXPECT_EQ(row->error, "it broke");
  EXPECT_EQ(row->usage, u);
  EXPECT_EQ(row->started_seq.value, 2);
  EXPECT_EQ(row->node, "node-a");
  auto twice = this->append(s, {finished(e)});
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error(), store_errc::rejected);
  ASSERT_TRUE(this->append(s, {started(execution_id::generate())})) << "a new execution may start";
  auto all = this->run(this->store().list_executions(s));
  ASSERT_TRUE(all);
  EXPECT_EQ(all->size(), 2U);
}

TYPED_TEST(executions, steps_track_the_open_step) {
  this->open();
  const auto s = this->new_session();
  const auto e = execution_id::generate();
  ASSERT_TRUE(this->append(s, {started(e), model::step_started{e, 1}}));
  auto row = this->run(this->store().get_execution(e));
  ASSERT_TRUE(row);
  EXPECT_EQ(row->open_step, 1);
  ASSERT_TRUE(this->append(s, {model::step_ended{"stop", {}}}));
  row = this->run(this->store().get_execution(e));
  ASSERT_TRUE(row);
  EXPECT_FALSE(row->open_step);
  auto foreign = this->append(s, {model::step_started{execution_id::generate(), 2}});
  ASSERT_FALSE(foreign);
  EXPECT_EQ(foreign.error(), store_errc::rejected);
}

TYPED_TEST(executions, recovered_must_name_the_open_execution) {
  this->open();
  const auto s = this->new_session();
  const auto e = execution_id::generate();
  auto none = this->append(s, {model::execution_recovered{e, "node-a/2", 1}});
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error(), store_errc::rejected);
  ASSERT_TRUE(this->append(s, {started(e)}));
  EXPECT_TRUE(this->append(s, {model::execution_recovered{e, "node-a/2", 1}}));
}

template <class F>
class tools : public store_test<F> {};
TYPED_TEST_SUITE(tools, backends, backend_names);

TYPED_TEST(tools, a_tool_result_needs_a_running_call_of_the_session) {
  this->open();
  const auto s = this->new_session();
  const auto e = execution_id::generate();
  const auto call = call_id::generate();
  auto unknown = this->append(s, {model::tool_succeeded{call_id::generate(), "out", ""}});
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error(), store_errc::rejected);
  ASSERT_TRUE(this->append(
      s, {started(e), model::tool_called{call, "bash", boost::json::object{{"cmd", "ls"}}, model::tool_kind::local}}));
  auto calls = this->run(this->store().unsettled_calls(s));
  ASSERT_TRUE(calls);
  ASSERT_EQ(calls->size(), 1U);
  EXPECT_EQ((*calls)[0].execution, e);
  EXPECT_EQ((*calls)[0].tool, "bash");
  EXPECT_EQ((*calls)[0].input, boost::json::value(boost::json::object{{"cmd", "ls"}}));
  ASSERT_TRUE(this->append(s, {model::tool_failed{call, "exit 1"}}));
  auto twice = this->append(s, {model::tool_succeeded{call, "late", ""}});
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error(), store_errc::rejected);
  calls = this->run(this->store().unsettled_calls(s));
  ASSERT_TRUE(calls);
  EXPECT_TRUE(calls->empty());

  auto ctx = this->run(this->store().context(s));
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

TYPED_TEST(tools, a_call_id_cannot_be_reused) {
  this->open();
  const auto s = this->new_session();
  const auto call = call_id::generate();
  ASSERT_TRUE(this->append(s, {model::tool_called{call, "read", nullptr, model::tool_kind::hosted}}));
  auto r = this->append(s, {model::tool_called{call, "read", nullptr, model::tool_kind::hosted}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::rejected);
}

template <class F>
class interactions : public store_test<F> {};
TYPED_TEST_SUITE(interactions, backends, backend_names);

TYPED_TEST(interactions, resolving_twice_is_interaction_not_pending) {
  this->open();
  const auto s = this->new_session();
  const auto id = interaction_id::generate();
  const auto call = call_id::generate();
  ASSERT_TRUE(this->append(s, {model::interaction_requested{id, call, "question", boost::json::object{{"q", "?"}}}}));
  auto pending = this->run(this->store().pending_interactions(s));
  ASSERT_TRUE(pending);
  ASSERT_EQ(pending->size(), 1U);
  EXPECT_EQ((*pending)[0].call, call);
  ASSERT_TRUE(this->append(s, {model::interaction_resolved{id, "answered", "yes"}}));
  auto row = this->run(this->store().get_interaction(id));
  ASSERT_TRUE(row);
  EXPECT_EQ(row->status, interaction_status::answered);
  ASSERT_TRUE(row->result.is_string());
  EXPECT_EQ(row->result.get_string(), "yes");
  auto sess = this->run(this->store().get_session(s));
  ASSERT_TRUE(sess);
  EXPECT_TRUE(sess->continuation_pending);

  auto twice = this->append(s, {model::interaction_resolved{id, "answered", "again"}});
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error(), store_errc::interaction_not_pending);
  auto unknown = this->append(s, {model::interaction_resolved{interaction_id::generate(), "answered", "x"}});
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error(), store_errc::not_found);

  ASSERT_TRUE(this->append(s, {started(execution_id::generate())}));
  sess = this->run(this->store().get_session(s));
  ASSERT_TRUE(sess);
  EXPECT_FALSE(sess->continuation_pending) << "execution.started consumes the continuation";
}

TYPED_TEST(interactions, a_resolution_needs_a_known_status) {
  this->open();
  const auto s = this->new_session();
  const auto id = interaction_id::generate();
  ASSERT_TRUE(this->append(s, {model::interaction_requested{id, {}, "question", nullptr}}));
  auto r = this->append(s, {model::interaction_resolved{id, "maybe", nullptr}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::rejected);
}

template <class F>
class transcript : public store_test<F> {};
TYPED_TEST_SUITE(transcript, backends, backend_names);

TYPED_TEST(transcript, reset_starts_a_new_generation_and_context_shows_only_it) {
  this->open();
  const auto s = this->new_session();
  const auto e = execution_id::generate();
  const auto in = input_id::generate();
  ASSERT_TRUE(this->append(s, {admitted(in, "before"), started(e), model::input_promoted{in, e},
                               model::text_ended{message_id::generate(), "old answer"}, finished(e),
                               model::runtime_bound{"codex", "thread-1", 0}}));
  auto reset = this->append(s, {model::session_reset{}});
  ASSERT_TRUE(reset) << why(reset);
  ASSERT_EQ(reset->events.size(), 1U);
  ASSERT_NE(reset->events[0].template as<model::session_reset>(), nullptr);
  EXPECT_EQ(reset->events[0].template as<model::session_reset>()->generation, 1) << "the append returns the stored payload";
  const auto stored = this->all_events(s);
  EXPECT_EQ(stored.back().template as<model::session_reset>()->generation, 1) << "the generation is in the stored row";

  auto sess = this->run(this->store().get_session(s));
  ASSERT_TRUE(sess);
  EXPECT_EQ(sess->generation, 1);
  EXPECT_EQ(sess->runtime, "native") << "the runtime that ran it stays";
  EXPECT_FALSE(sess->binding) << "the binding is dropped";
  auto ctx = this->run(this->store().context(s));
  ASSERT_TRUE(ctx);
  EXPECT_TRUE(ctx->empty());

  ASSERT_TRUE(this->append(s, {notice("after reset"), model::text_ended{message_id::generate(), "new answer"}}));
  ctx = this->run(this->store().context(s));
  ASSERT_TRUE(ctx);
  ASSERT_EQ(ctx->size(), 2U);
  EXPECT_EQ((*ctx)[0].role, message_role::notice);
  EXPECT_EQ((*ctx)[0].text, "after reset");
  EXPECT_EQ((*ctx)[1].role, message_role::assistant);
  EXPECT_EQ((*ctx)[1].text, "new answer");
  EXPECT_EQ((*ctx)[1].generation, 1);

  auto again = this->append(s, {model::session_reset{}});
  ASSERT_TRUE(again);
  EXPECT_EQ(again->events[0].template as<model::session_reset>()->generation, 2);
}

TYPED_TEST(transcript, compaction_puts_its_summary_first_and_keeps_the_messages_from_its_seq) {
  this->open();
  const auto s = this->new_session();
  ASSERT_TRUE(this->append(s, {notice("old 1"), notice("old 2")}));
  auto kept = this->append(s, {notice("kept 1"), notice("kept 2")});
  ASSERT_TRUE(kept);
  const auto from = kept->events[0].seq.value;
  ASSERT_TRUE(this->append(s, {model::compaction_ended{"the summary", from}}));
  auto ctx = this->run(this->store().context(s));
  ASSERT_TRUE(ctx) << ctx.error().describe();
  ASSERT_EQ(ctx->size(), 3U);
  EXPECT_EQ((*ctx)[0].role, message_role::summary);
  EXPECT_EQ((*ctx)[0].text, "the summary");
  EXPECT_EQ((*ctx)[1].text, "kept 1");
  EXPECT_EQ((*ctx)[2].text, "kept 2");

  ASSERT_TRUE(this->append(s, {model::session_reset{}}));
  ctx = this->run(this->store().context(s));
  ASSERT_TRUE(ctx);
  EXPECT_TRUE(ctx->empty()) << "a reset drops the summary too";
}

TYPED_TEST(transcript, a_compaction_must_keep_from_a_seq_of_the_session) {
  this->open();
  const auto s = this->new_session();
  auto r = this->append(s, {model::compaction_ended{"summary", 99}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::rejected);
  r = this->append(s, {model::compaction_ended{"summary", 0}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::rejected);
}

TYPED_TEST(transcript, runtime_bound_and_session_updated_change_the_session_row) {
  this->open();
  const auto s = this->new_session("old");
  ASSERT_TRUE(this->append(
      s, {model::runtime_bound{"claude", "abc", 0, 7, R"({"k":1})"}, model::session_updated{"new title"}}));
  auto sess = this->run(this->store().get_session(s));
  ASSERT_TRUE(sess);
  ASSERT_TRUE(sess->binding);
  EXPECT_EQ(sess->binding->runtime, "claude");
  EXPECT_EQ(sess->binding->external_session_id, "abc");
  EXPECT_EQ(sess->binding->generation, 0);
  EXPECT_EQ(sess->binding->last_seen_seq.value, 7);
  EXPECT_EQ(sess->binding->state, R"({"k":1})");
  EXPECT_EQ(sess->runtime, "") << "no execution ran yet";
  EXPECT_EQ(sess->title, "new title");
  EXPECT_EQ(sess->workspace, "/srv/project");
  EXPECT_EQ(sess->profile, "default");
}

TYPED_TEST(transcript, an_execution_keeps_the_state_of_the_last_binding_recorded_while_it_ran) {
  this->open();
  const auto s = this->new_session();
  const auto first = execution_id::generate();
  const auto second = execution_id::generate();
  ASSERT_TRUE(this->append(s, {started(first), model::runtime_bound{"acp", "a", 0, 1, R"({"pid":10})"},
                               model::runtime_bound{"acp", "a", 0, 2, R"({"pid":11})"}, finished(first)}));
  ASSERT_TRUE(this->append(s, {model::runtime_bound{"acp", "a", 0, 3, R"({"pid":99})"}}))
      << "a binding outside any execution";
  ASSERT_TRUE(this->append(s, {started(second), model::runtime_bound{"acp", "a", 0, 4, ""}, finished(second)}));
  auto all = this->run(this->store().list_executions(s));
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 2U);
  const auto& one = (*all)[0].id == first ? (*all)[0] : (*all)[1];
  const auto& two = (*all)[0].id == first ? (*all)[1] : (*all)[0];
  EXPECT_EQ(one.agent_state, R"({"pid":11})") << "the last one while it ran; later ones do not reach it";
  EXPECT_EQ(two.agent_state, "") << "a binding without state leaves none";
  auto sess = this->run(this->store().get_session(s));
  ASSERT_TRUE(sess);
  ASSERT_TRUE(sess->binding);
  EXPECT_EQ(sess->binding->state, "") << "the session's binding is the latest";
}

TYPED_TEST(transcript, an_assistant_message_id_must_be_new) {
  this->open();
  const auto s = this->new_session();
  const auto id = message_id::generate();
  ASSERT_TRUE(this->append(s, {model::text_ended{id, "one"}}));
  auto dup = this->append(s, {model::text_ended{id, "two"}});
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error(), store_errc::rejected);
  const auto pending = input_id::generate();
  ASSERT_TRUE(this->append(s, {admitted(pending, "waiting")}));
  auto input = this->append(s, {model::text_ended{pending, "steals an input id"}});
  ASSERT_FALSE(input);
  EXPECT_EQ(input.error(), store_errc::rejected);
}

TYPED_TEST(transcript, store_only_events_are_stored_without_messages) {
  this->open();
  const auto s = this->new_session();
  ASSERT_TRUE(this->append(s, {model::reasoning_ended{"thinking"}, model::step_retry_scheduled{1, 5, "429"}}));
  EXPECT_EQ(this->all_events(s).size(), 3U);
  auto ctx = this->run(this->store().context(s));
  ASSERT_TRUE(ctx);
  EXPECT_TRUE(ctx->empty());
}

TYPED_TEST(transcript, list_sessions_shows_the_most_recently_updated_first) {
  this->open();
  const auto a = this->new_session("a");
  this->clock_.advance(10);
  const auto b = this->new_session("b");
  this->clock_.advance(10);
  ASSERT_TRUE(this->append(a, {notice("touch")}));
  auto list = this->run(this->store().list_sessions(10));
  ASSERT_TRUE(list);
  ASSERT_EQ(list->size(), 2U);
  EXPECT_EQ((*list)[0].id, a);
  EXPECT_EQ((*list)[1].id, b);
  EXPECT_EQ((*list)[0].updated_at, this->clock_.now());
}

}  // namespace
}  // namespace tether::store::test
