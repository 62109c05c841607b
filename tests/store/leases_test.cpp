#include "store/event_store.h"

#include "backends.h"

namespace tether::store::test {
namespace {

template <class F>
class leases : public store_test<F> {};
TYPED_TEST_SUITE(leases, backends, backend_names);

constexpr time_ms ttl = 30'000;

TYPED_TEST(leases, a_free_session_can_be_claimed_and_a_fresh_foreign_lease_blocks) {
  this->open();
  const auto s = this->new_session();
  auto mine = this->run(this->store().claim_lease(s, "node-a/1", ttl));
  ASSERT_TRUE(mine) << why(mine);
  EXPECT_EQ(mine->owner, "node-a/1");
  EXPECT_EQ(mine->expires_at, this->clock_.now() + ttl);
  EXPECT_EQ(mine->attempts, 0);
  auto again = this->run(this->store().claim_lease(s, "node-a/1", ttl));
  EXPECT_TRUE(again) << "claiming our own lease again is fine";
  auto theirs = this->run(this->store().claim_lease(s, "node-b/1", ttl));
  ASSERT_FALSE(theirs);
  EXPECT_EQ(theirs.error(), store_errc::lease_held);
  auto renew = this->run(this->store().renew_lease(s, "node-b/1", ttl));
  ASSERT_FALSE(renew);
  EXPECT_EQ(renew.error(), store_errc::lease_held);
  auto release = this->run(this->store().release_lease(s, "node-b/1"));
  ASSERT_FALSE(release);
  EXPECT_EQ(release.error(), store_errc::lease_held);
}

// An append whose fence claims the lease: starting an execution is one commit.
fence claiming(std::string owner) {
  fence f;
  f.lease_owner = std::move(owner);
  f.no_open_execution = true;
  f.claim_ttl_ms = ttl;
  return f;
}

TYPED_TEST(leases, an_append_can_claim_the_lease_in_its_own_transaction) {
  this->open();
  const auto s = this->new_session();
  const auto exe = execution_id::generate();
  auto started = this->append(s, {model::execution_started{exe, "node-a/1"}}, claiming("node-a/1"));
  ASSERT_TRUE(started) << why(started);
  auto row = this->run(this->store().get_session(s));
  ASSERT_TRUE(row && row->lease);
  EXPECT_EQ(row->lease->owner, "node-a/1");
  EXPECT_EQ(row->lease->expires_at, this->clock_.now() + ttl);
  EXPECT_EQ(row->open_execution, exe);
}

TYPED_TEST(leases, an_append_that_claims_a_fresh_foreign_lease_is_lease_held_and_writes_nothing) {
  this->open();
  const auto s = this->new_session();
  ASSERT_TRUE(this->run(this->store().claim_lease(s, "node-b/1", ttl)));
  const auto before = this->last_seq(s);
  auto started =
      this->append(s, {model::execution_started{execution_id::generate(), "node-a/1"}}, claiming("node-a/1"));
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error(), store_errc::lease_held);
  EXPECT_EQ(this->last_seq(s), before);
  EXPECT_EQ(this->run(this->store().get_session(s))->lease->owner, "node-b/1");
}

TYPED_TEST(leases, a_claim_whose_fence_then_fails_is_rolled_back) {
  this->open();
  const auto s = this->new_session();
  ASSERT_TRUE(this->append(s, {model::execution_started{execution_id::generate(), "node-a/1"}}, claiming("node-a/1")));
  ASSERT_TRUE(this->run(this->store().release_lease(s, "node-a/1")));
  // An execution is open: the second start fails its fence, and its claim with it.
  auto second = this->append(s, {model::execution_started{execution_id::generate(), "node-b/1"}}, claiming("node-b/1"));
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error(), store_errc::fence_failed);
  EXPECT_EQ(this->run(this->store().get_session(s))->lease->owner, "node-a/1");
}

// A terminal append releases the lease in its own transaction.
TYPED_TEST(leases, an_append_can_release_the_lease_in_its_own_transaction) {
  this->open();
  const auto s = this->new_session();
  const auto exe = execution_id::generate();
  ASSERT_TRUE(this->append(s, {model::execution_started{exe, "node-a/1"}}, claiming("node-a/1")));
  fence f;
  f.lease_owner = "node-a/1";
  f.release_lease = true;
  auto finished = this->append(s, {model::execution_finished{exe, model::outcome::succeeded, {}, {}, {}}}, f);
  ASSERT_TRUE(finished) << why(finished);
  auto row = this->run(this->store().get_session(s));
  ASSERT_TRUE(row && row->lease);
  EXPECT_EQ(row->lease->expires_at, this->clock_.now()) << "released: expired now";
  EXPECT_FALSE(row->open_execution);
  auto other = this->run(this->store().claim_lease(s, "node-b/1", ttl));
  EXPECT_TRUE(other) << "another node may claim it at once: " << why(other);
}

TYPED_TEST(leases, a_releasing_append_by_a_node_without_the_lease_writes_nothing_and_releases_nothing) {
  this->open();
  const auto s = this->new_session();
  const auto exe = execution_id::generate();
  ASSERT_TRUE(this->append(s, {model::execution_started{exe, "node-a/1"}}, claiming("node-a/1")));
  const auto before = this->last_seq(s);
  fence f;
  f.lease_owner = "node-b/1";
  f.release_lease = true;
  auto finished = this->append(s, {model::execution_finished{exe, model::outcome::succeeded, {}, {}, {}}}, f);
  ASSERT_FALSE(finished);
  EXPECT_EQ(finished.error(), store_errc::fence_failed);
  EXPECT_EQ(this->last_seq(s), before);
  auto row = this->run(this->store().get_session(s));
  ASSERT_TRUE(row && row->lease);
  EXPECT_EQ(row->lease->owner, "node-a/1");
  EXPECT_EQ(row->lease->expires_at, this->clock_.now() + ttl);
}

TYPED_TEST(leases, a_new_incarnation_of_the_same_node_takes_over_a_fresh_lease_at_once) {
  this->open();
  const auto s = this->new_session();
  ASSERT_TRUE(this->run(this->store().claim_lease(s, "node-a/old", ttl)));
  ASSERT_TRUE(this->run(this->store().bump_attempts(s, "node-a/old")));
  auto taken = this->run(this->store().claim_lease(s, "node-a/new", ttl));
  ASSERT_TRUE(taken) << why(taken);
  EXPECT_EQ(taken->owner, "node-a/new");
  EXPECT_EQ(taken->attempts, 1);
  auto old = this->run(this->store().renew_lease(s, "node-a/old", ttl));
  ASSERT_FALSE(old);
  EXPECT_EQ(old.error(), store_errc::lease_held) << "only claim takes over; the old owner is now foreign";
  for (const char* other : {"node-ab/1", "node/1", "node-a/new/x"}) {
    auto blocked = this->run(this->store().claim_lease(s, other, ttl));
    ASSERT_FALSE(blocked) << other;
    EXPECT_EQ(blocked.error(), store_errc::lease_held) << other;
  }
}

TYPED_TEST(leases, claiming_an_unknown_session_is_unknown_session) {
  this->open();
  auto r = this->run(this->store().claim_lease(session_id::generate(), "node-a/1", ttl));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::unknown_session);
}

TYPED_TEST(leases, an_expired_lease_is_taken_over_and_the_attempt_count_survives) {
  this->open();
  const auto s = this->new_session();
  ASSERT_TRUE(this->run(this->store().claim_lease(s, "node-a/1", ttl)));
  auto bumped = this->run(this->store().bump_attempts(s, "node-a/1"));
  ASSERT_TRUE(bumped) << why(bumped);
  EXPECT_EQ(*bumped, 1);
  this->clock_.advance(ttl);
  auto taken = this->run(this->store().claim_lease(s, "node-b/1", ttl));
  ASSERT_TRUE(taken) << why(taken);
  EXPECT_EQ(taken->owner, "node-b/1");
  EXPECT_EQ(taken->attempts, 1);
  bumped = this->run(this->store().bump_attempts(s, "node-b/1"));
  ASSERT_TRUE(bumped);
  EXPECT_EQ(*bumped, 2);
  auto row = this->run(this->store().get_session(s));
  ASSERT_TRUE(row);
  ASSERT_TRUE(row->lease);
  EXPECT_EQ(row->lease->owner, "node-b/1");
  EXPECT_EQ(row->lease->attempts, 2);
}

TYPED_TEST(leases, renewal_extends_our_lease_even_after_expiry_but_not_one_taken_over) {
  this->open();
  const auto s = this->new_session();
  ASSERT_TRUE(this->run(this->store().claim_lease(s, "node-a/1", ttl)));
  this->clock_.advance(ttl + 5);
  auto late = this->run(this->store().renew_lease(s, "node-a/1", ttl));
  ASSERT_TRUE(late) << "ours, expired but not taken";
  EXPECT_EQ(late->expires_at, this->clock_.now() + ttl);
  this->clock_.advance(ttl);
  ASSERT_TRUE(this->run(this->store().claim_lease(s, "node-b/1", ttl)));
  auto lost = this->run(this->store().renew_lease(s, "node-a/1", ttl));
  ASSERT_FALSE(lost);
  EXPECT_EQ(lost.error(), store_errc::lease_held);
  this->clock_.advance(ttl);
  lost = this->run(this->store().renew_lease(s, "node-a/1", ttl));
  ASSERT_FALSE(lost);
  EXPECT_EQ(lost.error(), store_errc::lease_lost) << "foreign and expired";
  auto none = this->run(this->store().renew_lease(this->new_session(), "node-a/1", ttl));
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error(), store_errc::lease_lost);
}

TYPED_TEST(leases, release_expires_our_lease_now) {
  this->open();
  const auto s = this->new_session();
  ASSERT_TRUE(this->run(this->store().claim_lease(s, "node-a/1", ttl)));
  ASSERT_TRUE(this->run(this->store().release_lease(s, "node-a/1")));
  auto row = this->run(this->store().get_session(s));
  ASSERT_TRUE(row && row->lease);
  EXPECT_EQ(row->lease->expires_at, this->clock_.now());
  EXPECT_TRUE(this->run(this->store().claim_lease(s, "node-b/1", ttl))) << "free for anyone at once";
  this->clock_.advance(ttl);
  auto lost = this->run(this->store().release_lease(s, "node-a/1"));
  ASSERT_FALSE(lost);
  EXPECT_EQ(lost.error(), store_errc::lease_lost);
}

TYPED_TEST(leases, bump_attempts_needs_a_fresh_lease_of_the_caller) {
  this->open();
  const auto s = this->new_session();
  auto none = this->run(this->store().bump_attempts(s, "node-a/1"));
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error(), store_errc::lease_lost);
  ASSERT_TRUE(this->run(this->store().claim_lease(s, "node-b/1", ttl)));
  auto held = this->run(this->store().bump_attempts(s, "node-a/1"));
  ASSERT_FALSE(held);
  EXPECT_EQ(held.error(), store_errc::lease_held);
  this->clock_.advance(ttl);
  auto expired = this->run(this->store().bump_attempts(s, "node-b/1"));
  ASSERT_FALSE(expired);
  EXPECT_EQ(expired.error(), store_errc::lease_lost);
}

TYPED_TEST(leases, execution_finished_resets_the_attempt_count) {
  this->open();
  const auto s = this->new_session();
  const auto e = execution_id::generate();
  ASSERT_TRUE(this->append(s, {started(e)}));
  ASSERT_TRUE(this->run(this->store().claim_lease(s, "node-a/1", ttl)));
  ASSERT_TRUE(this->run(this->store().bump_attempts(s, "node-a/1")));
  ASSERT_TRUE(this->append(s, {finished(e)}));
  auto row = this->run(this->store().get_session(s));
  ASSERT_TRUE(row && row->lease);
  EXPECT_EQ(row->lease->attempts, 0);
}

TYPED_TEST(leases, expire_owned_expires_every_fresh_lease_of_one_owner) {
  this->open();
  const auto a = this->new_session();
  const auto b = this->new_session();
  const auto c = this->new_session();
  ASSERT_TRUE(this->run(this->store().claim_lease(a, "node-a/1", ttl)));
  ASSERT_TRUE(this->run(this->store().claim_lease(b, "node-a/1", ttl)));
  ASSERT_TRUE(this->run(this->store().claim_lease(c, "node-b/1", ttl)));
  auto n = this->run(this->store().expire_owned_leases("node-a/1"));
  ASSERT_TRUE(n) << why(n);
  EXPECT_EQ(*n, 2U);
  EXPECT_TRUE(this->run(this->store().claim_lease(a, "node-c/1", ttl)));
  auto still = this->run(this->store().claim_lease(c, "node-c/1", ttl));
  ASSERT_FALSE(still);
  EXPECT_EQ(still.error(), store_errc::lease_held);
}

TYPED_TEST(leases, a_non_positive_ttl_is_rejected) {
  this->open();
  const auto s = this->new_session();
  auto r = this->run(this->store().claim_lease(s, "node-a/1", 0));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::rejected);
}

template <class F>
class abandoned : public store_test<F> {};
TYPED_TEST_SUITE(abandoned, backends, backend_names);

TYPED_TEST(abandoned, lists_open_executions_without_a_live_owner_in_session_order) {
  this->open();
  std::vector<session_id> s;
  s.reserve(7);
  for (int i = 0; i < 7; ++i) s.push_back(this->new_session());
  std::sort(s.begin(), s.end());
  std::vector<execution_id> e;
  e.reserve(7);
  for (int i = 0; i < 7; ++i) e.push_back(execution_id::generate());
  // 0: open, no lease                    -> abandoned
  ASSERT_TRUE(this->append(s[0], {started(e[0])}));
  // 1: open, expired foreign lease       -> abandoned
  ASSERT_TRUE(this->append(s[1], {started(e[1])}));
  ASSERT_TRUE(this->run(this->store().claim_lease(s[1], "node-b/1", ttl)));
  this->clock_.advance(2 * ttl);  // the store's clock: that lease has expired, the ones below are fresh
  // 2: open, fresh lease of our previous incarnation -> abandoned
  ASSERT_TRUE(this->append(s[2], {started(e[2])}));
  ASSERT_TRUE(this->run(this->store().claim_lease(s[2], "node-a/old", ttl)));
  // 3: open, fresh lease of our current incarnation  -> not
  ASSERT_TRUE(this->append(s[3], {started(e[3])}));
  ASSERT_TRUE(this->run(this->store().claim_lease(s[3], "node-a/new", ttl)));
  // 4: open, fresh foreign lease         -> not
  ASSERT_TRUE(this->append(s[4], {started(e[4])}));
  ASSERT_TRUE(this->run(this->store().claim_lease(s[4], "node-b/1", ttl)));
  // 5: finished, no lease                -> not
  ASSERT_TRUE(this->append(s[5], {started(e[5]), finished(e[5])}));
  // 6: open, no lease, but quarantined   -> not
  ASSERT_TRUE(this->append(s[6], {started(e[6])}));
  ASSERT_TRUE(this->run(this->store().quarantine(s[6], "undecodable")));
  // A node whose name merely starts like ours is someone else.
  const auto lookalike = this->new_session();
  ASSERT_TRUE(this->append(lookalike, {started(execution_id::generate())}));
  ASSERT_TRUE(this->run(this->store().claim_lease(lookalike, "node-ab/1", ttl)));
  const auto nested = this->new_session();
  ASSERT_TRUE(this->append(nested, {started(execution_id::generate())}));
  ASSERT_TRUE(this->run(this->store().claim_lease(nested, "node-a/sub/1", ttl)));

  auto list = this->run(this->store().list_abandoned("node-a", "node-a/new", std::nullopt, 100));
  ASSERT_TRUE(list) << why(list);
  ASSERT_EQ(list->size(), 3U);
  EXPECT_EQ((*list)[0].session, s[0]);
  EXPECT_EQ((*list)[0].execution, e[0]);
  EXPECT_FALSE((*list)[0].lease);
  EXPECT_EQ((*list)[1].session, s[1]);
  ASSERT_TRUE((*list)[1].lease);
  EXPECT_EQ((*list)[1].lease->owner, "node-b/1");
  EXPECT_EQ((*list)[2].session, s[2]);

  auto page1 = this->run(this->store().list_abandoned("node-a", "node-a/new", std::nullopt, 2));
  ASSERT_TRUE(page1);
  ASSERT_EQ(page1->size(), 2U);
  auto page2 = this->run(this->store().list_abandoned("node-a", "node-a/new", page1->back().session, 2));
  ASSERT_TRUE(page2);
  ASSERT_EQ(page2->size(), 1U);
  EXPECT_EQ((*page2)[0].session, s[2]);

  auto q = this->run(this->store().get_session(s[6]));
  ASSERT_TRUE(q);
  EXPECT_TRUE(q->quarantined);
  EXPECT_EQ(q->quarantine_reason, "undecodable");
}

TYPED_TEST(abandoned, quarantining_an_unknown_session_is_unknown_session) {
  this->open();
  auto r = this->run(this->store().quarantine(session_id::generate(), "x"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::unknown_session);
}

}  // namespace
}  // namespace tether::store::test
