#include "session/coordinator.h"

#include <atomic>
#include <future>
#include <thread>

#include <gtest/gtest.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

namespace tether::session {
namespace {

namespace asio = boost::asio;

// What the test drain function does, shared with the test body.
struct script {
  std::atomic<int> calls{0};
  std::atomic<int> running{0};
  std::atomic<int> max_running{0};
  std::atomic<bool> release{false};       // first call blocks until released (or stopped)
  std::atomic<bool> block_all{false};     // every call blocks until released
  std::atomic<bool> cleanup_gate{false};  // a stopped drain waits for this before returning
  std::atomic<int> self_wakes{0};         // wake ourselves this many times, one per drain
  std::atomic<bool> fail_first{false};
  std::atomic<std::uintptr_t> stack_spread{0};  // largest (max - min) stack address seen on one thread
};

asio::awaitable<void> pause_ms(int ms) {
  asio::steady_timer t(co_await asio::this_coro::executor, std::chrono::milliseconds(ms));
  co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
}

asio::awaitable<drain_outcome> test_drain(std::shared_ptr<script> sc, session_id, std::shared_ptr<drain_control> c) {
  const int n = sc->calls.fetch_add(1) + 1;
  const int now = sc->running.fetch_add(1) + 1;
  int prev = sc->max_running.load();
  while (now > prev && !sc->max_running.compare_exchange_weak(prev, now)) {
  }
  {
    int marker = 0;
    const auto sp = reinterpret_cast<std::uintptr_t>(&marker);
    thread_local std::uintptr_t lo = UINTPTR_MAX;
    thread_local std::uintptr_t hi = 0;
    lo = std::min(lo, sp);
    hi = std::max(hi, sp);
    auto seen = sc->stack_spread.load();
    while (hi - lo > seen && !sc->stack_spread.compare_exchange_weak(seen, hi - lo)) {
    }
  }
  if (n == 1 || sc->block_all) {
    while (!sc->release && !c->stop_token().stop_requested()) co_await pause_ms(1);
  }
  if (c->stop_token().stop_requested()) {
    while (!sc->cleanup_gate) co_await pause_ms(1);
    sc->running.fetch_sub(1);
    co_return drain_outcome{drain_status::interrupted, std::nullopt, std::string("stopped")};
  }
  if (sc->self_wakes.load() > 0) {
    sc->self_wakes.fetch_sub(1);
    c->wake();
  }
  sc->running.fetch_sub(1);
  if (n == 1 && sc->fail_first) co_return drain_outcome{drain_status::failed, std::nullopt, std::string("boom")};
  co_return drain_outcome{drain_status::succeeded, std::nullopt, {}};
}

class coordinator_test : public ::testing::Test {
 protected:
  coordinator_test() {
    for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { io_.run(); });
    coord_ =
        std::make_unique<coordinator>(io_.get_executor(), [sc = sc_](session_id s, std::shared_ptr<drain_control> c) {
          return test_drain(sc, std::move(s), std::move(c));
        });
  }
  ~coordinator_test() override {
    sc_->release = true;
    sc_->cleanup_gate = true;
    asio::co_spawn(io_, coord_->stop(), asio::use_future).get();
    work_.reset();
    for (auto& t : threads_) t.join();
  }
  template <class T>
  std::future<T> spawn(asio::awaitable<T> a) {
    return asio::co_spawn(io_, std::move(a), asio::use_future);
  }
  void wait_idle(const session_id& s) { spawn(coord_->idle(s)).get(); }
  template <class F>
  void until(F f) {
    for (int i = 0; i < 20'000 && !f(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ASSERT_TRUE(f());
  }

  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_{io_.get_executor()};
  std::vector<std::thread> threads_;
  std::shared_ptr<script> sc_ = std::make_shared<script>();
  std::unique_ptr<coordinator> coord_;
  session_id s_ = session_id::generate();
};

TEST_F(coordinator_test, wake_while_active_causes_exactly_one_more_drain) {
  coord_->wake(s_);
  until([&] { return sc_->running == 1; });
  for (int i = 0; i < 10; ++i) coord_->wake(s_);
  sc_->release = true;
  wait_idle(s_);
  EXPECT_EQ(sc_->calls, 2);
}

TEST_F(coordinator_test, concurrent_resumes_join_one_drain) {
  std::vector<std::future<result<drain_outcome>>> waiters;
  for (int i = 0; i < 5; ++i) waiters.push_back(spawn(coord_->resume(s_)));
  until([&] { return sc_->running == 1 && coord_->waiters(s_) == 5; });
  sc_->release = true;
  for (auto& w : waiters) {
    auto r = w.get();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, drain_status::succeeded);
  }
  // The joined resumes rang the doorbell at most once: one more (empty) drain.
  EXPECT_LE(sc_->calls, 2);
  EXPECT_EQ(sc_->max_running, 1);
}

TEST_F(coordinator_test, interrupt_clears_earlier_wakes_they_belong_to_the_interrupted_work) {
  coord_->wake(s_);
  until([&] { return sc_->running == 1; });
  coord_->wake(s_);
  coord_->wake(s_);
  sc_->cleanup_gate = true;
  EXPECT_TRUE(coord_->interrupt(s_).was_active);
  wait_idle(s_);
  EXPECT_EQ(sc_->calls, 1);
}

TEST_F(coordinator_test, wake_during_interrupt_cleanup_starts_a_successor) {
  coord_->wake(s_);
  until([&] { return sc_->running == 1; });
  EXPECT_TRUE(coord_->interrupt(s_).was_active);  // acknowledged while the drain is still cleaning up
  EXPECT_TRUE(coord_->active(s_));
  coord_->wake(s_);
  sc_->cleanup_gate = true;
  wait_idle(s_);
  EXPECT_EQ(sc_->calls, 2);
}

TEST_F(coordinator_test, resume_during_interrupt_cleanup_starts_a_successor_and_gets_its_outcome) {
  coord_->wake(s_);
  until([&] { return sc_->running == 1; });
  coord_->interrupt(s_);
  auto waiter = spawn(coord_->resume(s_));
  sc_->cleanup_gate = true;
  auto r = waiter.get();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, drain_status::succeeded);
  EXPECT_EQ(sc_->calls, 2);
}

TEST_F(coordinator_test, wake_racing_a_failure_yields_exactly_one_follow_up) {
  sc_->fail_first = true;
  auto waiter = spawn(coord_->resume(s_));
  until([&] { return sc_->running == 1; });
  for (int i = 0; i < 5; ++i) coord_->wake(s_);
  sc_->release = true;
  ASSERT_TRUE(waiter.get());
  EXPECT_EQ(sc_->calls, 2);
}

TEST_F(coordinator_test, interrupting_one_joined_waiter_does_not_cancel_the_drain) {
  asio::cancellation_signal cancel_first;
  auto first =
      asio::co_spawn(io_, coord_->resume(s_), asio::bind_cancellation_slot(cancel_first.slot(), asio::use_future));
  until([&] { return sc_->running == 1; });
  auto second = spawn(coord_->resume(s_));
  asio::post(io_, [&] { cancel_first.emit(asio::cancellation_type::terminal); });
  auto r1 = first.get();
  EXPECT_FALSE(r1);  // that waiter alone stopped waiting
  EXPECT_TRUE(coord_->active(s_));
  sc_->release = true;
  auto r2 = second.get();
  ASSERT_TRUE(r2);
  EXPECT_EQ(r2->status, drain_status::succeeded);
  EXPECT_EQ(sc_->calls, 2);  // the first drain ran to its end; the joined resume added one
}

TEST_F(coordinator_test, interrupting_an_idle_session_is_a_no_op) {
  EXPECT_FALSE(coord_->interrupt(s_).was_active);
  EXPECT_FALSE(coord_->active(s_));
  EXPECT_EQ(sc_->calls, 0);
}

TEST_F(coordinator_test, different_sessions_run_concurrently) {
  sc_->block_all = true;
  const auto a = session_id::generate();
  const auto b = session_id::generate();
  coord_->wake(a);
  coord_->wake(b);
  until([&] { return sc_->running == 2; });
  sc_->release = true;
  wait_idle(a);
  wait_idle(b);
  EXPECT_EQ(sc_->max_running, 2);
}

TEST_F(coordinator_test, a_drain_that_wakes_itself_20000_times_completes_without_stack_growth) {
  sc_->release = true;
  sc_->self_wakes = 20'000;
  auto r = spawn(coord_->resume(s_)).get();
  ASSERT_TRUE(r);
  EXPECT_EQ(sc_->calls, 20'001);
  // Every drain ran at (almost) the same stack depth: no recursion.
  EXPECT_LT(sc_->stack_spread.load(), 64U * 1024U);
}

TEST_F(coordinator_test, stop_refuses_later_resumes) {
  spawn(coord_->stop()).get();
  auto r = spawn(coord_->resume(s_)).get();
  EXPECT_FALSE(r);
}

}  // namespace
}  // namespace tether::session
