// group_commit: the store's one writer, shared by every backend.
//
// Writes (appends, lease operations, quarantine) are queued by submit() when
// they are called, from any thread. One writer thread takes every request
// queued at that moment (up to max_batch) and hands them to the backend's
// batch_committer, which runs them in one transaction, each request's own
// refusal kept to itself, and commits once (one fsync for the lot). A
// completion thread then publishes the committed events to the tail hub and
// resumes every waiter on its own executor, in commit order: that work would
// otherwise cost the writer, the store's bottleneck, about a tenth of its
// time.
//
// Storage failures (event_store.h): a batch whose commit fails fails every
// request of it with write_failed and makes the store degraded. Degraded, a
// write is refused at once with storage_unavailable (those already queued
// too), and the writer asks the backend for a probe after retry_initial_ms,
// then after twice as long each time up to retry_max_ms; the first probe
// that commits makes the store ok again. A batch whose transaction could
// not even begin fails with write_failed without degrading (nothing was
// tried). The metrics tether_store_degraded, tether_store_write_failures_total
// and tether_store_commit_seconds follow it.
//
// Lifecycle: start() starts the threads; stop() refuses new writes with
// closed, commits what is queued, resumes every waiter, then returns. The
// backend and the hub must outlive stop().
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "store/async.h"
#include "store/event_store.h"
#include "store/rows.h"
#include "store/tail.h"
#include "util/clock.h"

namespace tether::store {

// One queued write. The backend runs it inside the batch's transaction
// (perhaps more than once: a request is safe to run again, it keeps its
// inputs and overwrites its outcome); then the writer calls exactly one of
// committed() (the batch committed; the request's own outcome goes to its
// waiter) or fail() (the batch did not).
class write_op {
 public:
  virtual ~write_op() = default;
  // The request's own outcome: an error is its refusal (the backend rolls
  // back its writes alone).
  virtual result<void> run(write_rows& rows) = 0;
  virtual void committed(tail_hub& hub) = 0;
  virtual void fail(const tether::error& e) = 0;
};

using write_batch = std::vector<std::unique_ptr<write_op>>;

// Why a batch did not commit. Nothing of it is written either way.
struct batch_failure {
  tether::error cause;
  // False: the transaction could not even begin; nothing was tried, and the
  // store stays ok (the callers may retry). True: the store is degraded.
  bool degrades = true;
};

// What a backend gives the writer. Called on the writer thread only.
class batch_committer {
 public:
  virtual ~batch_committer() = default;
  // Runs every op in one transaction over the backend's write_rows, each
  // op's refusal rolled back alone (the others still commit), and commits
  // once, durably. On failure nothing is written and the transaction is
  // gone.
  virtual std::optional<batch_failure> commit(write_batch& ops) = 0;
  // Degraded: one real, durable write that changes nothing (with whatever
  // the failure left behind replaced, e.g. a fresh connection). Success
  // makes the store ok again.
  virtual result<void> probe() = 0;
};

struct group_commit_options {
  std::size_t max_batch = 1024;  // write requests per commit
  int retry_initial_ms = 100;    // degraded: the first probe after this
  int retry_max_ms = 5'000;      // then twice as long each time, at most this
};

// Counters of the writer, for tests and benchmarks.
struct commit_stats {
  std::uint64_t commits = 0;        // successful group commits
  std::uint64_t requests = 0;       // write requests in those commits (rejected ones included)
  std::uint64_t largest_batch = 0;  // most requests in one commit
  std::uint64_t writer_cpu_us = 0;  // CPU time the writer thread spent committing
};

namespace detail {

// A write's outcome on its way to whoever awaits it, or to nobody: writes are
// queued when they are called, not when they are awaited, so a caller may
// drop the awaitable of a write it need not wait for and the write still
// happens, in order.
template <class T>
class write_slot {
 public:
  void deliver(result<T> v) {
    std::unique_lock lock(mu_);
    if (!waiter_) {
      value_.emplace(std::move(v));
      return;
    }
    auto w = std::move(waiter_);
    lock.unlock();
    w(std::move(v));
  }
  void await(completion<result<T>> done) {
    std::unique_lock lock(mu_);
    if (!value_) {
      waiter_ = std::move(done);
      return;
    }
    auto v = std::move(*value_);
    lock.unlock();
    done(std::move(v));
  }

 private:
  std::mutex mu_;
  std::optional<result<T>> value_;
  completion<result<T>> waiter_;
};

tether::error unexpected_failure(const std::exception& e);

template <class T, class Fn>
class typed_write final : public write_op {
 public:
  typed_write(Fn fn, std::shared_ptr<write_slot<T>> done, std::function<void()> settled)
      : fn_(std::move(fn)), done_(std::move(done)), settled_(std::move(settled)) {}
  ~typed_write() override { settle(); }  // dropped unrun (it should not be): what waits on it goes on

  result<void> run(write_rows& rows) override {
    try {
      out_.emplace(fn_(rows));
    } catch (const std::exception& e) {
      out_.emplace(unexpected_failure(e));
    }
    if (!*out_) return out_->error();
    return ok();
  }
  void committed(tail_hub& hub) override {
    if constexpr (std::is_same_v<T, append_result>) {
      if (*out_) hub.publish_durable((*out_)->events);
    }
    settle();
    done_->deliver(std::move(*out_));
  }
  void fail(const tether::error& e) override {
    settle();
    done_->deliver(result<T>(e));
  }

 private:
  void settle() {
    if (auto s = std::exchange(settled_, nullptr)) s();
  }

  Fn fn_;
  std::shared_ptr<write_slot<T>> done_;
  std::function<void()> settled_;
  std::optional<result<T>> out_;
};

class completer;

}  // namespace detail

class group_commit {
 public:
  // `clock` dates a degradation (store_health::since).
  group_commit(batch_committer& backend, std::shared_ptr<tail_hub> hub, const tether::clock& clock,
               group_commit_options options);
  ~group_commit();
  group_commit(const group_commit&) = delete;
  group_commit& operator=(const group_commit&) = delete;

  void start();
  // Idempotent.
  void stop();

  // Queues `fn` (result<T>(write_rows&)) now; the awaitable waits for its
  // outcome, delivered after the commit that holds it is durable (or the
  // error that refused it: closed, storage_unavailable, write_failed).
  // `settled`, if given, is called exactly once, just before the outcome is
  // delivered (after a committed append's events reached the hub), whether
  // the write committed, was refused or failed.
  template <class T, class Fn>
  task<result<T>> submit(Fn fn, std::function<void()> settled = {}) {
    auto slot = std::make_shared<detail::write_slot<T>>();
    // A refused op is destroyed unrun, which settles it.
    if (auto refused = enqueue(std::make_unique<detail::typed_write<T, Fn>>(std::move(fn), slot, std::move(settled))))
      slot->deliver(result<T>(std::move(*refused)));
    return async_op<result<T>>([slot](completion<result<T>> done) { slot->await(std::move(done)); });
  }

  [[nodiscard]] store_health health() const;
  [[nodiscard]] commit_stats stats() const;

 private:
  struct degradation {
    std::string reason;
    time_ms since = 0;
  };

  // Why the op was refused, if it was (it is dropped then).
  std::optional<tether::error> enqueue(std::unique_ptr<write_op> op);
  void writer_loop();
  void commit(write_batch& ops);
  void degrade(write_batch& ops, std::chrono::steady_clock::time_point started, const tether::error& cause);
  bool recover();
  static tether::error unavailable(const degradation& d);

  batch_committer& backend_;
  std::shared_ptr<tail_hub> hub_;
  const tether::clock& clock_;
  const group_commit_options options_;

  mutable std::mutex mu_;  // the queue and the degradation
  std::condition_variable cv_;
  std::deque<std::unique_ptr<write_op>> queue_;
  bool stopping_ = false;
  std::optional<degradation> degraded_;
  std::unique_ptr<detail::completer> completer_;
  std::thread writer_;

  std::mutex stop_mu_;
  bool stopped_ = false;

  std::atomic<std::uint64_t> commits_{0};
  std::atomic<std::uint64_t> requests_{0};
  std::atomic<std::uint64_t> largest_batch_{0};
  std::atomic<std::uint64_t> writer_cpu_ns_{0};
};

}  // namespace tether::store
