// A turn whose events cannot be written (full disk) goes on once the store
// writes again: the runner retries its writes while the lease holds, and the
// terminal event until the store writes again; a turn that could not wait
// that long gives its inputs back to the next execution; a renewal the store
// refuses does not stop an execution whose lease still holds, and an
// execution whose end could not be written before its lease ran out is
// finished by recovery. Faults come from the store's fail_commit hook.
#include "session/service.h"

#include <atomic>

#include "session/errors.h"
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

TEST_F(storage_failure_test, a_turn_whose_events_cannot_be_written_goes_on_once_the_store_writes_again) {
  auto opts = test_options();
  opts.lease_renew_ms = 600'000;  // no renewal: the turn's own writes are the only ones
  opts.storage_retry_ms = 1;
  opts.storage_retry_max_ms = 20;
  make_service(opts);
  const auto s = new_session();
  runtime_.script({gate(), text("written once the disk is back")});
  admit(s, "go");
  ASSERT_TRUE(eventually([&] { return runtime_.arrivals() == 1; }));

  fail_ = true;
  runtime_.open_gate();  // the text's commit fails: the runner waits for the store
  fill_the_disk_and_wait_until_degraded();
  EXPECT_EQ(count(s, "execution.finished"), 0U);
  EXPECT_TRUE(service_->active(s)) << "the drain gave up on the turn";

  free_the_disk();
  ASSERT_TRUE(eventually([&] { return count(s, "execution.finished") == 1; })) << "the execution stayed running";
  idle(s);
  const auto ends = finished(s);
  ASSERT_EQ(ends.size(), 1U);
  EXPECT_EQ(ends[0].outcome, model::outcome::succeeded) << ends[0].error;
  EXPECT_EQ(count(s, "text.ended"), 1U) << "written once";
  EXPECT_TRUE(runtime_.host_errors().empty()) << "the runtime never saw the store's failure";
  auto row = run(store_->get_session(s));
  ASSERT_TRUE(row);
  EXPECT_FALSE(row->open_execution);
}

TEST_F(storage_failure_test, a_failure_outlasting_what_the_lease_lets_a_turn_wait_gives_its_inputs_back_to_the_next_execution) {
  auto opts = test_options();
  opts.lease_renew_ms = 600'000;
  opts.storage_retry_ms = 1;
  opts.storage_retry_max_ms = 20;
  make_service(opts);
  const auto s = new_session();
  runtime_.script({gate(), text("lost to a full disk")});
  runtime_.script({text("answered by the next execution")});
  const auto in = admit(s, "go").input.id;
  ASSERT_TRUE(eventually([&] { return runtime_.arrivals() == 1; }));

  fail_ = true;
  runtime_.open_gate();
  fill_the_disk_and_wait_until_degraded();
  // What is left of the lease is kept for the execution's end: the turn
  // gives up, and the end (with the input given back) waits for the store.
  clock_.advance(opts.lease_ttl_ms - opts.storage_end_reserve_ms);
  ASSERT_TRUE(eventually([&] { return !runtime_.host_errors().empty(); })) << "the turn never gave up";
  EXPECT_EQ(runtime_.host_errors()[0], session::session_errc::storage_failed);
  EXPECT_EQ(count(s, "execution.finished"), 0U);

  free_the_disk();
  ASSERT_TRUE(eventually([&] { return count(s, "execution.finished") == 2; }));
  idle(s);
  const auto ends = finished(s);
  ASSERT_EQ(ends.size(), 2U);
  EXPECT_EQ(ends[0].outcome, model::outcome::failed);
  EXPECT_EQ(ends[1].outcome, model::outcome::succeeded);
  std::vector<model::input_returned> back;
  for (const auto& e : events(s))
    if (const auto* r = e.as<model::input_returned>()) back.push_back(*r);
  ASSERT_EQ(back.size(), 1U);
  EXPECT_EQ(back[0].input, in);
  EXPECT_EQ(back[0].execution, ends[0].execution);
  EXPECT_EQ(count(s, "text.ended"), 1U);
  auto row = run(store_->get_input(in));
  ASSERT_TRUE(row);
  EXPECT_EQ(row->status, store::input_status::promoted);
  EXPECT_EQ(row->execution, ends[1].execution) << "the next execution answered it";
  ASSERT_EQ(runtime_.contexts().size(), 2U);
  ASSERT_EQ(runtime_.contexts()[1].promoted.size(), 1U);
  EXPECT_EQ(runtime_.contexts()[1].promoted[0].id, in);
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
