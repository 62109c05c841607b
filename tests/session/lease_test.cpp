#include "session/service.h"

#include "session/fixture.h"

namespace tether::testing {
namespace {

class lease_test : public session_fixture {
 protected:
  lease_test() { make_service(); }

  // Expires our lease on the manual clock and lets a foreign owner take it.
  void steal(const session_id& s, const std::string& thief) {
    eventually([&] {
      clock_.advance(31'000);
      return static_cast<bool>(run(store_->claim_lease(s, thief, 30'000)));
    });
  }
};

TEST_F(lease_test, a_fresh_foreign_lease_blocks_claim_renewal_and_release) {
  const auto s = new_session();
  ASSERT_TRUE(run(store_->claim_lease(s, "a/1", 30'000)));
  auto claim = run(store_->claim_lease(s, "b/1", 30'000));
  ASSERT_FALSE(claim);
  EXPECT_EQ(claim.error(), store::store_errc::lease_held);
  auto renew = run(store_->renew_lease(s, "b/1", 30'000));
  ASSERT_FALSE(renew);
  EXPECT_EQ(renew.error(), store::store_errc::lease_held);
  auto release = run(store_->release_lease(s, "b/1"));
  ASSERT_FALSE(release);
  EXPECT_EQ(release.error(), store::store_errc::lease_held);
}

TEST_F(lease_test, a_fresh_foreign_lease_makes_a_drain_busy_without_running_anything) {
  const auto s = new_session();
  ASSERT_TRUE(run(store_->claim_lease(s, "other/1", 30'000)));
  admit(s, "hello", model::delivery::steer, session::start_mode::record_only);
  auto r = run(service_->resume(s));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, session::drain_status::busy);
  EXPECT_EQ(runtime_.turns(), 0);
  EXPECT_EQ(count(s, "execution.started"), 0U);
}

TEST_F(lease_test, an_expired_lease_is_taken_over_with_the_attempt_count_kept) {
  const auto s = new_session();
  ASSERT_TRUE(run(store_->claim_lease(s, "a/1", 30'000)));
  ASSERT_TRUE(run(store_->bump_attempts(s, "a/1")));
  ASSERT_TRUE(run(store_->bump_attempts(s, "a/1")));
  clock_.advance(30'001);
  auto taken = run(store_->claim_lease(s, "b/1", 30'000));
  ASSERT_TRUE(taken) << taken.error().describe();
  EXPECT_EQ(taken->owner, "b/1");
  EXPECT_EQ(taken->attempts, 2);
}

TEST_F(lease_test, a_terminal_outcome_written_after_the_lease_was_lost_is_rejected) {
  const auto s = new_session();
  const auto exe = execution_id::generate();
  ASSERT_TRUE(run(store_->claim_lease(s, "a/1", 30'000)));
  store::fence mine;
  mine.lease_owner = "a/1";
  ASSERT_TRUE(run(store_->append(store::single_event(s, model::execution_started{exe, "a/1"}, mine))));
  clock_.advance(30'001);
  ASSERT_TRUE(run(store_->claim_lease(s, "b/1", 30'000)));
  const auto before = events(s).size();
  auto late = run(store_->append(
      store::single_event(s, model::execution_finished{exe, model::outcome::succeeded, {}, {}, {}}, mine)));
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error(), store::store_errc::fence_failed);
  EXPECT_EQ(events(s).size(), before);
}

TEST_F(lease_test, a_node_that_loses_its_lease_stops_the_execution_without_a_terminal_event) {
  const auto s = new_session();
  runtime_.script({hang()});
  admit(s, "long job", model::delivery::steer, session::start_mode::record_only);
  auto waiter = asio::co_spawn(io_, service_->resume(s), asio::use_future);
  eventually([&] { return runtime_.turns() == 1; });
  steal(s, "thief/1");
  auto r = waiter.get();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, session::drain_status::abandoned);
  idle(s);
  EXPECT_EQ(count(s, "execution.finished"), 0U);
  auto row = run(store_->get_session(s));
  ASSERT_TRUE(row);
  EXPECT_EQ(row->lease->owner, "thief/1");
}

TEST_F(lease_test, a_turn_whose_writes_hit_a_lost_lease_ends_without_a_terminal_event) {
  const auto s = new_session();
  runtime_.script({gate(), text("too late")});
  admit(s, "go");
  eventually([&] { return runtime_.arrivals() == 1; });
  steal(s, "thief/1");
  runtime_.open_gate();
  idle(s);
  EXPECT_EQ(count(s, "text.ended"), 0U);
  EXPECT_EQ(count(s, "execution.finished"), 0U);
}

TEST_F(lease_test, the_lease_is_renewed_while_an_execution_runs) {
  const auto s = new_session();
  runtime_.script({hang()});
  admit(s, "long");
  eventually([&] { return runtime_.turns() == 1; });
  clock_.advance(25'000);
  const auto target = clock_.now() + 30'000;
  eventually([&] {
    auto row = run(store_->get_session(s));
    return row && row->lease && row->lease->expires_at >= target;
  });
  ASSERT_TRUE(run(service_->interrupt(s)));
  idle(s);
}

}  // namespace
}  // namespace tether::testing
