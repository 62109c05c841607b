#include "session/service.h"

#include "session/errors.h"
#include "session/fixture.h"

namespace tether::testing {
namespace {

using model::delivery;
using session::start_mode;

// A store that lets a promotion of an input commit just before the cancel
// of that input that the service sends: the race a drain at a step boundary
// and a user's DELETE can run. Everything else goes straight through.
class promotion_first_store final : public store::event_store {
 public:
  explicit promotion_first_store(store::event_store& inner) : inner_(inner) {}

  store::task<result<store::append_result>> append(store::append_request req) override {
    if (!req.events.empty()) {
      if (const auto* cancel = std::get_if<model::input_cancelled>(&req.events.front())) {
        auto promote = store::single_event(req.session, model::input_promoted{cancel->input, execution_id::generate()});
        auto won = co_await inner_.append(std::move(promote));
        if (!won) co_return won.error();
        ++promotions_;
      }
    }
    co_return co_await inner_.append(std::move(req));
  }
  [[nodiscard]] int promotions() const { return promotions_; }

  store::task<result<store::lease>> claim_lease(session_id s, std::string owner, time_ms ttl_ms) override {
    return inner_.claim_lease(std::move(s), std::move(owner), ttl_ms);
  }
  store::task<result<store::lease>> renew_lease(session_id s, std::string owner, time_ms ttl_ms) override {
    return inner_.renew_lease(std::move(s), std::move(owner), ttl_ms);
  }
  store::task<result<void>> release_lease(session_id s, std::string owner) override {
    return inner_.release_lease(std::move(s), std::move(owner));
  }
  store::task<result<std::size_t>> expire_owned_leases(std::string owner) override {
    return inner_.expire_owned_leases(std::move(owner));
  }
  store::task<result<std::int64_t>> bump_attempts(session_id s, std::string owner) override {
    return inner_.bump_attempts(std::move(s), std::move(owner));
  }
  store::task<result<void>> quarantine(session_id s, std::string reason) override {
    return inner_.quarantine(std::move(s), std::move(reason));
  }
  void publish(session_id s, model::payload ephemeral) override { inner_.publish(std::move(s), std::move(ephemeral)); }
  std::unique_ptr<store::event_tail> tail(session_id s, event_seq after) override {
    return inner_.tail(std::move(s), after);
  }
  std::unique_ptr<store::event_tail> tail_all(std::size_t buffer) override { return inner_.tail_all(buffer); }
  store::task<result<store::event_page>> read(session_id s, event_seq after, std::size_t limit) override {
    return inner_.read(std::move(s), after, limit);
  }
  store::task<result<store::session_row>> get_session(session_id s) override {
    return inner_.get_session(std::move(s));
  }
  store::task<result<store::session_snapshot>> snapshot(session_id s) override { return inner_.snapshot(std::move(s)); }

  store::task<result<std::vector<store::session_row>>> list_sessions(std::size_t limit) override {
    return inner_.list_sessions(limit);
  }
  store::task<result<std::vector<store::session_overview>>> list_overviews(std::size_t limit) override {
    return inner_.list_overviews(limit);
  }
  store::task<result<store::input_row>> get_input(input_id id) override { return inner_.get_input(std::move(id)); }
  store::task<result<std::vector<store::input_row>>> pending_inputs(session_id s) override {
    return inner_.pending_inputs(std::move(s));
  }
  store::task<result<std::vector<store::input_row>>> list_inputs(session_id s) override {
    return inner_.list_inputs(std::move(s));
  }
  store::task<result<std::vector<store::message_row>>> context(session_id s) override {
    return inner_.context(std::move(s));
  }
  store::task<result<std::vector<store::message_row>>> transcript(session_id s) override {
    return inner_.transcript(std::move(s));
  }
  store::task<result<store::execution_row>> get_execution(execution_id id) override {
    return inner_.get_execution(std::move(id));
  }
  store::task<result<std::vector<store::execution_row>>> list_executions(session_id s) override {
    return inner_.list_executions(std::move(s));
  }
  store::task<result<std::vector<store::tool_call_row>>> unsettled_calls(session_id s) override {
    return inner_.unsettled_calls(std::move(s));
  }
  store::task<result<store::interaction_row>> get_interaction(interaction_id id) override {
    return inner_.get_interaction(std::move(id));
  }
  store::task<result<std::vector<store::interaction_row>>> pending_interactions(session_id s) override {
    return inner_.pending_interactions(std::move(s));
  }
  store::task<result<std::vector<store::interaction_row>>> list_interactions(session_id s) override {
    return inner_.list_interactions(std::move(s));
  }
  store::task<result<std::vector<store::abandoned_session>>> list_abandoned(std::string node, std::string current_owner,
                                                                            std::optional<session_id> after,
                                                                            std::size_t limit) override {
    return inner_.list_abandoned(std::move(node), std::move(current_owner), std::move(after), limit);
  }
  store::task<result<std::vector<session_id>>> list_stranded(std::optional<session_id> after,
                                                             std::size_t limit) override {
    return inner_.list_stranded(std::move(after), limit);
  }
  void stop() override { inner_.stop(); }

 private:
  store::event_store& inner_;
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
  ASSERT_EQ(runtime_.contexts().size(), 1U);
  for (const auto& m : runtime_.contexts()[0].transcript) EXPECT_NE(m.text, "cancelled");
  EXPECT_EQ(runtime_.contexts()[0].transcript.back().text, "kept");
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
