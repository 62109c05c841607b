#include "store/event_store.h"

#include <algorithm>

#include "backends.h"

namespace tether::store::test {
namespace {

template <class F>
class listings : public store_test<F> {};
TYPED_TEST_SUITE(listings, backends, backend_names);

std::vector<std::string> ids(const std::vector<input_row>& rows) {
  std::vector<std::string> out;
  for (const auto& r : rows) out.push_back(r.id.str());
  return out;
}

TYPED_TEST(listings, list_inputs_returns_every_input_of_the_session_in_admission_order_whatever_its_status) {
  this->open();
  const auto s = this->new_session();
  const auto other = this->new_session();
  const auto a = input_id::generate();
  const auto b = input_id::generate();
  const auto c = input_id::generate();
  const auto e = execution_id::generate();
  ASSERT_TRUE(this->append(s, {admitted(a, "first")}));
  ASSERT_TRUE(this->append(other, {admitted(input_id::generate(), "elsewhere")}));
  ASSERT_TRUE(this->append(s, {admitted(b, "second", model::delivery::queue), admitted(c, "third")}));
  ASSERT_TRUE(this->append(s, {model::input_cancelled{a, "user"}, started(e), model::input_promoted{c, e}}));

  auto all = this->run(this->store().list_inputs(s));
  ASSERT_TRUE(all) << why(all);
  EXPECT_EQ(ids(*all), (std::vector<std::string>{a.str(), b.str(), c.str()}));
  EXPECT_EQ((*all)[0].status, input_status::cancelled);
  EXPECT_EQ((*all)[1].status, input_status::pending);
  EXPECT_EQ((*all)[1].delivery, model::delivery::queue);
  EXPECT_EQ((*all)[2].status, input_status::promoted);
  EXPECT_EQ((*all)[2].execution, e);
  EXPECT_EQ((*all)[2].prompt, "third");

  auto none = this->run(this->store().list_inputs(this->new_session()));
  ASSERT_TRUE(none) << why(none);
  EXPECT_TRUE(none->empty());
}

TYPED_TEST(listings, promoted_seq_is_the_seq_of_the_promotion_and_every_input_read_returns_it) {
  this->open();
  const auto s = this->new_session();
  const auto a = input_id::generate();
  const auto b = input_id::generate();
  const auto e = execution_id::generate();
  ASSERT_TRUE(this->append(s, {admitted(a, "promote me"), admitted(b, "leave me")}));
  auto promoted = this->append(s, {started(e), notice("between"), model::input_promoted{a, e}});
  ASSERT_TRUE(promoted) << why(promoted);
  const auto promotion_seq = promoted->events[2].seq;

  auto row = this->run(this->store().get_input(a));
  ASSERT_TRUE(row) << why(row);
  ASSERT_TRUE(row->promoted_seq.has_value());
  EXPECT_EQ(*row->promoted_seq, promotion_seq);
  auto listed = this->run(this->store().list_inputs(s));
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->size(), 2U);
  EXPECT_EQ((*listed)[0].promoted_seq, promotion_seq);
  EXPECT_FALSE((*listed)[1].promoted_seq.has_value()) << "a pending input has none";
  auto pending = this->run(this->store().pending_inputs(s));
  ASSERT_TRUE(pending);
  ASSERT_EQ(pending->size(), 1U);
  EXPECT_FALSE((*pending)[0].promoted_seq.has_value());

  ASSERT_TRUE(this->append(s, {model::input_cancelled{b, "user"}}));
  auto cancelled = this->run(this->store().get_input(b));
  ASSERT_TRUE(cancelled);
  EXPECT_FALSE(cancelled->promoted_seq.has_value()) << "a cancelled input has none";
}

TYPED_TEST(listings, a_snapshot_is_the_session_with_its_pending_inputs_and_pending_interactions) {
  this->open();
  const auto s = this->new_session();
  const auto other = this->new_session();
  const auto a = input_id::generate();
  const auto b = input_id::generate();
  const auto asked = interaction_id::generate();
  const auto answered = interaction_id::generate();
  ASSERT_TRUE(this->append(s, {admitted(a, "first"), admitted(b, "second", model::delivery::queue)}));
  ASSERT_TRUE(this->append(s, {model::input_cancelled{a, "user"}}));
  ASSERT_TRUE(this->append(other, {admitted(input_id::generate(), "elsewhere")}));
  ASSERT_TRUE(this->append(s, {model::interaction_requested{answered, {}, "question", nullptr},
                               model::interaction_requested{asked, {}, "question", nullptr}}));
  ASSERT_TRUE(this->append(s, {model::interaction_resolved{answered, "answered", "yes"}}));

  auto snap = this->run(this->store().snapshot(s));
  ASSERT_TRUE(snap) << why(snap);
  EXPECT_EQ(snap->session.id, s);
  EXPECT_EQ(snap->session.last_seq.value, this->last_seq(s));
  EXPECT_EQ(ids(snap->pending_inputs), (std::vector<std::string>{b.str()}));
  ASSERT_EQ(snap->pending_interactions.size(), 1U);
  EXPECT_EQ(snap->pending_interactions[0].id, asked);

  auto unknown = this->run(this->store().snapshot(session_id::generate()));
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error(), store_errc::unknown_session);
}

TYPED_TEST(listings, list_inputs_of_an_unknown_session_is_unknown_session) {
  this->open();
  auto r = this->run(this->store().list_inputs(session_id::generate()));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::unknown_session);
}

TYPED_TEST(listings, executions_record_the_times_of_their_start_and_finish_events) {
  this->open();
  const auto s = this->new_session();
  const auto e = execution_id::generate();
  const auto f = execution_id::generate();
  ASSERT_TRUE(this->append(s, {started(e)}, std::nullopt, 5'000));
  auto running = this->run(this->store().get_execution(e));
  ASSERT_TRUE(running) << why(running);
  EXPECT_EQ(running->started_at, 5'000);
  EXPECT_FALSE(running->finished_at.has_value());
  ASSERT_TRUE(this->append(s, {finished(e)}, std::nullopt, 7'500));
  this->clock_.advance(60'000);
  ASSERT_TRUE(this->append(s, {started(f)}));  // time 0: the store's clock

  auto list = this->run(this->store().list_executions(s));
  ASSERT_TRUE(list) << why(list);
  ASSERT_EQ(list->size(), 2U);
  EXPECT_EQ((*list)[0].started_at, 5'000);
  ASSERT_TRUE((*list)[0].finished_at.has_value());
  EXPECT_EQ(*(*list)[0].finished_at, 7'500);
  EXPECT_EQ((*list)[1].started_at, this->clock_.now());
  EXPECT_FALSE((*list)[1].finished_at.has_value());
}

TYPED_TEST(listings, transcript_keeps_every_generation_without_a_summary_while_context_is_cut) {
  this->open();
  const auto s = this->new_session();
  const auto e = execution_id::generate();
  const auto in = input_id::generate();
  const auto call = call_id::generate();
  ASSERT_TRUE(this->append(
      s, {admitted(in, "question"), started(e), model::input_promoted{in, e},
          model::tool_called{call, "web_search", boost::json::object{{"q", "x"}}, model::tool_kind::hosted},
          model::tool_succeeded{call, "found", ""}, model::text_ended{message_id::generate(), "first answer"},
          finished(e)}));
  ASSERT_TRUE(this->append(s, {model::session_reset{}}));
  auto kept = this->append(s, {notice("old in gen 1"), notice("kept in gen 1")});
  ASSERT_TRUE(kept);
  ASSERT_TRUE(this->append(s, {model::compaction_ended{"the summary", kept->events[1].seq.value}}));
  ASSERT_TRUE(this->append(s, {model::text_ended{message_id::generate(), "last answer"}}));

  auto ctx = this->run(this->store().context(s));
  ASSERT_TRUE(ctx);
  ASSERT_EQ(ctx->size(), 3U) << "the context is the summary, the kept notice and the last answer";

  auto all = this->run(this->store().transcript(s));
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
  EXPECT_EQ((*all)[1].call_kind, model::tool_kind::hosted);
  EXPECT_EQ((*all)[2].role, message_role::tool_result);
  EXPECT_EQ((*all)[2].call_kind, model::tool_kind::hosted);
  EXPECT_EQ((*all)[3].role, message_role::assistant);
}

TYPED_TEST(listings, transcript_of_an_unknown_session_is_unknown_session) {
  this->open();
  auto r = this->run(this->store().transcript(session_id::generate()));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::unknown_session);
  auto empty = this->run(this->store().transcript(this->new_session()));
  ASSERT_TRUE(empty) << why(empty);
  EXPECT_TRUE(empty->empty());
}

TYPED_TEST(listings, list_interactions_returns_every_interaction_of_the_session_in_request_order) {
  this->open();
  const auto s = this->new_session();
  const auto other = this->new_session();
  const auto a = interaction_id::generate();
  const auto b = interaction_id::generate();
  const auto c = interaction_id::generate();
  ASSERT_TRUE(this->append(s, {model::interaction_requested{a, {}, "question", boost::json::object{{"n", 1}}}}));
  ASSERT_TRUE(this->append(other, {model::interaction_requested{interaction_id::generate(), {}, "question", nullptr}}));
  ASSERT_TRUE(this->append(s, {model::interaction_requested{b, {}, "plan_confirmation", nullptr},
                               model::interaction_requested{c, {}, "question", nullptr}}));
  ASSERT_TRUE(this->append(s, {model::interaction_resolved{a, "answered", "yes"}}));
  ASSERT_TRUE(this->append(s, {model::interaction_resolved{b, "cancelled", nullptr}}));

  auto all = this->run(this->store().list_interactions(s));
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

  auto unknown = this->run(this->store().list_interactions(session_id::generate()));
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error(), store_errc::unknown_session);
}

TYPED_TEST(listings, an_overview_listing_is_the_session_listing_with_each_sessions_pending_counts) {
  this->open();
  const auto busy = this->new_session("busy");
  const auto quiet = this->new_session("quiet");
  const auto asking = this->new_session("asking");
  const auto a = input_id::generate();
  ASSERT_TRUE(this->append(busy, {admitted(a, "first"), admitted(input_id::generate(), "second"),
                                  admitted(input_id::generate(), "third", model::delivery::queue)}));
  ASSERT_TRUE(this->append(busy, {model::input_cancelled{a, "user"}}));
  const auto answered = interaction_id::generate();
  ASSERT_TRUE(
      this->append(asking, {model::interaction_requested{answered, {}, "question", nullptr},
                            model::interaction_requested{interaction_id::generate(), {}, "question", nullptr}}));
  ASSERT_TRUE(this->append(asking, {model::interaction_resolved{answered, "answered", "yes"}}));
  ASSERT_TRUE(this->append(asking, {admitted(input_id::generate(), "while asked")}));

  auto sessions = this->run(this->store().list_sessions(10));
  auto overviews = this->run(this->store().list_overviews(10));
  ASSERT_TRUE(sessions) << why(sessions);
  ASSERT_TRUE(overviews) << why(overviews);
  ASSERT_EQ(overviews->size(), 3U);
  ASSERT_EQ(overviews->size(), sessions->size());
  for (std::size_t i = 0; i < overviews->size(); ++i) {
    const auto& o = (*overviews)[i];
    EXPECT_EQ(o.session.id, (*sessions)[i].id) << "the same sessions in the same order";
    EXPECT_EQ(o.session.last_seq, (*sessions)[i].last_seq);
    EXPECT_EQ(o.session.title, (*sessions)[i].title);
    auto snap = this->run(this->store().snapshot(o.session.id));
    ASSERT_TRUE(snap) << why(snap);
    EXPECT_EQ(o.pending_inputs, snap->pending_inputs.size()) << o.session.title;
    EXPECT_EQ(o.pending_interactions, snap->pending_interactions.size()) << o.session.title;
  }
  const auto find = [&](const session_id& s) {
    return *std::find_if(overviews->begin(), overviews->end(), [&](const auto& o) { return o.session.id == s; });
  };
  EXPECT_EQ(find(busy).pending_inputs, 2U);
  EXPECT_EQ(find(busy).pending_interactions, 0U);
  EXPECT_EQ(find(quiet).pending_inputs, 0U);
  EXPECT_EQ(find(asking).pending_inputs, 1U);
  EXPECT_EQ(find(asking).pending_interactions, 1U);

  auto first = this->run(this->store().list_overviews(1));
  ASSERT_TRUE(first);
  ASSERT_EQ(first->size(), 1U) << "the limit holds";
  EXPECT_EQ((*first)[0].session.id, (*sessions)[0].id);
}

// A session's usage is the sum over its executions, the same in the
// listing and in its snapshot: tokens added, the priced costs added, and
// "partial" when some run with usage had no price ("unpriced" when none had).
TYPED_TEST(listings, a_sessions_usage_sums_its_executions_alike_in_the_listing_and_the_snapshot) {
  this->open();
  const auto mixed = this->new_session("mixed");
  const auto priced = this->new_session("priced");
  const auto unpriced = this->new_session("unpriced");
  const auto idle = this->new_session("idle");
  const auto run = [&](const session_id& s, model::usage u) {
    const auto e = execution_id::generate();
    ASSERT_TRUE(this->append(s, {started(e)}));
    ASSERT_TRUE(this->append(s, {model::execution_finished{e, model::outcome::succeeded, "", "", std::move(u)}}));
  };
  run(mixed, {100, 20, 5, 0.01, "reported"});
  run(mixed, {50, 10, 0, std::nullopt, "unpriced"});
  run(priced, {7, 3, 1, 0.002, "estimated"});
  run(priced, {3, 2, 0, 0.001, "estimated"});
  run(unpriced, {9, 1, 0, std::nullopt, "unpriced"});
  auto overviews = this->run(this->store().list_overviews(10));
  ASSERT_TRUE(overviews) << why(overviews);
  const auto usage_of = [&](const session_id& s) {
    return std::find_if(overviews->begin(), overviews->end(), [&](const auto& o) { return o.session.id == s; })->usage;
  };
  const model::usage mixed_sum{150, 30, 5, 0.01, "partial"};
  const model::usage unpriced_sum{9, 1, 0, std::nullopt, "unpriced"};
  EXPECT_EQ(usage_of(mixed), mixed_sum);
  EXPECT_EQ(usage_of(unpriced), unpriced_sum);
  const auto p = usage_of(priced);
  EXPECT_EQ(p.input_tokens, 10);
  EXPECT_EQ(p.output_tokens, 5);
  EXPECT_EQ(p.cached_input_tokens, 1);
  ASSERT_TRUE(p.cost_usd);
  EXPECT_NEAR(*p.cost_usd, 0.003, 1e-12);
  EXPECT_EQ(usage_of(idle), model::usage{});
  for (const auto& s : {mixed, priced, unpriced, idle}) {
    auto snap = this->run(this->store().snapshot(s));
    ASSERT_TRUE(snap) << why(snap);
    EXPECT_EQ(snap->usage, usage_of(s));
  }
}

}  // namespace
}  // namespace tether::store::test
