#include "session/service.h"

#include <future>

#include <boost/json/parse.hpp>

#include "session/errors.h"
#include "session/fixture.h"

namespace tether::testing {
namespace {

using model::delivery;
using session::start_mode;

class execution_test : public session_fixture {
 protected:
  execution_test() { make_service(); }

  static std::vector<model::execution_finished> finished(const std::vector<model::event>& evs) {
    std::vector<model::execution_finished> out;
    for (const auto& e : evs)
      if (const auto* f = e.as<model::execution_finished>()) out.push_back(*f);
    return out;
  }
};

TEST_F(execution_test, concurrent_resumes_join_one_execution) {
  const auto s = new_session();
  runtime_.script({gate(), text("one run")});
  admit(s, "go", delivery::steer, start_mode::record_only);
  std::vector<std::future<result<session::drain_outcome>>> waiters;
  for (int i = 0; i < 5; ++i) waiters.push_back(asio::co_spawn(io_, service_->resume(s), asio::use_future));
  eventually([&] { return runtime_.arrivals() == 1 && service_->resume_waiters(s) == 5; });
  runtime_.open_gate();
  std::optional<execution_id> seen;
  for (auto& w : waiters) {
    auto r = w.get();
    ASSERT_TRUE(r) << r.error().describe();
    EXPECT_EQ(r->status, session::drain_status::succeeded);
    ASSERT_TRUE(r->execution);
    if (seen) {
      EXPECT_EQ(*seen, *r->execution);
    }
    seen = r->execution;
  }
  EXPECT_EQ(runtime_.turns(), 1);
  EXPECT_EQ(count(s, "execution.started"), 1U);
}

TEST_F(execution_test, a_wake_from_inside_a_turn_causes_one_more_drain) {
  const auto s = new_session();
  runtime_.script({wake(), wake(), wake(), text("woke")});
  admit(s, "go");
  eventually([&] { return count(s, "execution.finished") == 1; });
  idle(s);
  EXPECT_EQ(service_->drains_started(), 2U);  // three wakes, one extra drain (which found nothing)
  EXPECT_EQ(count(s, "execution.started"), 1U);
}

TEST_F(execution_test, interrupt_finishes_interrupted_user_and_keeps_pending_inputs) {
  const auto s = new_session();
  runtime_.script({hang()});
  admit(s, "long job");
  eventually([&] { return runtime_.turns() == 1; });
  admit(s, "queued later", delivery::queue, start_mode::record_only);
  auto ack = run(service_->interrupt(s));
  ASSERT_TRUE(ack);
  EXPECT_TRUE(ack->was_active);
  idle(s);
  const auto f = finished(events(s));
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(f[0].outcome, model::outcome::interrupted);
  EXPECT_EQ(f[0].reason, "user");
  auto pending = run(store_->pending_inputs(s));
  ASSERT_TRUE(pending);
  ASSERT_EQ(pending->size(), 1U);
  EXPECT_EQ((*pending)[0].prompt, "queued later");
}

TEST_F(execution_test, interrupt_fails_unsettled_tool_calls_and_the_open_step) {
  const auto s = new_session();
  runtime_.script({inflight("bash")});
  admit(s, "run a tool");
  eventually([&] { return count(s, "tool.called") == 1; });
  ASSERT_TRUE(run(service_->interrupt(s)));
  idle(s);
  const auto t = types(s);
  const auto tail = std::vector<std::string>(t.end() - 3, t.end());
  EXPECT_EQ(tail, (std::vector<std::string>{"tool.failed", "step.failed", "execution.finished"}));
  auto calls = run(store_->unsettled_calls(s));
  ASSERT_TRUE(calls);
  EXPECT_TRUE(calls->empty());
}

// A final answer held for the execution's end (turn_host::boundary_after)
// is not lost by an interrupt, and its step is not failed: it was closed.
TEST_F(execution_test, an_interrupt_after_a_held_answer_writes_the_answer_and_fails_no_step) {
  const auto s = new_session();
  runtime_.script({answer("held answer"), gate()});
  admit(s, "answer, then wait");
  eventually([&] { return runtime_.arrivals() == 1; });
  EXPECT_EQ(count(s, "text.ended"), 0U) << "the answer waits for the execution's next write";
  ASSERT_TRUE(run(service_->interrupt(s)));
  idle(s);
  const auto t = types(s);
  const auto tail = std::vector<std::string>(t.end() - 3, t.end());
  EXPECT_EQ(tail, (std::vector<std::string>{"text.ended", "step.ended", "execution.finished"}));
  EXPECT_EQ(count(s, "step.failed"), 0U);
  const auto f = finished(events(s));
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(f[0].outcome, model::outcome::interrupted);
}

// A steer that arrived while the answer was produced is promoted in the same
// commit, right after it, and the turn goes on with it.
TEST_F(execution_test, a_steer_that_arrives_before_the_answer_is_written_with_it_and_promoted) {
  const auto s = new_session();
  runtime_.script({gate(), answer("first answer"), text("after the steer")});
  admit(s, "start");
  eventually([&] { return runtime_.arrivals() == 1; });
  admit(s, "a steer");
  runtime_.open_gate();
  idle(s);
  const auto all = events(s);
  std::vector<std::string> order;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i].as<model::text_ended>() == nullptr || all[i].as<model::text_ended>()->text != "first answer") continue;
    for (std::size_t k = i; k < all.size() && k < i + 3; ++k) order.emplace_back(all[k].type());
  }
  EXPECT_EQ(order, (std::vector<std::string>{"text.ended", "step.ended", "input.promoted"}));
  const auto b = runtime_.boundaries();
  ASSERT_EQ(b.size(), 1U);
  ASSERT_EQ(b[0].size(), 1U);
  EXPECT_EQ(b[0][0].text, "a steer");
  EXPECT_EQ(runtime_.turns(), 1) << "the steer joined the running turn";
}

TEST_F(execution_test, interrupting_an_idle_session_is_a_no_op) {
  const auto s = new_session();
  const auto before = events(s).size();
  auto ack = run(service_->interrupt(s));
  ASSERT_TRUE(ack);
  EXPECT_FALSE(ack->was_active);
  EXPECT_EQ(events(s).size(), before);
}

TEST_F(execution_test, reset_keeps_history_but_the_next_context_starts_empty) {
  const auto s = new_session();
  admit(s, "remember the phrase: blue");
  eventually([&] { return count(s, "execution.finished") == 1; });
  idle(s);
  ASSERT_TRUE(run(service_->reset(s)));
  admit(s, "what was the phrase?");
  eventually([&] { return count(s, "execution.finished") == 2; });
  idle(s);
  const auto ctx = runtime_.contexts();
  ASSERT_EQ(ctx.size(), 2U);
  ASSERT_EQ(ctx[1].transcript.size(), 1U);
  EXPECT_EQ(ctx[1].transcript[0].text, "what was the phrase?");
  EXPECT_EQ(count(s, "input.promoted"), 2U);  // history is still all there
  EXPECT_EQ(count(s, "session.reset"), 1U);
}

TEST_F(execution_test, a_question_finishes_waiting_and_the_answer_resumes_the_turn) {
  const auto s = new_session();
  runtime_.script({ask("Which color?")});
  runtime_.script({text("You chose red")});
  admit(s, "ask me");
  eventually([&] { return count(s, "execution.finished") == 1; });
  idle(s);
  const auto f = finished(events(s));
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(f[0].outcome, model::outcome::waiting);
  auto asking = run(store_->pending_interactions(s));
  ASSERT_TRUE(asking);
  ASSERT_EQ(asking->size(), 1U);
  ASSERT_TRUE(run(service_->answer((*asking)[0].id, boost::json::parse(R"({"choice":"red"})"))));
  eventually([&] { return count(s, "execution.finished") == 2; });
  idle(s);
  const auto ctx = runtime_.contexts();
  ASSERT_EQ(ctx.size(), 2U);
  EXPECT_EQ(ctx[1].start, session::turn_start::continuation);
  EXPECT_EQ(ctx[1].transcript.back().role, store::message_role::tool_result);
  EXPECT_NE(ctx[1].transcript.back().text.find("red"), std::string::npos);
  auto again = run(service_->answer((*asking)[0].id, boost::json::value("blue")));
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error(), session::session_errc::interaction_closed);
}

TEST_F(execution_test, the_answer_reaches_the_model_with_the_labels_of_the_chosen_options) {
  const auto s = new_session();
  runtime_.script({ask("Which color?")});
  runtime_.script({text("ok")});
  admit(s, "ask me");
  eventually([&] { return count(s, "execution.finished") == 1; });
  idle(s);
  auto asking = run(store_->pending_interactions(s));
  ASSERT_TRUE(asking);
  ASSERT_EQ(asking->size(), 1U);
  ASSERT_TRUE(run(service_->answer((*asking)[0].id,
                                   boost::json::parse(R"({"answers":[{"question_id":"q1","option_ids":["blue"]}]})"))));
  eventually([&] { return count(s, "execution.finished") == 2; });
  idle(s);
  const auto ctx = runtime_.contexts();
  ASSERT_EQ(ctx.size(), 2U);
  const auto result = boost::json::parse(ctx[1].transcript.back().text);
  EXPECT_EQ(result.at("answers").at(0).at("labels"), boost::json::parse(R"(["Blue"])"));
  EXPECT_EQ(result.at("answers").at(0).at("option_ids"), boost::json::parse(R"(["blue"])"));
}

TEST_F(execution_test, inputs_wait_while_a_question_is_pending) {
  const auto s = new_session();
  runtime_.script({ask("Proceed?")});
  admit(s, "ask me");
  eventually([&] { return count(s, "execution.finished") == 1; });
  idle(s);
  admit(s, "another thing", delivery::queue);
  idle(s);
  EXPECT_EQ(runtime_.turns(), 1);
  EXPECT_EQ(count(s, "execution.started"), 1U);
}

TEST_F(execution_test, an_interaction_waiting_for_an_answer_survives_a_restart) {
  const auto s = new_session();
  runtime_.script({ask("Deploy now?")});
  runtime_.script({text("deployed")});
  admit(s, "ask me");
  eventually([&] { return count(s, "execution.finished") == 1; });
  idle(s);
  stop_service();
  close_store();
  open_store();
  make_service();
  ASSERT_TRUE(run(service_->start()));
  auto asking = run(store_->pending_interactions(s));
  ASSERT_TRUE(asking);
  ASSERT_EQ(asking->size(), 1U);
  EXPECT_EQ((*asking)[0].kind, "question");
  ASSERT_TRUE(run(service_->answer((*asking)[0].id, boost::json::value("yes"))));
  eventually([&] { return count(s, "execution.finished") == 2; });
  idle(s);
  EXPECT_EQ(runtime_.contexts().back().transcript.back().role, store::message_role::tool_result);
}

TEST_F(execution_test, usage_of_the_turns_is_recorded_on_the_execution) {
  const auto s = new_session();
  runtime_.script({text("a"), text("b")});
  admit(s, "go");
  eventually([&] { return count(s, "execution.finished") == 1; });
  const auto f = finished(events(s));
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(f[0].usage.input_tokens, 20);
  EXPECT_EQ(f[0].usage.output_tokens, 10);
}

}  // namespace
}  // namespace tether::testing
