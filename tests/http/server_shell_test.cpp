#include "http/server_shell.h"

#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

namespace tether::http {
namespace {

namespace net = boost::asio;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;
using namespace std::chrono_literals;

// Routes for the tests: /block holds its thread until released, /hold
// waits (without holding a thread) until released, anything else answers
// at once with its target as the body.
class test_routes final : public routes {
 public:
  net::awaitable<reply> handle(request req, request_info) override {
    const std::string target(req.target());
    if (target == "/block") {
      blocked_.set_value();
      release_block_.wait();  // holds this connection's strand and one thread of the pool
    } else if (target == "/hold") {
      auto ex = co_await net::this_coro::executor;
      {
        std::lock_guard lock(mu_);
        hold_ = std::make_shared<net::steady_timer>(ex, net::steady_timer::time_point::max());
      }
      held_.set_value();
      auto timer = hold_;
      co_await timer->async_wait(net::as_tuple(net::use_awaitable));
      hold_finished_ = true;
    }
    reply r;
    response res{bhttp::status::ok, req.version()};
    res.body() = target;
    res.keep_alive(req.keep_alive());
    res.prepare_payload();
    r.message = std::move(res);
    co_return r;
  }
  // Trusted: a head with "X-Trusted: yes"; /small takes a body of 16 bytes at most.
  head_policy inspect(const request& head, const request_info& info) override {
    if (head.target() == "/inspect-hold") {  // holds its io thread until release_inspect()
      inspecting_.set_value();
      inspect_release_.get_future().wait();
    }
    head_policy p;
    p.trusted = head["X-Trusted"] == "yes";
    if (head.target() == "/small") p.body_limit = 16;
    {
      std::lock_guard lock(mu_);
      ++heads_;
      peer_ = info.peer;
    }
    heads_seen_.notify_all();
    return p;
  }
  std::string peer() {
    std::lock_guard lock(mu_);
    return peer_;
  }
  // Until `n` heads were inspected in all.
  void wait_heads(int n) {
    std::unique_lock lock(mu_);
    heads_seen_.wait(lock, [&] { return heads_ >= n; });
  }
  response too_large(const request& head, std::size_t) override {
    response res{bhttp::status::payload_too_large, head.version()};
    res.prepare_payload();
    return res;
  }
  response malformed(unsigned status, std::string message) override {
    response res{static_cast<bhttp::status>(status), 11};
    res.body() = std::move(message);
    res.prepare_payload();
    return res;
  }

  std::promise<void> inspecting_;
  std::promise<void> inspect_release_;
  std::promise<void> blocked_;
  std::shared_future<void> release_block_;
  std::promise<void> held_;
  std::mutex mu_;
  std::shared_ptr<net::steady_timer> hold_;
  std::atomic<bool> hold_finished_{false};
  std::condition_variable heads_seen_;
  int heads_ = 0;
  std::string peer_;

  void release_hold() {
    std::lock_guard lock(mu_);
    net::post(hold_->get_executor(), [t = hold_] { t->cancel(); });
  }
};

// A blocking client connection; every read gives up after 20 s, so a bug
// fails the test instead of hanging it.
class connection {
 public:
  explicit connection(std::uint16_t port) : socket_(io_) {
    socket_.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
    timeval tv{};
    tv.tv_sec = 20;
    ::setsockopt(socket_.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  }
  void send(const std::string& target, const std::string& headers = "") {
    net::write(socket_, net::buffer("GET " + target + " HTTP/1.1\r\nHost: x\r\n" + headers + "\r\n"));
  }
  void send_raw(const std::string& bytes) { net::write(socket_, net::buffer(bytes)); }
  // The status of the next response, 0 when none arrived.
  unsigned status(std::string* body = nullptr) {
    bhttp::response<bhttp::string_body> res;
    boost::system::error_code ec;
    bhttp::read(socket_, buffer_, res, ec);
    if (ec) return 0;
    if (body != nullptr) *body = res.body();
    return res.result_int();
  }

 private:
  net::io_context io_;
  tcp::socket socket_;
  boost::beast::flat_buffer buffer_;
};

class server_shell_test : public ::testing::Test {
 protected:
  server_shell_test() {
    work_.emplace(io_.get_executor());
    for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { io_.run(); });
    routes_->release_block_ = release_.get_future().share();
    shell_ = std::make_unique<server_shell>(io_.get_executor(), shell_options{}, routes_);
    auto r = shell_->start();
    EXPECT_TRUE(r) << (r ? "" : r.error().describe());
  }
  ~server_shell_test() override {
    release();
    net::co_spawn(io_, shell_->stop(), net::use_future).get();
    work_.reset();
    for (auto& t : threads_) t.join();
  }
  void release() {
    if (!released_) release_.set_value();
    released_ = true;
  }
  // The shell again, with these limits.
  void restart(shell_options o) {
    net::co_spawn(io_, shell_->stop(), net::use_future).get();
    shell_ = std::make_unique<server_shell>(io_.get_executor(), std::move(o), routes_);
    auto r = shell_->start();
    ASSERT_TRUE(r) << (r ? "" : r.error().describe());
  }

  net::io_context io_;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work_;
  std::vector<std::thread> threads_;
  std::shared_ptr<test_routes> routes_ = std::make_shared<test_routes>();
  std::promise<void> release_;
  bool released_ = false;
  std::unique_ptr<server_shell> shell_;
};

TEST_F(server_shell_test, a_request_holding_its_connection_does_not_delay_another_connection) {
  connection slow(shell_->port());
  slow.send("/block");
  routes_->blocked_.get_future().wait();  // the route now holds its connection's strand and a thread
  connection other(shell_->port());
  other.send("/fast");
  std::string body;
  EXPECT_EQ(other.status(&body), 200U) << "answered while the first connection's request is still running";
  EXPECT_EQ(body, "/fast");
  release();
  EXPECT_EQ(slow.status(), 200U);
}

TEST_F(server_shell_test, stop_waits_for_a_request_in_flight_before_it_returns) {
  connection c(shell_->port());
  c.send("/hold");
  routes_->held_.get_future().wait();
  auto stopped = net::co_spawn(io_, shell_->stop(), net::use_future);
  EXPECT_EQ(stopped.wait_for(300ms), std::future_status::timeout) << "stop() returned with a request in flight";
  EXPECT_FALSE(routes_->hold_finished_);
  routes_->release_hold();
  stopped.get();
  EXPECT_TRUE(routes_->hold_finished_) << "the request finished before stop() returned";
  EXPECT_EQ(shell_->connections(), 0U);
}

TEST_F(server_shell_test, stop_ends_idle_keep_alive_connections) {
  connection a(shell_->port());
  connection b(shell_->port());
  a.send("/one");
  EXPECT_EQ(a.status(), 200U);
  net::co_spawn(io_, shell_->stop(), net::use_future).get();
  EXPECT_EQ(shell_->connections(), 0U);
  EXPECT_EQ(a.status(), 0U) << "the connection was closed";
  EXPECT_EQ(b.status(), 0U);
}

// A head was read, its body trickles in: such a connection is not being
// served, so a new connection at the limit evicts it (it used to count as
// busy, and a flood of slow bodies locked every client out).
TEST_F(server_shell_test, a_connection_still_sending_its_body_is_evicted_to_make_room) {
  shell_options o;
  o.max_connections = 3;
  o.max_connections_per_peer = 3;
  restart(o);
  std::vector<std::unique_ptr<connection>> slow;
  for (int i = 0; i < 3; ++i) {
    slow.push_back(std::make_unique<connection>(shell_->port()));
    slow.back()->send_raw("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nx");
  }
  routes_->wait_heads(3);
  connection next(shell_->port());
  next.send("/fast");
  std::string body;
  EXPECT_EQ(next.status(&body), 200U) << "a client got in past three slow bodies";
  EXPECT_EQ(body, "/fast");
  EXPECT_EQ(slow.front()->status(), 503U) << "the oldest slow body was evicted";
  EXPECT_EQ(routes_->peer(), "127.0.0.1") << "the routes learn the peer's address";
}

// A connection whose head the routes are inspecting has a complete head: a
// connection at the limit evicts one that has sent nothing before it. (It
// used to count as one without a head until the routes had answered, so the
// wrong one went, and a test that waited for the routes to see three heads
// could find one of them still counted as headless.)
TEST_F(server_shell_test, a_head_being_inspected_is_not_evicted_before_a_connection_without_one) {
  shell_options o;
  o.max_connections = 2;
  o.max_connections_per_peer = 2;
  restart(o);
  connection inspected(shell_->port());
  inspected.send("/inspect-hold");
  routes_->inspecting_.get_future().wait();  // its head is read; one io thread is held in inspect()
  connection silent(shell_->port());         // connects, sends nothing
  while (shell_->connections() < 2) std::this_thread::yield();
  connection next(shell_->port());
  next.send("/fast");
  EXPECT_EQ(next.status(), 200U);
  routes_->inspect_release_.set_value();
  EXPECT_EQ(inspected.status(), 200U) << "the inspected connection was kept";
  EXPECT_EQ(silent.status(), 503U) << "the connection without a head was the one evicted";
}

// Evicted while no read is pending (here: between its head and its body, the
// routes inspecting the head), a connection is refused before it reads
// again. It used to start reading its body and wait for it (or the request
// timeout) although it was no longer counted.
TEST_F(server_shell_test, a_connection_evicted_between_two_reads_is_refused_before_it_reads_again) {
  shell_options o;
  o.max_connections = 1;
  o.max_connections_per_peer = 1;
  restart(o);
  connection slow(shell_->port());
  slow.send_raw("POST /inspect-hold HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nx");
  routes_->inspecting_.get_future().wait();  // between its head and its body
  connection next(shell_->port());            // at the limit: the slow body makes room
  next.send("/fast");
  EXPECT_EQ(next.status(), 200U);
  routes_->inspect_release_.set_value();
  EXPECT_EQ(slow.status(), 503U) << "refused, not left waiting for a body nobody counts";
}

// Connections that never showed credentials go first: a flood of
// untrusted connections cannot push out a client that signed in.
TEST_F(server_shell_test, a_trusted_connection_is_evicted_after_every_untrusted_one) {
  shell_options o;
  o.max_connections = 2;
  o.max_connections_per_peer = 2;
  restart(o);
  connection trusted(shell_->port());
  trusted.send("/one", "X-Trusted: yes\r\n");
  EXPECT_EQ(trusted.status(), 200U);
  connection untrusted(shell_->port());
  untrusted.send("/two");
  EXPECT_EQ(untrusted.status(), 200U);
  // The shell marks a connection idle just after its reply is written,
  // which the client may read first.
  while (shell_->idle_connections() < 2) std::this_thread::yield();
  connection third(shell_->port());  // both idle now: the untrusted one, though newer, makes room
  third.send("/three");
  EXPECT_EQ(third.status(), 200U);
  trusted.send("/again");
  EXPECT_EQ(trusted.status(), 200U) << "the trusted connection was kept";
  untrusted.send("/gone");
  EXPECT_NE(untrusted.status(), 200U) << "the untrusted connection was the one evicted";
}

TEST_F(server_shell_test, a_route_can_take_a_smaller_body_than_the_shell) {
  connection small(shell_->port());
  small.send_raw("POST /small HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n" + std::string(100, 'x'));
  EXPECT_EQ(small.status(), 413U);
  connection other(shell_->port());
  other.send_raw("POST /other HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n" + std::string(100, 'x'));
  EXPECT_EQ(other.status(), 200U);
  connection chunked(shell_->port());
  chunked.send_raw("POST /small HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n20\r\n" +
                   std::string(32, 'x') + "\r\n0\r\n\r\n");
  EXPECT_EQ(chunked.status(), 413U);
}

TEST(server_shell_listen, malformed_addresses_are_refused_and_localhost_means_loopback) {
  for (const auto* bad : {"127.0.0.1", "nohost:80", "127.0.0.1:99999", "127.0.0.1:", ":80"})
    EXPECT_EQ(parse_listen(bad).error(), server_errc::invalid_listen_address) << bad;
  auto ep = parse_listen("localhost:8080");
  ASSERT_TRUE(ep);
  EXPECT_EQ(ep->address().to_string(), "127.0.0.1");
  EXPECT_EQ(ep->port(), 8080);
  auto v6 = parse_listen("[::1]:0");
  ASSERT_TRUE(v6);
  EXPECT_TRUE(v6->address().is_v6());
}

}  // namespace
}  // namespace tether::http
