// A turn whose events cannot be written (full disk) still ends: the runner
// retries its terminal event until the store writes again, a renewal the
// store refuses does not stop an execution whose lease still holds, and an
// execution whose end could not be written before its lease ran out is
// finished by recovery. Faults come from the store's fail_commit hook.
#include "session/service.h"

#include <atomic>

#include "session/fixture.h"
#include "store/sqlite/sqlite_store.h"

namespace tether::testing {
namespace {

using model::delivery;

class storage_failure_test : public session_fixture {
 protected:
  storage_failure_test() {
    close_store();
    store::sqlite_options o;
    o.path = (dir_ / "tether.db").string();
    o.clock = &clock_;
    o.retry_initial_ms = 1;
    o.retry_max_ms = 20;
    o.fail_commit = [this] {
      if (!fail_.load()) return false;
      refused_.fetch_add(1);
      return true;
    };
    auto s = store::open_sqlite_store(o);
    if (!s) throw std::runtime_error(s.error().describe());
    store_ = std::move(s.value());
  }
  // The hook reads members of this class: stop its users first.
  ~storage_failure_test() override {
    stop_service();
    close_store();
  }

  store::store_state state() const { return store_->health().state; }

  // Fails the store's commits until the writer has retried a few times.
  void fill_the_disk_and_wait_until_degraded() {
    fail_ = true;
    ASSERT_TRUE(eventually([&] { return state() == store::store_state::degraded; }));
    const int seen = refused_.load();
    ASSERT_TRUE(eventually([&] { return refused_.load() >= seen + 3; }));
  }

  void free_the_disk() {
    fail_ = false;
    ASSERT_TRUE(eventually([&] { return state() == store::store_state::ok; }));
  }

  std::vector<model::execution_finished> finished(const session_id& s) {
    std::vector<model::execution_finished> out;
    for (const auto& e : events(s))
      if (const auto* f = e.as<model::execution_finished>()) out.push_back(*f);
    return out;
  }

  std::atomic<bool> fail_{false};
  std::atomic<int> refused_{0};
};

TEST_F(storage_failure_test, a_turn_whose_events_cannot_be_written_ends_once_the_store_writes_again) {
  auto opts = test_options();
  opts.lease_renew_ms = 600'000;  // no renewal: the turn's own writes are the only ones
  make_service(opts);
  const auto s = new_session();
  runtime_.script({gate(), text("lost to a full disk")});
  admit(s, "go");
  ASSERT_TRUE(eventually([&] { return runtime_.arrivals() == 1; }));

  fail_ = true;
  runtime_.open_gate();  // the text's commit fails, so the turn fails, and its end cannot be written
  fill_the_disk_and_wait_until_degraded();
  EXPECT_EQ(count(s, "execution.finished"), 0U);
  EXPECT_TRUE(service_->active(s)) << "the drain gave up on the execution's end";

  free_the_disk();
  ASSERT_TRUE(eventually([&] { return count(s, "execution.finished") == 1; })) << "the execution stayed running";
  idle(s);
  const auto ends = finished(s);
  ASSERT_EQ(ends.size(), 1U);
  EXPECT_EQ(ends[0].outcome, model::outcome::failed);
  EXPECT_FALSE(ends[0].error.empty());
  EXPECT_EQ(count(s, "text.ended"), 0U) << "nothing of the failed commit was written";
  auto row = run(store_->get_session(s));
  ASSERT_TRUE(row);
  EXPECT_FALSE(row->open_execution);

  runtime_.script({text("back")});
  admit(s, "again");
  ASSERT_TRUE(eventually([&] { return count(s, "execution.finished") == 2; }));
  EXPECT_EQ(finished(s)[1].outcome, model::outcome::succeeded);
}

TEST_F(storage_failure_test, a_renewal_the_store_refuses_does_not_stop_an_execution_whose_lease_holds) {
  make_service(test_options());  // renewals every 20 ms
  const auto s = new_session();
  runtime_.script({gate(), text("done after the disk came back")});
  admit(s, "go");
  ASSERT_TRUE(eventually([&] { return runtime_.arrivals() == 1; }));

  // The turn waits at its gate: the only writes are the heartbeat's renewals.
  fill_the_disk_and_wait_until_degraded();
  free_the_disk();
  runtime_.open_gate();
  ASSERT_TRUE(eventually([&] { return count(s, "execution.finished") == 1; }));
  idle(s);
  const auto ends = finished(s);
  ASSERT_EQ(ends.size(), 1U);
  EXPECT_EQ(ends[0].outcome, model::outcome::succeeded) << ends[0].reason << " " << ends[0].error;
  EXPECT_EQ(count(s, "text.ended"), 1U);
}

TEST_F(storage_failure_test, an_end_not_written_before_the_lease_expired_is_finished_by_recovery) {
  auto opts = test_options();
  opts.lease_renew_ms = 600'000;
  make_service(opts);
  const auto s = new_session();
  runtime_.script({gate(), text("lost to a full disk")});
  admit(s, "go");
  ASSERT_TRUE(eventually([&] { return runtime_.arrivals() == 1; }));

  fail_ = true;
  runtime_.open_gate();
  fill_the_disk_and_wait_until_degraded();
  clock_.advance(opts.lease_ttl_ms + 1);  // the lease has run out: the end can no longer be written
  idle(s);
  EXPECT_EQ(count(s, "execution.finished"), 0U);

  free_the_disk();
  runtime_.script({text("finished by recovery")});
  auto report = run(service_->recover());
  ASSERT_TRUE(report) << report.error().describe();
  EXPECT_EQ(report->claimed, 1U);
  ASSERT_TRUE(eventually([&] { return count(s, "execution.finished") == 1; }));
  idle(s);
  EXPECT_EQ(finished(s)[0].outcome, model::outcome::succeeded);
  EXPECT_EQ(count(s, "execution.recovered"), 1U);
}

}  // namespace
}  // namespace tether::testing
