// Test support: an event_store that forwards every call to another and
// counts the reads, so a test can pin how many reads an operation costs.
#pragma once

#include <atomic>

#include "store/forwarding_store.h"

namespace tether::testing {

class counting_store final : public store::forwarding_store {
 public:
  using forwarding_store::forwarding_store;

  [[nodiscard]] int reads() const { return reads_.load(); }
  void reset() { reads_ = 0; }

 protected:
  void on_read() override { ++reads_; }

 private:
  std::atomic<int> reads_{0};
};

}  // namespace tether::testing
