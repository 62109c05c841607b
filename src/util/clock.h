// Wall clock behind an interface, so lease expiry and recovery can be tested
// without sleeping. Times are milliseconds since the Unix epoch (what the
// store persists).
#pragma once

#include <atomic>
#include <cstdint>

namespace tether {

using time_ms = std::int64_t;

class clock {
 public:
  virtual ~clock() = default;
  [[nodiscard]] virtual time_ms now() const = 0;
};

class system_clock final : public clock {
 public:
  [[nodiscard]] time_ms now() const override;
};

// A clock tests move by hand. Thread-safe.
class manual_clock final : public clock {
 public:
  explicit manual_clock(time_ms start = 1'700'000'000'000) : now_(start) {}
  [[nodiscard]] time_ms now() const override { return now_.load(); }
  void advance(time_ms by) { now_ += by; }
  void set(time_ms t) { now_ = t; }

 private:
  std::atomic<time_ms> now_;
};

// The process-wide real clock.
const clock& real_clock();

}  // namespace tether
