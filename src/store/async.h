// How a store's threads (writer, readers, tails) complete an awaitable of a
// caller running on some other executor. Shared by every backend.
//
// completion<T> holds the awaiting coroutine's handler type-erased (Boost
// 1.81 has no any_completion_handler) together with a work guard on the
// handler's associated executor; calling it posts the handler there. So a
// result computed on the writer thread resumes the caller on its own
// executor, never inline on the writer.
//
// async_op<T>(init) is an awaitable<T> that, when awaited, calls
// init(completion<T>) on the awaiting thread; init hands the completion to
// whichever thread will finish the work. Every completion must be called
// exactly once: dropping one would leave its caller suspended forever.
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace tether::store {

template <class T>
class completion {
 public:
  completion() = default;
  template <class Handler>
  requires(!std::is_same_v<std::decay_t<Handler>, completion>) explicit completion(Handler h)
      : impl_(std::make_unique<impl<Handler>>(std::move(h))) {}

  explicit operator bool() const { return impl_ != nullptr; }

  // Resumes the waiter with `value` on its executor. Consumes the completion.
  void operator()(T value) {
    auto i = std::move(impl_);
    i->complete(std::move(value));
  }

 private:
  struct base {
    virtual ~base() = default;
    virtual void complete(T value) = 0;
  };
  template <class Handler>
  struct impl final : base {
    using executor = boost::asio::associated_executor_t<Handler>;
    explicit impl(Handler h)
        : work(boost::asio::make_work_guard(boost::asio::get_associated_executor(h))), handler(std::move(h)) {}
    void complete(T value) override {
      // The work guard travels with the handler and is released on the
      // caller's executor after the handler ran: once the handler is queued
      // the caller may finish and destroy its io_context, so this thread must
      // not touch that executor's work count again.
      auto ex = boost::asio::get_associated_executor(handler);
      boost::asio::post(ex, [h = std::move(handler), v = std::move(value), w = std::move(work)]() mutable {
        std::move(h)(std::move(v));
      });
    }
    boost::asio::executor_work_guard<executor> work;
    Handler handler;
  };
  std::unique_ptr<base> impl_;
};

template <class T, class Init>
boost::asio::awaitable<T> async_op(Init init) {
  return boost::asio::async_initiate<const boost::asio::use_awaitable_t<>&, void(T)>(
      [](auto handler, Init init_fn) { std::move(init_fn)(completion<T>(std::move(handler))); },
      boost::asio::use_awaitable, std::move(init));
}

}  // namespace tether::store
