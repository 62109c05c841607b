// coordinator: one per node; serializes the work of each session and lets
// different sessions run in parallel.
//
// A *drain* is one call of the drain function: "run this session until it
// has nothing to do". The coordinator guarantees, per session:
//   - at most one drain runs at a time, on the session's own strand;
//   - wake() while a drain runs rings a doorbell: exactly one more drain
//     runs after the current one, however many wakes arrived;
//   - resume() starts a drain when idle, or joins the running one (and rings
//     the doorbell, so input admitted just before it is not missed); it
//     completes with the outcome of the last drain that did work before the
//     session went idle;
//   - interrupt() is acknowledged at once: it clears the doorbell (earlier
//     wakes belong to the interrupted work), requests stop on the running
//     drain and returns; a wake or resume that arrives while the drain is
//     still cleaning up starts a successor drain afterwards;
//   - cancelling one resume() waiter (asio cancellation of the awaiting
//     coroutine) only stops that waiter; the drain goes on;
//   - the drain loop iterates (no recursion): 20,000 self-wakes do not grow
//     the stack.
//
// State machine of one session entry:
//
//   state     event              -> state     action
//   idle      wake/resume        -> running   spawn drain loop
//   running   wake/resume        -> running   doorbell = true
//   running   interrupt          -> stopping  doorbell = false, request stop
//   stopping  wake/resume        -> stopping  doorbell = true
//   running/stopping drain ends, doorbell -> running   drain again
//   running/stopping drain ends, no doorbell -> idle   complete waiters
//
// Threads: all functions are thread-safe. stop() requests stop (reason
// shutdown) on every drain, waits for them, and refuses later work.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "session/types.h"
#include "util/result.h"

namespace tether::session {

enum class stop_reason { none, user, lease_lost, shutdown };

// Given to each drain. `stop` is requested on interrupt/lease loss/shutdown,
// and `reason()` says which.
class drain_control {
 public:
  [[nodiscard]] std::stop_token stop_token() const { return source_.get_token(); }
  [[nodiscard]] stop_reason reason() const { return reason_.load(); }
  // Requests stop for this drain with a reason (the first reason wins).
  void request_stop(stop_reason why);
  std::function<void()> wake;  // rings this session's doorbell

  // Called (on the waking thread, without the coordinator's lock) each time
  // the session is woken while this drain runs: a steer may wait. A
  // listener only posts work; nullptr removes it.
  void set_wake_listener(std::function<void()> listener);
  void woken();

 private:
  std::mutex listener_mu_;
  std::function<void()> listener_;
  std::stop_source source_;
  std::atomic<stop_reason> reason_{stop_reason::none};
};

using drain_function =
    std::function<boost::asio::awaitable<drain_outcome>(session_id, std::shared_ptr<drain_control>)>;

class coordinator {
 public:
  coordinator(boost::asio::any_io_executor executor, drain_function drain);
  ~coordinator();
  coordinator(const coordinator&) = delete;
  coordinator& operator=(const coordinator&) = delete;

  void wake(session_id s);
  boost::asio::awaitable<result<drain_outcome>> resume(session_id s);
  interrupt_ack interrupt(session_id s);
  // Completes when the session has no drain running or pending.
  boost::asio::awaitable<void> idle(session_id s);
  [[nodiscard]] bool active(const session_id& s) const;
  // resume() calls currently waiting on the session (tests, metrics).
  [[nodiscard]] std::size_t waiters(const session_id& s) const;
  // Stops every drain (reason shutdown), waits for them; later calls are refused.
  boost::asio::awaitable<void> stop();

  // Number of drains started so far (for tests and metrics).
  [[nodiscard]] std::uint64_t drains_started() const;

 private:
  struct impl;
  std::shared_ptr<impl> impl_;
};

}  // namespace tether::session
