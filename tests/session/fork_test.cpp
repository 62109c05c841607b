// session/fork.h: which turn boundary a fork is made at, and the log it
// gets — the source's events copied with new ids, mapped seqs, no usage,
// and nothing that would make the fork run or spend on its own.
#include "session/fork.h"

#include <gtest/gtest.h>

#include "util/errors.h"

namespace tether::session {
namespace {

struct log_builder {
  session_id s = session_id::generate();
  std::vector<model::event> events;
  void add(model::payload p) {
    model::event e;
    e.session = s;
    e.seq = event_seq{static_cast<std::int64_t>(events.size()) + 1};
    e.body = std::move(p);
    events.push_back(std::move(e));
  }
  // A whole turn: admitted, promoted, started, a tool call, the answer, finished.
  execution_id turn(const std::string& prompt, const std::string& answer) {
    const auto in = input_id::generate();
    const auto x = execution_id::generate();
    const auto call = call_id::generate();
    add(model::input_admitted{in, prompt});
    add(model::input_promoted{in, x});
    add(model::execution_started{x, "node-a", "native", "scripted"});
    add(model::tool_called{call, "bash", boost::json::object{}, model::tool_kind::local});
    add(model::tool_succeeded{call, "ok", ""});
    add(model::text_ended{input_id::generate(), answer});
    model::execution_finished f{x, model::outcome::succeeded};
    f.usage.input_tokens = 100;
    f.usage.cost_usd = 0.5;
    f.usage.cost_status = "reported";
    add(f);
    return x;
  }
};

template <class T>
std::vector<const T*> all_of(const std::vector<model::payload>& log) {
  std::vector<const T*> out;
  for (const auto& p : log)
    if (const auto* t = std::get_if<T>(&p)) out.push_back(t);
  return out;
}

TEST(fork, the_point_is_an_execution_finished_seq_or_the_last_one) {
  log_builder b;
  b.add(model::session_created{"t", "", "", {}});
  const auto x1 = b.turn("one", "1");  // seqs 2..8
  const auto x2 = b.turn("two", "2");  // seqs 9..15
  auto last = fork_point_of(b.events, std::nullopt);
  ASSERT_TRUE(last);
  EXPECT_EQ(last->seq, 15);
  EXPECT_EQ(last->execution, x2);
  auto first = fork_point_of(b.events, 8);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->execution, x1);

  for (std::int64_t at : {0, 1, 7, 16}) {
    auto bad = fork_point_of(b.events, at);
    ASSERT_FALSE(bad) << at;
    EXPECT_EQ(bad.error(), util_errc::invalid_argument);
    EXPECT_EQ(bad.error().message.rfind("at: ", 0), 0u) << bad.error().message;
  }
  EXPECT_NE(fork_point_of(b.events, 7).error().message.find("text.ended"), std::string::npos);

  log_builder none;
  none.add(model::session_created{"t", "", "", {}});
  EXPECT_FALSE(fork_point_of(none.events, std::nullopt));
}

TEST(fork, copies_up_to_the_point_with_new_ids_and_no_usage_then_records_the_fork) {
  log_builder b;
  b.add(model::session_created{"t", "", "", {}});
  b.add(model::session_updated{"renamed"});
  b.turn("one", "1");
  b.turn("two", "2");
  const auto after = b.turn("three", "3");
  const fork_names names{b.s, session_id::generate(), "tree", true};
  const auto point = fork_point_of(b.events, 16);
  ASSERT_TRUE(point);
  const auto log = fork_log(b.events, *point, names);

  // Events 3..16 (two turns of seven), then session.forked; not the title.
  ASSERT_EQ(log.size(), 15u);
  EXPECT_TRUE(all_of<model::session_updated>(log).empty());
  const auto* forked = std::get_if<model::session_forked>(&log.back());
  ASSERT_NE(forked, nullptr);
  EXPECT_EQ(forked->from, names.from);
  EXPECT_EQ(forked->fork, names.fork);
  EXPECT_EQ(forked->at, 16);
  EXPECT_EQ(forked->snapshot, "tree");

  // Every id is new, and references follow it.
  const auto admitted = all_of<model::input_admitted>(log);
  const auto promoted = all_of<model::input_promoted>(log);
  const auto started = all_of<model::execution_started>(log);
  const auto finished = all_of<model::execution_finished>(log);
  const auto called = all_of<model::tool_called>(log);
  const auto settled = all_of<model::tool_succeeded>(log);
  ASSERT_EQ(admitted.size(), 2u);
  ASSERT_EQ(finished.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& source_in = std::get<model::input_admitted>(b.events[2 + 7 * i].body);
    EXPECT_NE(admitted[i]->input, source_in.input);
    EXPECT_EQ(admitted[i]->prompt, source_in.prompt);
    EXPECT_EQ(promoted[i]->input, admitted[i]->input);
    EXPECT_EQ(started[i]->execution, promoted[i]->execution);
    EXPECT_EQ(finished[i]->execution, started[i]->execution);
    EXPECT_NE(finished[i]->execution, std::get<model::execution_finished>(b.events[8 + 7 * i].body).execution);
    EXPECT_EQ(settled[i]->call, called[i]->call);
    EXPECT_EQ(finished[i]->usage, model::usage{});  // the source spent it
  }
  // Nothing of turn three.
  for (const auto* a : admitted) EXPECT_NE(a->prompt, "three");
}

TEST(fork, leaves_out_pending_inputs_leases_and_tasks_and_maps_seqs_in_payloads) {
  log_builder b;
  b.add(model::session_created{"t", "", "", {}});
  b.add(model::env_lease_requested{"box", "session-x", "x", {}});  // seq 2: left out
  b.turn("one", "1");                                               // 3..9
  model::runtime_bound bound;
  bound.runtime = "codex";
  bound.external_session_id = "thread-1";
  bound.generation = 0;
  bound.last_seen_seq = 9;
  b.add(bound);                                                     // 10
  b.add(model::input_admitted{input_id::generate(), "queued later"});  // 11: still pending at 13
  const auto cancelled = input_id::generate();
  b.add(model::input_admitted{cancelled, "never"});                 // 12
  b.add(model::input_cancelled{cancelled, "user"});                 // 13
  model::compaction_ended compacted{"summary", 3};
  b.add(compacted);                                                 // 14
  model::agent_state_saved old_state{"codex", "thread-1", 0, "/w", {}, 0, 0};
  b.add(old_state);                                                 // 15: superseded
  b.add(model::agent_state_saved{"codex", "thread-1", 0, "/w", {}, 10, 5});  // 16: the newest
  const auto x = execution_id::generate();
  b.add(model::execution_started{x, "node-a", "codex", "m"});       // 17
  b.add(model::execution_finished{x, model::outcome::succeeded});  // 18

  const auto point = fork_point_of(b.events, 18);
  ASSERT_TRUE(point);
  EXPECT_EQ(newest_agent_state(b.events, *point), 16);
  const auto log = fork_log(b.events, *point, {b.s, session_id::generate(), "tree", true});
  // Kept: the turn (7), the binding, the compaction, the newest state, the
  // second execution (2), session.forked: 13.
  ASSERT_EQ(log.size(), 13u);
  EXPECT_TRUE(all_of<model::env_lease_requested>(log).empty());
  EXPECT_TRUE(all_of<model::input_cancelled>(log).empty());
  EXPECT_EQ(all_of<model::input_admitted>(log).size(), 1u);  // the promoted one only
  ASSERT_EQ(all_of<model::agent_state_saved>(log).size(), 1u);
  EXPECT_EQ(all_of<model::agent_state_saved>(log)[0]->bytes, 10);
  // The fork's seqs: created 1, the turn 2..8, bound 9, compaction 10.
  EXPECT_EQ(all_of<model::runtime_bound>(log)[0]->last_seen_seq, 8);
  EXPECT_EQ(all_of<model::compaction_ended>(log)[0]->kept_from_seq, 2);

  // A state the source's budget released is not promised to the fork.
  const auto released = fork_log(b.events, *point, {b.s, session_id::generate(), "tree", false});
  EXPECT_TRUE(all_of<model::agent_state_saved>(released).empty());
  ASSERT_EQ(all_of<model::agent_state_unavailable>(released).size(), 1u);
  EXPECT_NE(all_of<model::agent_state_unavailable>(released)[0]->reason.find("released"), std::string::npos);
}

}  // namespace
}  // namespace tether::session
