// run_sync: drives one awaitable to completion from a plain test thread.
//
//   boost::asio::io_context io;
//   auto r = run_sync(io, store->append(req));   // result<append_result>
//
// It spawns the awaitable on `io` and runs `io` on the calling thread until
// that awaitable has finished (other work on `io` runs meanwhile but is not
// waited for), then returns its value or rethrows its exception. Call it from
// one thread per io_context at a time.
#pragma once

#include <exception>
#include <optional>
#include <utility>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

namespace tether::test {

namespace detail {
template <class T>
boost::asio::awaitable<void> store_into(boost::asio::awaitable<T> aw, std::optional<T>* out) {
  out->emplace(co_await std::move(aw));
}

inline void drive(boost::asio::io_context& io, boost::asio::awaitable<void> aw) {
  bool done = false;
  std::exception_ptr failure;
  boost::asio::co_spawn(io, std::move(aw), [&done, &failure](std::exception_ptr e) {
    failure = std::move(e);
    done = true;
  });
  io.restart();
  while (!done) io.run_one();
  if (failure) std::rethrow_exception(failure);
}
}  // namespace detail

template <class T>
T run_sync(boost::asio::io_context& io, boost::asio::awaitable<T> aw) {
  std::optional<T> out;
  detail::drive(io, detail::store_into(std::move(aw), &out));
  return std::move(*out);
}

inline void run_sync(boost::asio::io_context& io, boost::asio::awaitable<void> aw) { detail::drive(io, std::move(aw)); }

}  // namespace tether::test
