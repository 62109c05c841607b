#include "env/keeper.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "env/errors.h"

namespace tether::env {

using steady = std::chrono::steady_clock;

keeper::held::held(held&& o) noexcept
    : k_(std::exchange(o.k_, nullptr)),
      key_(std::move(o.key_)),
      outcome_(o.outcome_),
      warm_(o.warm_),
      broken_(o.broken_) {}

keeper::held& keeper::held::operator=(held&& o) noexcept {
  if (this == &o) return *this;
  if (k_ != nullptr) k_->give_back(key_, broken_);
  k_ = std::exchange(o.k_, nullptr);
  key_ = std::move(o.key_);
  outcome_ = o.outcome_;
  warm_ = o.warm_;
  broken_ = o.broken_;
  return *this;
}

keeper::held::~held() {
  if (k_ != nullptr) k_->give_back(key_, broken_);
}

lease& keeper::held::get() const {
  std::lock_guard lock(k_->m_);
  return *k_->slots_.find(key_)->second.l;
}

keeper::keeper(environment& e, keeper_options o)
    : e_(e), o_(std::move(o)), expiry_([this](std::stop_token st) { expire_loop(std::move(st)); }) {}

keeper::~keeper() { stop(); }

result<std::optional<keeper::held>> keeper::take_warm(const std::string& key, std::string* lost) {
  std::unique_lock lock(m_);
  for (;;) {
    auto it = slots_.find(key);
    if (it == slots_.end()) return std::optional<held>();
    if (it->second.st == state::held || it->second.st == state::acquiring) {
      return error(env_errc::invalid, "the lease of " + key + " is held by another turn");
    }
    if (it->second.st == state::idle) break;
    cv_.wait(lock);  // being released: then the key is free
  }
  auto& s = slots_.find(key)->second;
  s.st = state::held;
  lease* l = s.l.get();
  lock.unlock();
  if (l->check()) return std::optional<held>(held(this, key, lease_outcome::resumed, true));
  // Lost while warm: released (its kind forgets it); the caller acquires again, naming it.
  lock.lock();
  auto& gone = slots_.find(key)->second;
  gone.st = state::releasing;
  auto owned = std::move(gone.l);
  lock.unlock();
  if (lost != nullptr) *lost = owned->provider_id();
  release_now(key, std::move(owned), "lost");
  return std::optional<held>();
}

result<keeper::held> keeper::take(const lease_request& request) {
  std::string lost;
  auto warm = take_warm(request.key, &lost);
  if (!warm) return warm.error();
  if (*warm) return std::move(**warm);
  lease_request r = request;
  if (!lost.empty()) r.previous = lost;
  std::unique_lock lock(m_);
  if (stopped_) return error(env_errc::invalid, "the environment " + e_.name() + " is stopping");
  if (slots_.contains(r.key)) return error(env_errc::invalid, "the lease of " + r.key + " is held by another turn");
  slots_[r.key].st = state::acquiring;
  lock.unlock();
  auto got = e_.acquire(r);
  lock.lock();
  auto it = slots_.find(r.key);
  if (!got) {
    slots_.erase(it);
    cv_.notify_all();
    return got.error();
  }
  const lease_outcome outcome = (*got)->outcome();
  it->second.l = std::move(*got);
  it->second.st = state::held;
  return held(this, r.key, outcome, false);
}

void keeper::give_back(const std::string& key, bool broken) {
  std::unique_lock lock(m_);
  auto it = slots_.find(key);
  if (it == slots_.end()) return;
  if (broken || stopped_) {
    it->second.st = state::releasing;
    auto l = std::move(it->second.l);
    lock.unlock();
    release_now(key, std::move(l), broken ? "broken" : "shutdown");
    return;
  }
  it->second.st = state::idle;
  it->second.idle_until = steady::now() + o_.keep_warm;
  ++given_back_;
  cv_.notify_all();
}

void keeper::release_now(const std::string& key, std::unique_ptr<lease> l, std::string_view reason) {
  const std::string id = l->provider_id();
  const auto released = e_.release(*l, release_mode::stop);
  l.reset();
  if (o_.on_released) o_.on_released(key, id, reason, released);
  std::lock_guard lock(m_);
  slots_.erase(key);
  cv_.notify_all();
}

void keeper::expire_loop(std::stop_token st) {
  std::unique_lock lock(m_);
  while (!st.stop_requested()) {
    auto next = steady::time_point::max();
    std::vector<std::pair<std::string, std::unique_ptr<lease>>> due;
    const auto now = steady::now();
    for (auto& [key, s] : slots_) {
      if (s.st != state::idle) continue;
      if (s.idle_until <= now) {
        s.st = state::releasing;
        due.emplace_back(key, std::move(s.l));
      } else {
        next = std::min(next, s.idle_until);
      }
    }
    if (!due.empty()) {
      lock.unlock();
      for (auto& [key, l] : due) release_now(key, std::move(l), "idle");
      lock.lock();
      continue;
    }
    // Until a lease is given back, the next one is due, or the stop.
    const auto seen = given_back_;
    if (next == steady::time_point::max()) {
      cv_.wait(lock, st, [&] { return given_back_ != seen; });
    } else {
      cv_.wait_until(lock, st, next, [&] { return given_back_ != seen; });
    }
  }
}

void keeper::stop() {
  std::vector<std::pair<std::string, std::unique_ptr<lease>>> idle;
  {
    std::lock_guard lock(m_);
    if (stopped_) return;
    stopped_ = true;
  }
  expiry_.request_stop();
  if (expiry_.joinable()) expiry_.join();
  {
    std::lock_guard lock(m_);
    for (auto& [key, s] : slots_) {
      if (s.st != state::idle) continue;
      s.st = state::releasing;
      idle.emplace_back(key, std::move(s.l));
    }
  }
  for (auto& [key, l] : idle) release_now(key, std::move(l), "shutdown");
}

std::size_t keeper::warm_count() const {
  std::lock_guard lock(m_);
  std::size_t n = 0;
  for (const auto& [key, s] : slots_) n += s.st == state::idle ? 1 : 0;
  return n;
}

}  // namespace tether::env
