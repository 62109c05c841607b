#include "runtime/agent/bridge/tcp_door.h"

#include <chrono>
#include <mutex>
#include <string>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include "runtime/agent/errors.h"
#include "runtime/agent/relay/splice.h"

namespace tether::runtime::agent {

namespace net = boost::asio;
using tcp = net::ip::tcp;
using local = net::local::stream_protocol;

struct tcp_door::state {
  state(net::any_io_executor e, std::filesystem::path p)
      : ex(std::move(e)), accept_strand(net::make_strand(ex)), socket(std::move(p)) {}
  net::any_io_executor ex;
  net::any_io_executor accept_strand;  // the acceptor's: its accept and its close
  std::filesystem::path socket;
  std::mutex mu;
  std::shared_ptr<tcp::acceptor> acceptor;
  std::uint16_t port = 0;
  bool closed = false;
};

namespace {

constexpr auto use_tuple = net::as_tuple(net::use_awaitable);

net::awaitable<void> lead_one(tcp::socket from, std::filesystem::path socket) {
  local::socket to(from.get_executor());
  auto [ec] = co_await to.async_connect(local::endpoint(socket.string()), use_tuple);
  if (ec) co_return;  // `from` closes with this frame: the client sees the end
  co_await splice(std::move(from), std::move(to));
}

net::awaitable<void> accept_all(std::shared_ptr<tcp_door::state> s, std::shared_ptr<tcp::acceptor> acceptor) {
  for (;;) {
    net::any_io_executor strand = net::make_strand(s->ex);
    auto [ec, socket] = co_await acceptor->async_accept(strand, use_tuple);
    if (!acceptor->is_open() || ec == net::error::operation_aborted) co_return;
    if (ec) {  // out of descriptors, a connection reset before it was taken: later
      net::steady_timer later(s->accept_strand, std::chrono::milliseconds(50));
      co_await later.async_wait(use_tuple);
      continue;
    }
    net::co_spawn(strand, lead_one(std::move(socket), s->socket), net::detached);
  }
}

}  // namespace

tcp_door::tcp_door(net::any_io_executor executor, std::filesystem::path socket)
    : s_(std::make_shared<state>(std::move(executor), std::move(socket))) {}

tcp_door::~tcp_door() { close(); }

result<std::uint16_t> tcp_door::open() {
  std::lock_guard lock(s_->mu);
  if (s_->closed) return make_error(agent_errc::listen_failed, "the tool bridge's TCP port is closed");
  if (s_->acceptor) return s_->port;
  auto acceptor = std::make_shared<tcp::acceptor>(s_->accept_strand);
  boost::system::error_code ec;
  const tcp::endpoint at(net::ip::address_v4::loopback(), 0);
  acceptor->open(at.protocol(), ec);
  if (!ec) acceptor->bind(at, ec);
  if (!ec) acceptor->listen(net::socket_base::max_listen_connections, ec);
  if (ec) return make_error(agent_errc::listen_failed, "the tool bridge's TCP port: " + ec.message());
  s_->port = acceptor->local_endpoint(ec).port();
  s_->acceptor = acceptor;
  net::co_spawn(s_->accept_strand, accept_all(s_, acceptor), net::detached);
  return s_->port;
}

void tcp_door::close() {
  std::lock_guard lock(s_->mu);
  if (s_->closed) return;
  s_->closed = true;
  if (!s_->acceptor) return;
  net::post(s_->accept_strand, [a = s_->acceptor] {
    boost::system::error_code ignored;
    a->close(ignored);
  });
}

}  // namespace tether::runtime::agent
