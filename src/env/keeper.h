// env::keeper — the warm leases of one environment, one per key.
//
// A turn takes its key's lease and gives it back when it ends. A lease that
// is not taken again within keep_warm is released — stopped, never
// destroyed, so the next take resumes it — by the keeper's own thread. So a
// session's turns within keep_warm of each other share one lease with no
// provider call but a check() (a lease lost meanwhile is acquired again,
// naming it as previous).
//
//   env::keeper k(environment, {.keep_warm = 300s, .on_released = record});
//   auto held = k.take({.key = session, .labels = {{"session", session}}});
//   if (!held) fail the turn with held.error();
//   run the turn in held->get() …;   held->outcome(), held->warm()
//   held->broken();                   // it failed under the turn: released now, not kept
//   held.reset();                     // given back: warm for keep_warm
//   k.stop();                         // every lease released (reason "shutdown")
//
// take() blocks while the kind calls its provider: call it off the network
// threads. One holder per key: a take() of a key that is held is
// env_errc::invalid (a session runs one turn at a time). A take() of a key
// whose lease is being released waits for that release, then acquires.
//
// on_released runs after every release the keeper makes, on the thread that
// made it (the keeper's, or the one that called stop() or gave back after
// stop()), with the reason: "idle" (keep_warm passed), "broken" (given back
// broken), "lost" (its check failed when taken again) or "shutdown".
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "env/environment.h"

namespace tether::env {

struct keeper_options {
  std::chrono::milliseconds keep_warm{300'000};
  std::function<void(const std::string& key, const std::string& provider_id, std::string_view reason,
                     const result<void>& released)>
      on_released;
};

class keeper {
  enum class state { acquiring, held, idle, releasing };
  struct slot {
    std::unique_ptr<lease> l;
    state st = state::acquiring;
    std::chrono::steady_clock::time_point idle_until;
  };

 public:
  // A lease taken for one turn; given back when destroyed.
  class held {
   public:
    held(held&& o) noexcept;
    held& operator=(held&& o) noexcept;  // gives back what it held first
    held(const held&) = delete;
    ~held();
    [[nodiscard]] lease& get() const;
    lease* operator->() const { return &get(); }
    // created, resumed (also when it was warm) or replaced.
    [[nodiscard]] lease_outcome outcome() const { return outcome_; }
    // It was kept warm from an earlier take: no acquire was made.
    [[nodiscard]] bool warm() const { return warm_; }
    // It failed under its holder: released when given back, not kept warm.
    void broken() { broken_ = true; }

   private:
    friend class keeper;
    held(keeper* k, std::string key, lease_outcome o, bool warm)
        : k_(k), key_(std::move(key)), outcome_(o), warm_(warm) {}
    keeper* k_;
    std::string key_;
    lease_outcome outcome_;
    bool warm_;
    bool broken_ = false;
  };

  keeper(environment& e, keeper_options o);
  ~keeper();  // stop()
  keeper(const keeper&) = delete;
  keeper& operator=(const keeper&) = delete;

  // The key's warm lease, once its check() answered: nullopt when none is
  // kept (none was, or it was lost — released with reason "lost", and
  // `lost` is set to its provider id for the acquire's `previous`).
  result<std::optional<held>> take_warm(const std::string& key, std::string* lost = nullptr);
  // take_warm(), else the kind's acquire().
  result<held> take(const lease_request& request);
  // Releases every lease not held (reason "shutdown"); one held is released
  // when it is given back. Idempotent; blocks for the releases.
  void stop();

  // Leases kept warm now (not held, not being released).
  [[nodiscard]] std::size_t warm_count() const;
  [[nodiscard]] environment& env() const { return e_; }

 private:
  void give_back(const std::string& key, bool broken);
  void expire_loop(std::stop_token st);
  // Releases `l` (unlocked) and reports it; then the key is free again.
  void release_now(const std::string& key, std::unique_ptr<lease> l, std::string_view reason);

  environment& e_;
  keeper_options o_;
  mutable std::mutex m_;
  std::condition_variable_any cv_;
  std::map<std::string, slot, std::less<>> slots_;
  std::uint64_t given_back_ = 0;  // counts give_back()s: what the expiry thread waits for
  bool stopped_ = false;
  std::jthread expiry_;
};

}  // namespace tether::env
