// splice — copies bytes both ways between two connected stream sockets
// until both directions end: the model relay's Unix socket to its HTTP port,
// and `tether relay-forward`'s port inside a sandbox to that socket.
//
//   co_await splice(std::move(a), std::move(b));   // owns both; closes both at the end
//
// A direction that reaches end of file half-closes its destination (the
// peer sees the end, the other direction goes on); one that fails (reset,
// write error) closes both sockets, which ends the other direction too.
// Both sockets must be on the awaiting coroutine's executor (a strand).
#pragma once

#include <array>
#include <cstddef>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/socket_base.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

namespace tether::runtime::agent {

namespace splice_detail {

constexpr std::size_t piece_bytes = 16U << 10U;

template <class A, class B>
void close_both(A& a, B& b) {
  boost::system::error_code ignored;
  a.close(ignored);
  b.close(ignored);
}

// Both sockets live in splice()'s frame, which outlives both pumps.
template <class From, class To>
// NOLINTNEXTLINE(cppcoreguidelines-avoid-reference-coroutine-parameters)
boost::asio::awaitable<void> pump(From& from, To& to) {
  namespace net = boost::asio;
  std::array<char, piece_bytes> buf{};
  for (;;) {
    auto [ec, n] = co_await from.async_read_some(net::buffer(buf), net::as_tuple(net::use_awaitable));
    if (n > 0) {
      auto [wec, written] = co_await net::async_write(to, net::buffer(buf.data(), n), net::as_tuple(net::use_awaitable));
      (void)written;
      if (wec) {
        close_both(from, to);
        co_return;
      }
    }
    if (ec == net::error::eof) {
      boost::system::error_code ignored;
      to.shutdown(net::socket_base::shutdown_send, ignored);
      co_return;
    }
    if (ec) {
      close_both(from, to);
      co_return;
    }
  }
}

}  // namespace splice_detail

template <class A, class B>
boost::asio::awaitable<void> splice(A a, B b) {
  using namespace boost::asio::experimental::awaitable_operators;
  co_await (splice_detail::pump(a, b) && splice_detail::pump(b, a));
  splice_detail::close_both(a, b);
}

}  // namespace tether::runtime::agent
