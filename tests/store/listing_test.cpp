#include "store/event_store.h"

#include "store_fixture.h"

namespace tether::store::test {
namespace {

using listings = store_test;

std::vector<std::string> ids(const std::vector<input_row>& rows) {
  std::vector<std::string> out;
  for (const auto& r : rows) out.push_back(r.id.str());
  return out;
}

TEST_F(listings, list_inputs_returns_every_input_of_the_session_in_admission_order_whatever_its_status) {
  open();
  const auto s = new_session();
  const auto other = new_session();
  const auto a = input_id::generate();
  const auto b = input_id::generate();
  const auto c = input_id::generate();
  const auto e = execution_id::generate();
  ASSERT_TRUE(append(s, {admitted(a, "first")}));
  ASSERT_TRUE(append(other, {admitted(input_id::generate(), "elsewhere")}));
  ASSERT_TRUE(append(s, {admitted(b, "second", model::delivery::queue), admitted(c, "third")}));
  ASSERT_TRUE(append(s, {model::input_cancelled{a, "user"}, started(e), model::input_promoted{c, e}}));

  auto all = run(store().list_inputs(s));
  ASSERT_TRUE(all) << why(all);
  EXPECT_EQ(ids(*all), (std::vector<std::string>{a.str(), b.str(), c.str()}));
  EXPECT_EQ((*all)[0].status, input_status::cancelled);
  EXPECT_EQ((*all)[1].status, input_status::pending);
  EXPECT_EQ((*all)[1].delivery, model::delivery::queue);
  EXPECT_EQ((*all)[2].status, input_status::promoted);
  EXPECT_EQ((*all)[2].execution, e);
  EXPECT_EQ((*all)[2].prompt, "third");

  auto none = run(store().list_inputs(new_session()));
  ASSERT_TRUE(none) << why(none);
  EXPECT_TRUE(none->empty());
}

TEST_F(listings, promoted_seq_is_the_seq_of_the_promotion_and_every_input_read_returns_it) {
  open();
  const auto s = new_session();
  const auto a = input_id::generate();
  const auto b = input_id::generate();
  const auto e = execution_id::generate();
  ASSERT_TRUE(append(s, {admitted(a, "promote me"), admitted(b, "leave me")}));
  auto promoted = append(s, {started(e), notice("between"), model::input_promoted{a, e}});
  ASSERT_TRUE(promoted) << why(promoted);
  const auto promotion_seq = promoted->events[2].seq;

  auto row = run(store().get_input(a));
  ASSERT_TRUE(row) << why(row);
  ASSERT_TRUE(row->promoted_seq.has_value());
  EXPECT_EQ(*row->promoted_seq, promotion_seq);
  auto listed = run(store().list_inputs(s));
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->size(), 2U);
  EXPECT_EQ((*listed)[0].promoted_seq, promotion_seq);
  EXPECT_FALSE((*listed)[1].promoted_seq.has_value()) << "a pending input has none";
  auto pending = run(store().pending_inputs(s));
  ASSERT_TRUE(pending);
  ASSERT_EQ(pending->size(), 1U);
  EXPECT_FALSE((*pending)[0].promoted_seq.has_value());

  ASSERT_TRUE(append(s, {model::input_cancelled{b, "user"}}));
  auto cancelled = run(store().get_input(b));
  ASSERT_TRUE(cancelled);
  EXPECT_FALSE(cancelled->promoted_seq.has_value()) << "a cancelled input has none";
}

TEST_F(listings, a_snapshot_is_the_session_with_its_pending_inputs_and_pending_interactions) {
  open();
  const auto s = new_session();
  const auto other = new_session();
  const auto a = input_id::generate();
  const auto b = input_id::generate();
  const auto asked = interaction_id::generate();
  const auto answered = interaction_id::generate();
  ASSERT_TRUE(append(s, {admitted(a, "first"), admitted(b, "second", model::delivery::queue)}));
  ASSERT_TRUE(append(s, {model::input_cancelled{a, "user"}}));
  ASSERT_TRUE(append(other, {admitted(input_id::generate(), "elsewhere")}));
  ASSERT_TRUE(append(s, {model::interaction_requested{answered, {}, "question", nullptr},
                         model::interaction_requested{asked, {}, "question", nullptr}}));
  ASSERT_TRUE(append(s, {model::interaction_resolved{answered, "answered", "yes"}}));

  auto snap = run(store().snapshot(s));
  ASSERT_TRUE(snap) << why(snap);
  EXPECT_EQ(snap->session.id, s);
  EXPECT_EQ(snap->session.last_seq.value, last_seq(s));
  EXPECT_EQ(ids(snap->pending_inputs), (std::vector<std::string>{b.str()}));
  ASSERT_EQ(snap->pending_interactions.size(), 1U);
  EXPECT_EQ(snap->pending_interactions[0].id, asked);

  auto unknown = run(store().snapshot(session_id::generate()));
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error(), store_errc::unknown_session);
}

TEST_F(listings, list_inputs_of_an_unknown_session_is_unknown_session) {
  open();
  auto r = run(store().list_inputs(session_id::generate()));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::unknown_session);
}

TEST_F(listings, executions_record_the_times_of_their_start_and_finish_events) {
  open();
  const auto s = new_session();
  const auto e = execution_id::generate();
  const auto f = execution_id::generate();
  ASSERT_TRUE(append(s, {started(e)}, std::nullopt, 5'000));
  auto running = run(store().get_execution(e));
  ASSERT_TRUE(running) << why(running);
  EXPECT_EQ(running->started_at, 5'000);
  EXPECT_FALSE(running->finished_at.has_value());
  ASSERT_TRUE(append(s, {finished(e)}, std::nullopt, 7'500));
  clock_.advance(60'000);
  ASSERT_TRUE(append(s, {started(f)}));  // time 0: the store's clock

  auto list = run(store().list_executions(s));
  ASSERT_TRUE(list) << why(list);
  ASSERT_EQ(list->size(), 2U);
  EXPECT_EQ((*list)[0].started_at, 5'000);
  ASSERT_TRUE((*list)[0].finished_at.has_value());
  EXPECT_EQ(*(*list)[0].finished_at, 7'500);
  EXPECT_EQ((*list)[1].started_at, clock_.now());
  EXPECT_FALSE((*list)[1].finished_at.has_value());
}

TEST_F(listings, transcript_keeps_every_generation_without_a_summary_while_context_is_cut) {
  open();
  const auto s = new_session();
  const auto e = execution_id::generate();
  const auto in = input_id::generate();
  const auto call = call_id::generate();
  ASSERT_TRUE(append(s, {admitted(in, "question"), started(e), model::input_promoted{in, e},
                         model::tool_called{call, "web_search", boost::json::object{{"q", "x"}}, true},
                         model::tool_succeeded{call, "found", ""},
                         model::text_ended{message_id::generate(), "first answer"}, finished(e)}));
  ASSERT_TRUE(append(s, {model::session_reset{}}));
  auto kept = append(s, {notice("old in gen 1"), notice("kept in gen 1")});
  ASSERT_TRUE(kept);
  ASSERT_TRUE(append(s, {model::compaction_ended{"the summary", kept->events[1].seq.value}}));
  ASSERT_TRUE(append(s, {model::text_ended{message_id::generate(), "last answer"}}));

  auto ctx = run(store().context(s));
  ASSERT_TRUE(ctx);
  ASSERT_EQ(ctx->size(), 3U) << "the context is the summary, the kept notice and the last answer";

  auto all = run(store().transcript(s));
  ASSERT_TRUE(all) << why(all);
  std::vector<std::string> texts;
  std::vector<std::int64_t> generations;
  for (const auto& m : *all) {
    texts.push_back(m.text);
    generations.push_back(m.generation);
    EXPECT_NE(m.role, message_role::summary);
  }
  EXPECT_EQ(texts, (std::vector<std::string>{"question", "", "found", "first answer", "old in gen 1", "kept in gen 1",
                                             "last answer"}));
  EXPECT_EQ(generations, (std::vector<std::int64_t>{0, 0, 0, 0, 1, 1, 1}));
  for (std::size_t i = 1; i < all->size(); ++i) EXPECT_LT((*all)[i - 1].seq, (*all)[i].seq) << "seq order";
  EXPECT_EQ((*all)[0].role, message_role::user);
  EXPECT_EQ((*all)[1].role, message_role::tool_call);
  EXPECT_EQ((*all)[1].tool, "web_search");
  EXPECT_TRUE((*all)[1].hosted);
  EXPECT_EQ((*all)[2].role, message_role::tool_result);
  EXPECT_TRUE((*all)[2].hosted);
  EXPECT_EQ((*all)[3].role, message_role::assistant);
}

TEST_F(listings, transcript_of_an_unknown_session_is_unknown_session) {
  open();
  auto r = run(store().transcript(session_id::generate()));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::unknown_session);
  auto empty = run(store().transcript(new_session()));
  ASSERT_TRUE(empty) << why(empty);
  EXPECT_TRUE(empty->empty());
}

TEST_F(listings, list_interactions_returns_every_interaction_of_the_session_in_request_order) {
  open();
  const auto s = new_session();
  const auto other = new_session();
  const auto a = interaction_id::generate();
  const auto b = interaction_id::generate();
  const auto c = interaction_id::generate();
  ASSERT_TRUE(append(s, {model::interaction_requested{a, {}, "question", boost::json::object{{"n", 1}}}}));
  ASSERT_TRUE(append(other, {model::interaction_requested{interaction_id::generate(), {}, "question", nullptr}}));
  ASSERT_TRUE(append(s, {model::interaction_requested{b, {}, "plan_confirmation", nullptr},
                         model::interaction_requested{c, {}, "question", nullptr}}));
  ASSERT_TRUE(append(s, {model::interaction_resolved{a, "answered", "yes"}}));
  ASSERT_TRUE(append(s, {model::interaction_resolved{b, "cancelled", nullptr}}));

  auto all = run(store().list_interactions(s));
  ASSERT_TRUE(all) << why(all);
  ASSERT_EQ(all->size(), 3U);
  EXPECT_EQ((*all)[0].id, a);
  EXPECT_EQ((*all)[0].status, interaction_status::answered);
  ASSERT_TRUE((*all)[0].result.is_string());
  EXPECT_EQ((*all)[0].result.get_string(), "yes");
  EXPECT_EQ((*all)[0].payload, (boost::json::value(boost::json::object{{"n", 1}})));
  EXPECT_EQ((*all)[1].id, b);
  EXPECT_EQ((*all)[1].status, interaction_status::cancelled);
  EXPECT_EQ((*all)[1].kind, "plan_confirmation");
  EXPECT_EQ((*all)[2].id, c);
  EXPECT_EQ((*all)[2].status, interaction_status::pending);

  auto unknown = run(store().list_interactions(session_id::generate()));
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error(), store_errc::unknown_session);
}

}  // namespace
}  // namespace tether::store::test
