#include "session/service.h"

#include "session/fixture.h"

namespace tether::testing {
namespace {

using model::delivery;
using session::start_mode;

class promotion_test : public session_fixture {
 protected:
  promotion_test() { make_service(); }

  static std::vector<std::string> texts(const std::vector<store::message_row>& rows) {
    std::vector<std::string> out;
    for (const auto& r : rows) out.push_back(r.text);
    return out;
  }
  // The user messages promoted in one turn: the trailing user rows of its context.
  static std::vector<std::string> trailing_user(const session::turn_context& ctx) {
    std::vector<std::string> out;
    for (auto it = ctx.transcript.rbegin(); it != ctx.transcript.rend() && it->role == store::message_role::user; ++it)
      out.insert(out.begin(), it->text);
    return out;
  }
};

TEST_F(promotion_test, steers_coalesce_into_one_continuation_at_the_next_boundary) {
  const auto s = new_session();
  runtime_.script({gate(), boundary(), text("after steers")});
  admit(s, "start");
  eventually([&] { return runtime_.arrivals() == 1; });
  admit(s, "steer 1");
  admit(s, "steer 2");
  admit(s, "steer 3");
  runtime_.open_gate();
  idle(s);
  ASSERT_EQ(runtime_.boundaries().size(), 1U);
  EXPECT_EQ(texts(runtime_.boundaries()[0]), (std::vector<std::string>{"steer 1", "steer 2", "steer 3"}));
  EXPECT_EQ(runtime_.turns(), 1);  // no extra turn was needed
  EXPECT_EQ(count(s, "execution.started"), 1U);
}

TEST_F(promotion_test, a_runtime_listening_for_wakes_hears_a_steer_admitted_mid_turn_and_promotes_it) {
  const auto s = new_session();
  runtime_.script({woken(), boundary(), text("took it")});
  admit(s, "start");
  eventually([&] { return runtime_.arrivals() == 1; });
  EXPECT_EQ(runtime_.wakes_heard(), 0);
  admit(s, "steer now");  // the turn is waiting for exactly this
  idle(s);
  EXPECT_GE(runtime_.wakes_heard(), 1);
  ASSERT_EQ(runtime_.boundaries().size(), 1U);
  EXPECT_EQ(texts(runtime_.boundaries()[0]), std::vector<std::string>{"steer now"});
  EXPECT_EQ(runtime_.turns(), 1) << "the steer ran inside the turn";
  const int heard = runtime_.wakes_heard();
  admit(s, "later");  // a new turn: the first turn's listener is gone
  idle(s);
  EXPECT_EQ(runtime_.wakes_heard(), heard);
}

TEST_F(promotion_test, steers_are_promoted_only_up_to_the_boundary_captured_before_the_request) {
  const auto s = new_session();
  runtime_.script({gate(), boundary(), gate(), boundary()});
  admit(s, "start");
  eventually([&] { return runtime_.arrivals() == 1; });
  admit(s, "early");
  runtime_.open_gate();
  eventually([&] { return runtime_.arrivals() == 2; });
  admit(s, "late");
  runtime_.open_gate();
  idle(s);
  const auto b = runtime_.boundaries();
  ASSERT_EQ(b.size(), 2U);
  EXPECT_EQ(texts(b[0]), std::vector<std::string>{"early"});
  EXPECT_EQ(texts(b[1]), std::vector<std::string>{"late"});
}

TEST_F(promotion_test, queued_inputs_are_promoted_one_per_idle_boundary_in_fifo_order) {
  const auto s = new_session();
  admit(s, "q1", delivery::queue, start_mode::record_only);
  admit(s, "q2", delivery::queue, start_mode::record_only);
  admit(s, "q3", delivery::queue, start_mode::record_only);
  ASSERT_TRUE(run(service_->resume(s)));
  const auto ctx = runtime_.contexts();
  ASSERT_EQ(ctx.size(), 3U);
  EXPECT_EQ(trailing_user(ctx[0]), std::vector<std::string>{"q1"});
  EXPECT_EQ(trailing_user(ctx[1]), std::vector<std::string>{"q2"});  // after turn 1's reply
  EXPECT_EQ(trailing_user(ctx[2]), std::vector<std::string>{"q3"});
  EXPECT_EQ(count(s, "execution.started"), 1U);  // one busy period
}

TEST_F(promotion_test, queued_input_admitted_mid_turn_waits_for_the_idle_boundary) {
  const auto s = new_session();
  runtime_.script({gate(), boundary(), text("first")});
  admit(s, "start");
  eventually([&] { return runtime_.arrivals() == 1; });
  admit(s, "queued", delivery::queue);
  runtime_.open_gate();
  idle(s);
  ASSERT_EQ(runtime_.boundaries().size(), 1U);
  EXPECT_TRUE(runtime_.boundaries()[0].empty());  // a mid-turn boundary never takes queued inputs
  ASSERT_EQ(runtime_.contexts().size(), 2U);
  EXPECT_EQ(runtime_.contexts()[1].transcript.back().text, "queued");
}

TEST_F(promotion_test, steers_go_before_the_next_queued_input) {
  const auto s = new_session();
  admit(s, "queued", delivery::queue, start_mode::record_only);
  admit(s, "steer", delivery::steer, start_mode::record_only);
  ASSERT_TRUE(run(service_->resume(s)));
  const auto ctx = runtime_.contexts();
  ASSERT_EQ(ctx.size(), 2U);
  EXPECT_EQ(trailing_user(ctx[0]), std::vector<std::string>{"steer"});
  EXPECT_EQ(ctx[1].transcript.back().text, "queued");
}

TEST_F(promotion_test, a_steer_accepted_while_the_current_turn_fails_still_runs) {
  const auto s = new_session();
  runtime_.script({gate(), fail("model exploded")});
  runtime_.script({text("recovered")});
  admit(s, "start");
  eventually([&] { return runtime_.arrivals() == 1; });
  admit(s, "follow-up steer");
  runtime_.open_gate();
  eventually([&] { return count(s, "execution.finished") == 2; });
  idle(s);
  std::vector<model::outcome> outcomes;
  for (const auto& e : events(s))
    if (const auto* f = e.as<model::execution_finished>()) outcomes.push_back(f->outcome);
  EXPECT_EQ(outcomes, (std::vector<model::outcome>{model::outcome::failed, model::outcome::succeeded}));
  ASSERT_EQ(runtime_.contexts().size(), 2U);
  EXPECT_EQ(runtime_.contexts()[1].transcript.back().text, "follow-up steer");
}

}  // namespace
}  // namespace tether::testing
