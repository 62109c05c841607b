// A failed commit (full disk, I/O error) degrades the store; the writer
// retries with a real commit and takes writes again once one succeeds,
// without a reopen. Faults are injected with backend_options::fail_commit,
// which the retry probes consult too.
#include "store/event_store.h"

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include "backends.h"
#include "util/metrics.h"

namespace tether::store::test {
namespace {

template <class F>
class storage_failure : public store_test<F> {};
TYPED_TEST_SUITE(storage_failure, backends, backend_names);

TYPED_TEST(storage_failure, a_failed_commit_degrades_the_store_and_a_successful_retry_ends_it_without_a_reopen) {
  std::atomic<bool> fail{false};
  std::atomic<int> refused{0};  // commits the hook failed: the batch's and the retries'
  auto o = this->options();
  o.fail_commit = [&] {
    if (!fail.load()) return false;
    refused.fetch_add(1);
    return true;
  };
  o.retry_initial_ms = 1;
  o.retry_max_ms = 10;
  this->open(std::move(o));
  const auto s = this->new_session();
  EXPECT_EQ(this->store().health().state, store_state::ok);
  const auto failures_before = metrics::store_write_failures_total().value();
  this->clock_.set(1'234'000);

  fail = true;
  auto failed = this->append(s, {notice("lost")});
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error(), store_errc::write_failed) << "the failed batch's caller hears of it";
  const auto h = this->store().health();
  EXPECT_EQ(h.state, store_state::degraded) << "degraded before the caller resumes";
  EXPECT_FALSE(h.reason.empty());
  EXPECT_EQ(h.since, 1'234'000);
  EXPECT_EQ(metrics::store_degraded().value(), 1);
  EXPECT_GT(metrics::store_write_failures_total().value(), failures_before);

  auto later = this->append(s, {notice("refused")});
  ASSERT_FALSE(later);
  EXPECT_EQ(later.error(), store_errc::storage_unavailable) << "refused at once while degraded";
  auto lease = this->run(this->store().claim_lease(s, "node-a/1", 1000));
  ASSERT_FALSE(lease);
  EXPECT_EQ(lease.error(), store_errc::storage_unavailable);
  EXPECT_EQ(this->all_events(s).size(), 1U) << "reads keep working";

  // The writer keeps trying real commits while they fail.
  const int seen = refused.load();
  ASSERT_TRUE(eventually([&] { return refused.load() >= seen + 3; })) << "no retries";
  EXPECT_EQ(this->store().health().state, store_state::degraded);

  fail = false;
  ASSERT_TRUE(eventually([&] { return this->store().health().state == store_state::ok; })) << "never recovered";
  EXPECT_EQ(metrics::store_degraded().value(), 0);
  EXPECT_TRUE(this->store().health().reason.empty());
  auto after = this->append(s, {notice("works again")});
  ASSERT_TRUE(after) << why(after);
  EXPECT_EQ(after->last_seq.value, 2) << "the failed batch left nothing behind";
  auto taken = this->run(this->store().claim_lease(s, "node-a/1", 1000));
  EXPECT_TRUE(taken) << why(taken);

  this->reopen();
  EXPECT_EQ(this->all_events(s).size(), 2U);
}

TYPED_TEST(storage_failure, writes_queued_behind_a_failed_commit_are_refused_untried) {
  commit_gate gate;
  std::atomic<bool> fail{false};
  auto o = this->options();
  o.fail_commit = [&] {
    gate.pass();
    return fail.load();
  };
  o.retry_initial_ms = 1;
  o.retry_max_ms = 10;
  this->open(std::move(o));
  const auto s = this->new_session();
  const auto other = this->new_session("another");

  // Hold the writer at the commit of `doomed`, queue `behind`, then fail the commit.
  gate.close();
  fail = true;
  auto& io = this->new_io();
  std::optional<result<append_result>> doomed;
  std::optional<result<append_result>> behind;
  auto spawn = [&io](boost::asio::awaitable<result<append_result>> aw, std::optional<result<append_result>>* out) {
    boost::asio::co_spawn(
        io,
        [](boost::asio::awaitable<result<append_result>> a, std::optional<result<append_result>>* o)
            -> boost::asio::awaitable<void> { o->emplace(co_await std::move(a)); }(std::move(aw), out),
        boost::asio::detached);
  };
  spawn(this->store().append(append_request{s, {notice("doomed")}, std::nullopt, 0}), &doomed);
  std::thread runner([&io] { io.run(); });
  gate.wait_arrivals(1);
  spawn(this->store().append(append_request{other, {notice("behind")}, std::nullopt, 0}), &behind);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // let it reach the queue
  gate.open();
  runner.join();

  ASSERT_TRUE(doomed && behind);
  ASSERT_FALSE(*doomed);
  EXPECT_EQ(doomed->error(), store_errc::write_failed);
  ASSERT_FALSE(*behind);
  EXPECT_EQ(behind->error(), store_errc::storage_unavailable) << why(*behind);
  fail = false;
  ASSERT_TRUE(eventually([&] { return this->store().health().state == store_state::ok; }));
  EXPECT_EQ(this->all_events(s).size(), 1U);
  EXPECT_EQ(this->all_events(other).size(), 1U);
}

TYPED_TEST(storage_failure, stop_while_degraded_ends_the_retries_and_refuses_writes) {
  std::atomic<bool> fail{false};
  auto o = this->options();
  o.fail_commit = [&] { return fail.load(); };
  o.retry_initial_ms = 60'000;  // the retry would come long after the test
  o.retry_max_ms = 60'000;
  this->open(std::move(o));
  const auto s = this->new_session();
  fail = true;
  ASSERT_FALSE(this->append(s, {notice("lost")}));
  const auto started = std::chrono::steady_clock::now();
  this->store().stop();
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(30)) << "stop waited for a retry";
  auto r = this->append(s, {notice("after stop")});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::closed);
}

}  // namespace
}  // namespace tether::store::test
