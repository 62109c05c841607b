// gate: counts the coroutines a component runs, so its stop() can await
// the last of them instead of polling.
//
//   gate g(executor);
//   g.enter();  co_spawn(..., [&g] { ...; g.leave(); });   // each coroutine
//   co_await g.close_and_wait();                           // stop()
//
// enter() after close_and_wait() began returns false (the caller must not
// start the coroutine). close_and_wait() completes once the count is zero;
// it may be awaited once. Every call is thread-safe.
#pragma once

#include <cstddef>
#include <mutex>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/experimental/concurrent_channel.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace tether::http {

class gate {
 public:
  explicit gate(const boost::asio::any_io_executor& ex) : done_(ex, 1) {}

  bool enter() {
    std::lock_guard lock(mu_);
    if (closing_) return false;
    ++count_;
    return true;
  }

  void leave() {
    bool last = false;
    {
      std::lock_guard lock(mu_);
      last = --count_ == 0 && closing_;
    }
    if (last) done_.try_send(boost::system::error_code{});
  }

  boost::asio::awaitable<void> close_and_wait() {
    {
      std::lock_guard lock(mu_);
      closing_ = true;
      if (count_ == 0) co_return;
    }
    co_await done_.async_receive(boost::asio::as_tuple(boost::asio::use_awaitable));
  }

  [[nodiscard]] std::size_t count() const {
    std::lock_guard lock(mu_);
    return count_;
  }

 private:
  mutable std::mutex mu_;
  std::size_t count_ = 0;
  bool closing_ = false;
  boost::asio::experimental::concurrent_channel<void(boost::system::error_code)> done_;
};

}  // namespace tether::http
