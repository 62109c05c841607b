// Test support: a store that fails chosen writes and reads the way a
// database that lost its connection fails them, and passes the rest
// through:
//   lost         the write is not done; write_failed
//   landed       the write is done, but reported write_failed (a COMMIT
//                whose answer was lost with the connection)
//   unavailable  the write is not done; storage_unavailable (a degraded store)
// and a read of pending inputs fails with read_failed. Writes that go
// through are queued when append() is called, as the store's are.
#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <vector>

#include "store/forwarding_store.h"

namespace tether::testing {

class flaky_store final : public store::forwarding_store {
 public:
  using forwarding_store::forwarding_store;
  enum class fault { lost, landed, unavailable };
  using matcher = std::function<bool(const store::append_request&)>;

  // The next `times` appends that `match` accepts fail with `f`.
  void fail_appends(matcher match, fault f, int times = 1) {
    std::lock_guard lock(mu_);
    rules_.push_back(rule{std::move(match), f, times});
  }
  // The next `times` reads of pending inputs fail.
  void fail_pending_reads(int times) {
    std::lock_guard lock(mu_);
    pending_reads_ += times;
  }
  // Faults injected so far.
  [[nodiscard]] int injected() const {
    std::lock_guard lock(mu_);
    return injected_;
  }

  store::task<result<store::append_result>> append(store::append_request req) override {
    const auto f = take(req);
    if (!f) return inner_->append(std::move(req));
    if (*f == fault::landed) return reported_failed(inner_->append(std::move(req)));
    return refused(*f == fault::lost ? store::store_errc::write_failed : store::store_errc::storage_unavailable);
  }

  store::task<result<std::vector<store::input_row>>> pending_inputs(session_id s) override {
    {
      std::lock_guard lock(mu_);
      if (pending_reads_ > 0) {
        --pending_reads_;
        ++injected_;
        return read_refused();
      }
    }
    return inner_->pending_inputs(std::move(s));
  }

  // Requests holding an event of type T.
  template <class T>
  static matcher holding() {
    return [](const store::append_request& r) {
      for (const auto& p : r.events)
        if (std::holds_alternative<T>(p)) return true;
      return false;
    };
  }
  // Requests holding a text.ended or synthetic event with this text.
  static matcher saying(std::string text) {
    return [text = std::move(text)](const store::append_request& r) {
      for (const auto& p : r.events) {
        if (const auto* t = std::get_if<model::text_ended>(&p); t != nullptr && t->text == text) return true;
        if (const auto* n = std::get_if<model::synthetic>(&p); n != nullptr && n->text == text) return true;
      }
      return false;
    };
  }

 private:
  struct rule {
    matcher match;
    fault f;
    int times;
  };

  std::optional<fault> take(const store::append_request& req) {
    std::lock_guard lock(mu_);
    for (auto& r : rules_) {
      if (r.times <= 0 || !r.match(req)) continue;
      --r.times;
      ++injected_;
      return r.f;
    }
    return std::nullopt;
  }

  static store::task<result<store::append_result>> reported_failed(store::task<result<store::append_result>> done) {
    auto r = co_await std::move(done);
    if (!r) co_return r;
    co_return make_error(store::store_errc::write_failed, "the connection was lost during COMMIT (injected)");
  }
  static store::task<result<store::append_result>> refused(store::store_errc e) {
    co_return make_error(e, "injected by flaky_store");
  }
  static store::task<result<std::vector<store::input_row>>> read_refused() {
    co_return make_error(store::store_errc::read_failed, "injected by flaky_store");
  }

  mutable std::mutex mu_;
  std::vector<rule> rules_;
  int pending_reads_ = 0;
  int injected_ = 0;
};

}  // namespace tether::testing
