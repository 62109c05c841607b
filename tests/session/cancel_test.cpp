#include "session/service.h"

#include "session/errors.h"
#include "session/fixture.h"
#include "store/forwarding_store.h"

namespace tether::testing {
namespace {

using model::delivery;
using session::start_mode;

// A store that lets a promotion of an input commit just before the cancel
// of that input that the service sends: the race a drain at a step boundary
// and a user's DELETE can run. Everything else goes straight through.
class promotion_first_store final : public store::forwarding_store {
 public:
  using forwarding_store::forwarding_store;

  store::task<result<store::append_result>> append(store::append_request req) override {
    if (!req.events.empty()) {
      if (const auto* cancel = std::get_if<model::input_cancelled>(&req.events.front())) {
        auto promote = store::single_event(req.session, model::input_promoted{cancel->input, execution_id::generate()});
        auto won = co_await inner_->append(std::move(promote));
        if (!won) co_return won.error();
        ++promotions_;
      }
    }
    co_return co_await inner_->append(std::move(req));
  }
  [[nodiscard]] int promotions() const { return promotions_; }

 private:
  int promotions_ = 0;
};

class cancel_test : public session_fixture {
 protected:
  cancel_test() { make_service(); }

  result<store::input_row> cancel(const session_id& s, const input_id& id) {
    return run(service_->cancel_input(s, id));
  }
};

TEST_F(cancel_test, cancelling_a_pending_input_records_a_user_cancel_and_returns_the_cancelled_row) {
  const auto s = new_session();
  const auto a = admit(s, "never mind", delivery::queue, start_mode::record_only);
  auto r = cancel(s, a.input.id);
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_EQ(r->id, a.input.id);
  EXPECT_EQ(r->session, s);
  EXPECT_EQ(r->status, store::input_status::cancelled);
  EXPECT_EQ(r->prompt, "never mind");
  EXPECT_EQ(r->delivery, delivery::queue);
  EXPECT_EQ(r->admitted_seq, a.input.admitted_seq);
  EXPECT_FALSE(r->promoted_seq.has_value());
  const auto all = events(s);
  ASSERT_FALSE(all.empty());
  const auto* cancelled = all.back().as<model::input_cancelled>();
  ASSERT_NE(cancelled, nullptr);
  EXPECT_EQ(cancelled->input, a.input.id);
  EXPECT_EQ(cancelled->reason, "user");
}

TEST_F(cancel_test, a_cancelled_input_is_never_run) {
  const auto s = new_session();
  const auto gone = admit(s, "cancelled", delivery::steer, start_mode::record_only);
  admit(s, "kept", delivery::steer, start_mode::record_only);
  ASSERT_TRUE(cancel(s, gone.input.id));
  auto r = run(service_->resume(s));
  ASSERT_TRUE(r) << r.error().describe();
  idle(s);
  // A copy that outlives the loop: a range-for over contexts()[0].transcript
  // would iterate a member of a temporary destroyed before the first step.
  const auto contexts = runtime_.contexts();
  ASSERT_EQ(contexts.size(), 1U);
  for (const auto& m : contexts[0].transcript) EXPECT_NE(m.text, "cancelled");
  EXPECT_EQ(contexts[0].transcript.back().text, "kept");
  EXPECT_EQ(count(s, "input.promoted"), 1U);
}

TEST_F(cancel_test, an_unknown_input_or_an_input_of_another_session_is_unknown_input) {
  const auto s = new_session();
  const auto t = new_session();
  const auto theirs = admit(t, "not yours", delivery::steer, start_mode::record_only);
  const auto before_s = events(s).size();
  const auto before_t = events(t).size();
  auto unknown = cancel(s, input_id::generate());
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error(), session::session_errc::unknown_input);
  auto elsewhere = cancel(s, theirs.input.id);
  ASSERT_FALSE(elsewhere);
  EXPECT_EQ(elsewhere.error(), session::session_errc::unknown_input);
  EXPECT_EQ(events(s).size(), before_s);
  EXPECT_EQ(events(t).size(), before_t);
  auto still = run(store_->get_input(theirs.input.id));
  ASSERT_TRUE(still);
  EXPECT_EQ(still->status, store::input_status::pending);
}

TEST_F(cancel_test, cancelling_in_an_unknown_session_is_unknown_session) {
  auto r = cancel(session_id::generate(), input_id::generate());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), session::session_errc::unknown_session);
}

TEST_F(cancel_test, a_promoted_or_already_cancelled_input_is_not_pending) {
  const auto s = new_session();
  runtime_.script({text("done")});
  const auto ran = admit(s, "run me");
  idle(s);
  ASSERT_EQ(count(s, "input.promoted"), 1U);
  auto promoted = cancel(s, ran.input.id);
  ASSERT_FALSE(promoted);
  EXPECT_EQ(promoted.error(), session::session_errc::input_not_pending);

  const auto twice = admit(s, "cancel me twice", delivery::steer, start_mode::record_only);
  ASSERT_TRUE(cancel(s, twice.input.id));
  auto again = cancel(s, twice.input.id);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error(), session::session_errc::input_not_pending);
  EXPECT_EQ(count(s, "input.cancelled"), 1U);
}

TEST_F(cancel_test, a_promotion_that_commits_first_makes_the_cancel_input_not_pending) {
  const auto s = new_session();
  const auto a = admit(s, "racing", delivery::steer, start_mode::record_only);
  promotion_first_store racing(*store_);
  session::session_service racer(io_.get_executor(), racing, runtime_, clock_, session::make_node_identity("n2"),
                                 test_options());
  auto r = run(racer.cancel_input(s, a.input.id));
  run(racer.stop());
  EXPECT_EQ(racing.promotions(), 1) << "the promotion went in first";
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), session::session_errc::input_not_pending);
  auto row = run(store_->get_input(a.input.id));
  ASSERT_TRUE(row);
  EXPECT_EQ(row->status, store::input_status::promoted) << "the promotion stands";
  EXPECT_EQ(count(s, "input.cancelled"), 0U);
}

}  // namespace
}  // namespace tether::testing
