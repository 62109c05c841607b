// The Runtime seam as the session layer keeps it (session/runtime.h): what a
// runtime is told, when its lifecycle calls come, what its turn host allows
// and which errors reach it.
#include "session/runtime.h"

#include "session/errors.h"
#include "session/fixture.h"

namespace tether::testing {
namespace {

using model::delivery;
using session::start_mode;

class runtime_seam_test : public session_fixture {
 protected:
  runtime_seam_test() { make_service(); }

  // No renewal while a test runs: a stolen lease is found by the turn's
  // own writes, not by the heartbeat.
  static session::session_options no_renewals() {
    auto o = test_options();
    o.lease_renew_ms = 600'000;
    return o;
  }

  // Expires our lease on the manual clock and lets a foreign owner take it.
  void steal(const session_id& s) {
    eventually([&] {
      clock_.advance(31'000);
      return static_cast<bool>(run(store_->claim_lease(s, "thief/1", 30'000)));
    });
  }

  store::session_row session_row(const session_id& s) {
    auto row = run(store_->get_session(s));
    EXPECT_TRUE(row) << row.error().describe();
    return row ? *row : store::session_row{};
  }

  std::vector<model::tool_failed> failed_calls(const session_id& s) {
    std::vector<model::tool_failed> out;
    for (const auto& e : events(s))
      if (const auto* f = e.as<model::tool_failed>()) out.push_back(*f);
    return out;
  }
};

TEST_F(runtime_seam_test, an_execution_and_its_session_record_the_runtime_that_ran_it) {
  const auto s = new_session();
  EXPECT_EQ(session_row(s).runtime, "") << "nothing ran yet";
  admit(s, "hello");
  idle(s);
  const auto all = events(s);
  const auto started = std::find_if(all.begin(), all.end(),
                                    [](const model::event& e) { return e.as<model::execution_started>() != nullptr; });
  ASSERT_NE(started, all.end());
  EXPECT_EQ(started->as<model::execution_started>()->runtime, "scripted");
  auto executions = run(store_->list_executions(s));
  ASSERT_TRUE(executions);
  ASSERT_EQ(executions->size(), 1U);
  EXPECT_EQ((*executions)[0].runtime, "scripted");
  EXPECT_EQ(session_row(s).runtime, "scripted");
}

TEST_F(runtime_seam_test, a_turn_names_the_inputs_it_promoted_besides_the_transcript) {
  const auto s = new_session();
  const auto a = admit(s, "first", delivery::steer, start_mode::record_only);
  const auto b = admit(s, "second", delivery::steer, start_mode::record_only);
  const auto c = admit(s, "third", delivery::queue, start_mode::record_only);
  ASSERT_TRUE(run(service_->resume(s)));
  const auto ctx = runtime_.contexts();
  ASSERT_EQ(ctx.size(), 2U);
  // The execution's start promoted the steers; its idle boundary the queued input.
  ASSERT_EQ(ctx[0].promoted.size(), 2U);
  EXPECT_EQ(ctx[0].promoted[0].id, a.input.id);
  EXPECT_EQ(ctx[0].promoted[0].text, "first");
  EXPECT_EQ(ctx[0].promoted[1].id, b.input.id);
  EXPECT_EQ(ctx[0].promoted[1].text, "second");
  ASSERT_GE(ctx[0].transcript.size(), 2U);
  EXPECT_EQ(ctx[0].promoted[1].seq, ctx[0].transcript.back().seq) << "the seq of its message";
  ASSERT_EQ(ctx[1].promoted.size(), 1U);
  EXPECT_EQ(ctx[1].promoted[0].id, c.input.id);
  EXPECT_EQ(ctx[1].promoted[0].text, "third");
  EXPECT_EQ(ctx[1].promoted[0].seq, ctx[1].transcript.back().seq);
  EXPECT_EQ(ctx[1].execution, ctx[0].execution);
}

TEST_F(runtime_seam_test, the_binding_a_turn_recorded_is_handed_to_the_next_turn_of_its_generation) {
  const auto s = new_session();
  runtime_.script({bind("agent-1")});
  admit(s, "one");
  idle(s);
  admit(s, "two");
  idle(s);
  const auto ctx = runtime_.contexts();
  ASSERT_EQ(ctx.size(), 2U);
  EXPECT_FALSE(ctx[0].binding);
  ASSERT_TRUE(ctx[1].binding);
  EXPECT_EQ(ctx[1].binding->runtime, "scripted");
  EXPECT_EQ(ctx[1].binding->external_session_id, "agent-1");
  EXPECT_EQ(ctx[1].binding->generation, 0) << "the host gave the binding the turn's generation";
  EXPECT_EQ(ctx[1].binding->state, R"({"turn":1})");
  EXPECT_GT(ctx[1].binding->last_seen_seq.value, 0);
}

TEST_F(runtime_seam_test, a_bind_written_after_a_reset_does_not_resurrect_the_old_agent_session) {
  const auto s = new_session();
  runtime_.script({bind("agent-old")});
  admit(s, "one");
  idle(s);
  // A turn of generation 0 binds again after the reset moved the session on.
  runtime_.script({gate(), bind("agent-stale")});
  admit(s, "two");
  eventually([&] { return runtime_.arrivals() == 1; });
  ASSERT_TRUE(run(service_->reset(s)));
  runtime_.open_gate();
  idle(s);
  EXPECT_EQ(count(s, "runtime.bound"), 2U) << "the stale bind is kept in the log";
  EXPECT_FALSE(session_row(s).binding);
  admit(s, "three");
  idle(s);
  const auto ctx = runtime_.contexts();
  ASSERT_EQ(ctx.size(), 3U);
  EXPECT_EQ(ctx[2].generation, 1);
  EXPECT_FALSE(ctx[2].binding) << "neither the binding of before the reset nor the one written after it";
}

TEST_F(runtime_seam_test, a_reset_makes_the_runtime_forget_the_session) {
  const auto s = new_session();
  admit(s, "one");
  idle(s);
  EXPECT_TRUE(runtime_.forgotten().empty());
  ASSERT_TRUE(run(service_->reset(s)));
  EXPECT_EQ(runtime_.forgotten(), std::vector<session_id>{s});
}

TEST_F(runtime_seam_test, a_lost_lease_reaches_the_runtime_as_lease_lost_and_the_runtime_forgets_the_session) {
  stop_service();
  make_service(no_renewals());
  const auto s = new_session();
  runtime_.script({gate(), text("too late")});
  admit(s, "go");
  eventually([&] { return runtime_.arrivals() == 1; });
  steal(s);
  runtime_.open_gate();
  idle(s);
  const auto errors = runtime_.host_errors();
  ASSERT_EQ(errors.size(), 1U);
  EXPECT_EQ(errors[0], session::session_errc::lease_lost) << errors[0].describe();
  EXPECT_NE(errors[0].code.category(), store::store_category());
  EXPECT_EQ(count(s, "text.ended"), 0U);
  EXPECT_EQ(count(s, "execution.finished"), 0U);
  EXPECT_EQ(runtime_.forgotten(), std::vector<session_id>{s});
}

TEST_F(runtime_seam_test, a_binding_state_over_the_limit_is_refused_as_invalid_input) {
  const auto s = new_session();
  runtime_.script({bind_big()});
  admit(s, "go");
  idle(s);
  const auto errors = runtime_.host_errors();
  ASSERT_EQ(errors.size(), 1U);
  EXPECT_EQ(errors[0], session::session_errc::invalid_input);
  EXPECT_NE(errors[0].message.find("16384"), std::string::npos) << errors[0].message;
  EXPECT_EQ(count(s, "runtime.bound"), 0U);
}

TEST_F(runtime_seam_test, the_turn_host_refuses_every_call_once_its_turn_has_returned) {
  const auto s = new_session();
  runtime_.script({keep(), text("answer")});
  admit(s, "go");
  idle(s);
  auto host = runtime_.kept_host();
  ASSERT_NE(host, nullptr);
  const auto before = events(s).size();
  const auto drains = service_->drains_started();

  std::vector<model::payload> late;
  late.emplace_back(model::text_ended{message_id::generate(), std::string("late")});
  auto recorded = run(host->record(std::move(late)));
  ASSERT_FALSE(recorded);
  EXPECT_EQ(recorded.error(), session::session_errc::turn_over);
  auto promoted = run(host->boundary());
  ASSERT_FALSE(promoted);
  EXPECT_EQ(promoted.error(), session::session_errc::turn_over);
  std::vector<model::payload> answer;
  answer.emplace_back(model::text_ended{message_id::generate(), std::string("late answer")});
  auto after = run(host->boundary_after(std::move(answer)));
  ASSERT_FALSE(after);
  EXPECT_EQ(after.error(), session::session_errc::turn_over);
  std::vector<model::payload> soon;
  soon.emplace_back(model::step_failed{std::string("late")});
  host->record_soon(std::move(soon));
  host->publish(model::text_delta{std::string("late")});
  host->wake();
  idle(s);

  EXPECT_EQ(events(s).size(), before) << "nothing reached the log";
  EXPECT_EQ(service_->drains_started(), drains) << "the wake rang no doorbell";
}

TEST_F(runtime_seam_test, an_agent_call_left_running_is_settled_failed_when_its_turn_is_stopped) {
  const auto s = new_session();
  runtime_.script({agent("exec")});
  admit(s, "work");
  eventually([&] { return count(s, "tool.called") == 1; });
  ASSERT_TRUE(run(service_->interrupt(s)));
  idle(s);
  const auto failed = failed_calls(s);
  ASSERT_EQ(failed.size(), 1U);
  EXPECT_EQ(failed[0].error, "interrupted");
  auto calls = run(store_->unsettled_calls(s));
  ASSERT_TRUE(calls);
  EXPECT_TRUE(calls->empty());
}

TEST_F(runtime_seam_test, an_agent_call_left_running_by_a_dead_node_is_settled_failed_by_recovery) {
  // A node died while an agent ran a call of its turn, and a provider's
  // hosted call of that turn was recorded with no result yet.
  const auto s = session_id::generate();
  const auto in = input_id::generate();
  const auto exe = execution_id::generate();
  const auto agent_call = call_id::generate();
  const auto hosted_call = call_id::generate();
  ASSERT_TRUE(run(store_->append(store::single_event(s, model::session_created{}))));
  ASSERT_TRUE(run(store_->append(store::single_event(s, model::input_admitted{in, "work", delivery::steer}))));
  ASSERT_TRUE(run(store_->claim_lease(s, "dead/1", 30'000)));
  store::fence f;
  f.lease_owner = "dead/1";
  store::append_request req;
  req.session = s;
  req.fence = f;
  req.events.emplace_back(model::execution_started{exe, "dead/1", "scripted"});
  req.events.emplace_back(model::input_promoted{in, exe});
  req.events.emplace_back(model::step_started{exe, 1});
  req.events.emplace_back(
      model::tool_called{agent_call, std::string("exec"), boost::json::object{}, model::tool_kind::agent});
  req.events.emplace_back(
      model::tool_called{hosted_call, std::string("web_search"), boost::json::object{}, model::tool_kind::hosted});
  ASSERT_TRUE(run(store_->append(std::move(req))));
  clock_.advance(60'000);

  auto report = run(service_->recover());
  ASSERT_TRUE(report) << report.error().describe();
  EXPECT_EQ(report->claimed, 1U);
  eventually([&] { return count(s, "execution.finished") == 1; });
  idle(s);
  const auto failed = failed_calls(s);
  ASSERT_EQ(failed.size(), 1U) << "only the agent's call: a hosted call is the provider's";
  EXPECT_EQ(failed[0].call, agent_call);
  EXPECT_EQ(failed[0].error, "interrupted by restart");
}

TEST_F(runtime_seam_test, the_service_starts_its_runtime_and_stops_it_after_its_turns_ended) {
  EXPECT_EQ(runtime_.starts(), 0);
  ASSERT_TRUE(run(service_->start()));
  EXPECT_EQ(runtime_.starts(), 1);
  const auto s = new_session();
  runtime_.script({hang()});
  admit(s, "long");
  eventually([&] { return runtime_.turns() == 1; });
  EXPECT_EQ(runtime_.stops(), 0);
  stop_service();
  EXPECT_EQ(runtime_.stops(), 1);
  EXPECT_EQ(runtime_.running_at_stop(), 0) << "the drains ended before the runtime was stopped";
}

TEST_F(runtime_seam_test, a_runtime_that_cannot_start_fails_the_service_start) {
  runtime_.fail_start("no agent binary");
  auto started = run(service_->start());
  ASSERT_FALSE(started);
  EXPECT_NE(started.error().message.find("no agent binary"), std::string::npos) << started.error().describe();
}

}  // namespace
}  // namespace tether::testing
