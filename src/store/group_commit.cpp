#include "store/group_commit.h"

#include <pthread.h>

#include <algorithm>
#include <ctime>

#include <spdlog/spdlog.h>

#include "util/metrics.h"

namespace tether::store {

namespace detail {

tether::error unexpected_failure(const std::exception& e) {
  return {store_errc::rejected, std::string("unexpected failure: ") + e.what()};
}

// Hands committed batches to their waiters on a thread of its own, in commit
// order: publishing to tails, posting each waiter's handler (a futex wake per
// idle io thread) and freeing the requests would otherwise cost the writer.
class completer {
 public:
  explicit completer(std::shared_ptr<tail_hub> hub)
      : hub_(std::move(hub)), thread_([this] {
          pthread_setname_np(pthread_self(), "store-complete");
          loop();
        }) {}
  ~completer() { stop(); }
  completer(const completer&) = delete;
  completer& operator=(const completer&) = delete;

  void push(write_batch committed) {
    {
      std::lock_guard lock(mu_);
      queue_.push_back(std::move(committed));
    }
    cv_.notify_one();
  }

  // Completes everything pushed so far, then ends the thread. Idempotent.
  void stop() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_one();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void loop() {
    for (;;) {
      std::deque<write_batch> ready;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;
        ready.swap(queue_);
      }
      for (auto& ops : ready)
        for (auto& op : ops) op->committed(*hub_);
    }
  }

  std::shared_ptr<tail_hub> hub_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<write_batch> queue_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts after the members it uses
};

}  // namespace detail

namespace {

tether::error closed_error() { return {store_errc::closed, "the store is stopped"}; }

std::uint64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000U + static_cast<std::uint64_t>(ts.tv_nsec);
}

// Observed before any caller hears of the commit, so a caller that reads the
// metric after its write sees that write's commit counted.
void observe_commit(std::chrono::steady_clock::time_point started) {
  metrics::store_commit_seconds().observe(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
}

}  // namespace

group_commit::group_commit(batch_committer& backend, std::shared_ptr<tail_hub> hub, const tether::clock& clock,
                           group_commit_options options)
    : backend_(backend), hub_(std::move(hub)), clock_(clock), options_(options) {}

group_commit::~group_commit() { stop(); }

void group_commit::start() {
  completer_ = std::make_unique<detail::completer>(hub_);
  writer_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "store-writer");  // names it in top, perf and gdb
    writer_loop();
  });
}

void group_commit::stop() {
  std::lock_guard stop_lock(stop_mu_);
  if (stopped_) return;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (writer_.joinable()) writer_.join();  // drains the queue first
  if (completer_) completer_->stop();      // and every commit reaches its waiter
  stopped_ = true;
}

std::optional<tether::error> group_commit::enqueue(std::unique_ptr<write_op> op) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return closed_error();
    if (degraded_) return unavailable(*degraded_);
    queue_.push_back(std::move(op));
  }
  cv_.notify_one();
  return std::nullopt;
}

store_health group_commit::health() const {
  std::lock_guard lock(mu_);
  if (!degraded_) return {};
  return {store_state::degraded, degraded_->reason, degraded_->since};
}

commit_stats group_commit::stats() const {
  return {commits_.load(), requests_.load(), largest_batch_.load(), writer_cpu_ns_.load() / 1000};
}

void group_commit::writer_loop() {
  const std::size_t max_batch = std::max<std::size_t>(options_.max_batch, 1);
  for (;;) {
    write_batch ops;
    std::optional<tether::error> refused;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty() || degraded_; });
      if (degraded_) {
        // Queued behind the failed batch, before callers could be refused at
        // the door: refused the same way, untried.
        ops.assign(std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.end()));
        queue_.clear();
        refused = unavailable(*degraded_);
      } else {
        if (queue_.empty()) return;  // stopping, and everything queued is done
        const auto n = static_cast<std::ptrdiff_t>(std::min(queue_.size(), max_batch));
        ops.assign(std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.begin() + n));
        queue_.erase(queue_.begin(), queue_.begin() + n);
      }
    }
    if (refused) {
      for (auto& op : ops) op->fail(*refused);
      if (!recover()) return;  // stopping; writes are refused, so nothing is queued
      continue;
    }
    const auto cpu0 = thread_cpu_ns();
    commit(ops);
    writer_cpu_ns_.fetch_add(thread_cpu_ns() - cpu0);
  }
}

void group_commit::commit(write_batch& ops) {
  const auto started = std::chrono::steady_clock::now();
  if (auto failed = backend_.commit(ops)) {
    if (failed->degrades) return degrade(ops, started, failed->cause);
    observe_commit(started);
    for (auto& op : ops) op->fail(failed->cause);
    return;
  }
  commits_.fetch_add(1);
  requests_.fetch_add(ops.size());
  std::uint64_t largest = largest_batch_.load();
  while (ops.size() > largest && !largest_batch_.compare_exchange_weak(largest, ops.size())) {
  }
  observe_commit(started);
  completer_->push(std::move(ops));
}

// Degraded before any caller hears, so a caller that then asks health()
// sees it.
void group_commit::degrade(write_batch& ops, std::chrono::steady_clock::time_point started,
                           const tether::error& cause) {
  const tether::error e(store_errc::write_failed, "a commit failed and nothing of it was written (" + cause.message +
                                                      "); writes are refused until a retry succeeds");
  spdlog::error("store: {}", e.message);
  metrics::store_write_failures_total().inc();
  {
    std::lock_guard lock(mu_);
    degraded_ = degradation{cause.message, clock_.now()};
  }
  metrics::store_degraded().set(1);
  observe_commit(started);
  for (auto& op : ops) op->fail(e);
}

tether::error group_commit::unavailable(const degradation& d) {
  return {store_errc::storage_unavailable,
          "the store cannot write (" + d.reason + "); it retries by itself and takes writes again once one succeeds"};
}

// Degraded: waits, then asks the backend for a probe, with backoff, until a
// probe commits (true) or the store stops (false).
bool group_commit::recover() {
  const auto first = std::chrono::milliseconds(std::max(1, options_.retry_initial_ms));
  const auto most = std::max(first, std::chrono::milliseconds(options_.retry_max_ms));
  auto delay = first;
  std::string last_reason;
  for (std::uint64_t failed = 0;; ++failed) {
    {
      std::unique_lock lock(mu_);
      if (cv_.wait_for(lock, delay, [this] { return stopping_; })) return false;
    }
    auto probed = backend_.probe();
    if (probed) {
      spdlog::info("store: writes resumed: a retry committed after {} failed retr{}", failed,
                   failed == 1 ? "y" : "ies");
      {
        std::lock_guard lock(mu_);
        degraded_.reset();
      }
      metrics::store_degraded().set(0);
      return true;
    }
    metrics::store_write_failures_total().inc();
    if (probed.error().message != last_reason) {
      last_reason = probed.error().message;
      spdlog::warn("store: still cannot write: {}; retrying every {} ms at most", last_reason, most.count());
    }
    {
      std::lock_guard lock(mu_);
      degraded_->reason = probed.error().message;
    }
    delay = std::min(delay * 2, most);
  }
}

}  // namespace tether::store
