// The HTTP side of the scripted model: Beast over one I/O thread. Requests go
// to request_handler (handler.h); this file only reads them and writes replies.
#include "mock/server.h"

#include <atomic>
#include <charconv>
#include <chrono>
#include <exception>
#include <map>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include "mock/handler.h"
#include "util/fd.h"

namespace tether::mock {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

namespace {

constexpr auto use_tuple = net::as_tuple(net::use_awaitable);
constexpr std::uint32_t header_limit = 64U * 1024U;
// A keep-alive connection idle this long is closed; a stalled write fails.
constexpr auto idle_timeout = std::chrono::minutes(10);
constexpr auto write_timeout = std::chrono::seconds(60);
constexpr auto drain_timeout = std::chrono::seconds(2);
constexpr auto handshake_timeout = std::chrono::seconds(10);
constexpr auto tls_shutdown_timeout = std::chrono::seconds(1);
constexpr std::size_t drain_limit = 64U << 20U;

// What close_all() needs of a connection of either kind.
struct connection_base {
  virtual ~connection_base() = default;
  virtual void close() = 0;
};

// A connection over Stream: beast::tcp_stream, or beast::ssl_stream over one.
template <class Stream>
struct connection final : connection_base {
  explicit connection(tcp::socket s) : stream(std::move(s)), timer(stream.get_executor()) {}
  connection(tcp::socket s, net::ssl::context& tls) : stream(std::move(s), tls), timer(stream.get_executor()) {}
  Stream stream;
  net::steady_timer timer;  // Stream slowly

  beast::tcp_stream& lowest() { return beast::get_lowest_layer(stream); }
  void close() override {
    boost::system::error_code ignored;
    lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
    lowest().close();
    timer.cancel();
  }
};
using plain_stream = beast::tcp_stream;
using tls_stream = beast::ssl_stream<beast::tcp_stream>;
constexpr bool is_tls(const plain_stream*) { return false; }
constexpr bool is_tls(const tls_stream*) { return true; }

result<tcp::endpoint> parse_listen(const std::string& listen) {
  const auto bad = [&] {
    return error(mock_errc::invalid_listen_address, "'" + listen + "' is not HOST:PORT (e.g. 127.0.0.1:8080)");
  };
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos) return bad();
  std::string host = listen.substr(0, colon);
  const std::string port_text = listen.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host == "localhost") host = "127.0.0.1";
  std::uint16_t port = 0;
  const auto [ptr, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || ptr != port_text.data() + port_text.size()) return bad();
  boost::system::error_code aec;
  const auto address = net::ip::make_address(host, aec);
  if (aec) return bad();
  return tcp::endpoint(address, port);
}

// Beast parse errors (answered 400) as opposed to the peer going away.
bool is_parse_error(const boost::system::error_code& ec) {
  return ec.category() == http::make_error_code(http::error::bad_method).category() &&
         ec != http::error::end_of_stream && ec != http::error::partial_message;
}

void log_failure(const std::exception_ptr& e) {
  if (!e) return;
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    spdlog::error("mock-llm: connection failed: {}", x.what());
  }
}

std::string_view sv(beast::string_view s) { return {s.data(), s.size()}; }

template <class Response>
void set_common(Response& res, const http_reply& r, bool keep_alive) {
  res.version(11);
  res.result(r.status);
  if (r.status == 529) res.reason("Site Overloaded");
  res.set(http::field::server, "tether-mock");
  res.set(http::field::content_type, r.content_type);
  for (const auto& [k, v] : r.headers) res.set(k, v);
  res.keep_alive(keep_alive);
}

}  // namespace

class server::impl {
 public:
  explicit impl(server_options o) : opts_(std::move(o)), handler_(opts_.max_kept_bytes) {}
  ~impl() { stop(); }

  result<void> start();
  void stop();
  std::uint16_t port() const { return port_.load(); }
  std::string base_url() const {
    return (opts_.tls ? "https://" : "http://") + host_ + ":" + std::to_string(port());
  }
  std::vector<boost::json::value> requests(std::size_t after) const { return handler_.requests(after); }
  std::size_t kept_bytes() const { return handler_.kept_bytes(); }

 private:
  enum class state { idle, running, stopped };

  net::awaitable<void> accept_loop();
  void spawn_connection(tcp::socket socket);
  template <class Stream>
  net::awaitable<void> serve(std::shared_ptr<connection<Stream>> c, std::uint64_t id);
  // Awaited at once by serve(), which owns *c. False: close the connection.
  template <class Stream>
  net::awaitable<bool> exchange(connection<Stream>* c, beast::flat_buffer& buffer);
  template <class Stream>
  net::awaitable<bool> write_reply(connection<Stream>* c, http_reply r, bool keep_alive, bool head);
  template <class Stream>
  net::awaitable<bool> write_stream(connection<Stream>* c, http_reply r, bool keep_alive);
  // After refusing a body: stop sending and read (and drop) what the client
  // is still sending for a moment, so it sees the answer instead of a reset.
  template <class Stream>
  net::awaitable<void> drain(connection<Stream>* c);
  void close_all();

  server_options opts_;
  request_handler handler_;
  net::io_context io_{1};
  tcp::acceptor acceptor_{io_};
  std::thread thread_;
  std::atomic<std::uint16_t> port_{0};
  std::string host_ = "127.0.0.1";
  state state_ = state::idle;
  // Touched on the I/O thread only.
  bool stopping_ = false;
  std::uint64_t next_id_ = 0;
  std::map<std::uint64_t, std::weak_ptr<connection_base>> live_;
  std::shared_ptr<net::ssl::context> tls_;  // set when serving HTTPS
};

result<void> server::impl::start() {
  if (state_ != state::idle) return error(mock_errc::already_started, "start() may be called once");
  auto ep = parse_listen(opts_.listen);
  if (!ep) return ep.error();
  if (opts_.tls) {
    auto ctx = tether::http::make_server_tls_context(*opts_.tls);
    if (!ctx) return ctx.error();
    tls_ = std::move(*ctx);
  }
  if (opts_.record_file) TETHER_TRY(handler_.open_record(*opts_.record_file));
  boost::system::error_code ec;
  auto fail = [&](mock_errc code, const std::string& what) {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    return error(code, what + " " + opts_.listen + ": " + ec.message());
  };
  acceptor_.open(ep->protocol(), ec);
  if (ec) return fail(mock_errc::listen_failed, "cannot open a socket for");
  set_cloexec(acceptor_.native_handle());
  acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  acceptor_.bind(*ep, ec);
  if (ec == net::error::address_in_use) return fail(mock_errc::address_in_use, "cannot listen on");
  if (ec) return fail(mock_errc::listen_failed, "cannot bind");
  acceptor_.listen(net::socket_base::max_listen_connections, ec);
  if (ec) return fail(mock_errc::listen_failed, "cannot listen on");
  port_ = acceptor_.local_endpoint().port();
  const auto address = ep->address();
  if (address.is_unspecified())
    host_ = address.is_v6() ? "[::1]" : "127.0.0.1";
  else
    host_ = address.is_v6() ? "[" + address.to_string() + "]" : address.to_string();
  // Nothing runs io_ yet, so co_spawn cannot run the loop inline here.
  net::co_spawn(io_, accept_loop(), log_failure);
  thread_ = std::thread([this] { io_.run(); });
  state_ = state::running;
  return ok();
}

void server::impl::stop() {
  if (state_ != state::running) {
    state_ = state::stopped;
    return;
  }
  state_ = state::stopped;
  net::post(io_, [this] { close_all(); });
  if (thread_.joinable()) thread_.join();
}

void server::impl::close_all() {
  stopping_ = true;
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  for (auto& [id, weak] : live_)
    if (auto c = weak.lock()) c->close();
}

net::awaitable<void> server::impl::accept_loop() {
  for (;;) {
    auto [ec, socket] = co_await acceptor_.async_accept(use_tuple);
    if (stopping_ || !acceptor_.is_open()) co_return;
    if (ec) {  // out of descriptors, …: breathe, then accept again
      spdlog::warn("mock-llm: accept failed: {}", ec.message());
      net::steady_timer pause(io_, std::chrono::milliseconds(50));
      co_await pause.async_wait(use_tuple);
      continue;
    }
    spawn_connection(std::move(socket));
  }
}

void server::impl::spawn_connection(tcp::socket socket) {
  boost::system::error_code ignored;
  set_cloexec(socket.native_handle());
  socket.set_option(tcp::no_delay(true), ignored);  // each SSE event leaves at once
  const auto id = next_id_++;
  if (tls_) {
    auto c = std::make_shared<connection<tls_stream>>(std::move(socket), *tls_);
    live_.emplace(id, c);
    net::co_spawn(io_, serve(std::move(c), id), log_failure);
  } else {
    auto c = std::make_shared<connection<plain_stream>>(std::move(socket));
    live_.emplace(id, c);
    net::co_spawn(io_, serve(std::move(c), id), log_failure);
  }
}

template <class Stream>
net::awaitable<void> server::impl::serve(std::shared_ptr<connection<Stream>> c, std::uint64_t id) {
  bool open = true;
  if constexpr (is_tls(static_cast<Stream*>(nullptr))) {
    c->lowest().expires_after(handshake_timeout);
    auto [ec] = co_await c->stream.async_handshake(net::ssl::stream_base::server, use_tuple);
    open = !ec && !stopping_;
  }
  beast::flat_buffer buffer;
  while (open && !stopping_) open = co_await exchange(c.get(), buffer);
  if constexpr (is_tls(static_cast<Stream*>(nullptr))) {
    // close_notify, so a client keeping the connection in a pool sees a
    // clean end rather than a truncated stream.
    if (!stopping_ && c->lowest().socket().is_open()) {
      c->lowest().expires_after(tls_shutdown_timeout);
      co_await c->stream.async_shutdown(use_tuple);
    }
  }
  boost::system::error_code ignored;
  c->lowest().socket().shutdown(tcp::socket::shutdown_send, ignored);
  c->lowest().close();
  live_.erase(id);
}

// One request and its reply. False: the connection is done.
template <class Stream>
net::awaitable<bool> server::impl::exchange(connection<Stream>* c, beast::flat_buffer& buffer) {
  http::request_parser<http::string_body> parser;
  parser.header_limit(header_limit);
  parser.body_limit(opts_.max_body_bytes);
  c->lowest().expires_after(idle_timeout);
  auto [ec, n] = co_await http::async_read_header(c->stream, buffer, parser, use_tuple);
  if (ec == http::error::body_limit && !stopping_) {  // Content-Length over the limit
    auto too_large = handler_.too_large(std::string(sv(parser.get().target())), opts_.max_body_bytes);
    if (co_await write_reply(c, std::move(too_large), false, false)) co_await drain(c);
    co_return false;
  }
  if (ec) {
    if (is_parse_error(ec) && !stopping_) {
      auto bad = malformed_http(ec == http::error::header_limit ? 431 : 400, "malformed HTTP request: " + ec.message());
      co_await write_reply(c, std::move(bad), false, false);
    }
    co_return false;
  }
  const std::string target(sv(parser.get().target()));
  if (beast::iequals(parser.get()[http::field::expect], "100-continue")) {
    http::response<http::empty_body> proceed{http::status::continue_, 11};
    c->lowest().expires_after(write_timeout);
    auto [wec, wn] = co_await http::async_write(c->stream, proceed, use_tuple);
    if (wec) co_return false;
  }
  c->lowest().expires_after(idle_timeout);
  auto [bec, bn] = co_await http::async_read(c->stream, buffer, parser, use_tuple);
  if (bec) {
    if (bec == http::error::body_limit && !stopping_) {
      auto too_large = handler_.too_large(target, opts_.max_body_bytes);
      if (co_await write_reply(c, std::move(too_large), false, false)) co_await drain(c);
    }
    co_return false;
  }
  auto& req = parser.get();
  const bool head = req.method() == http::verb::head;
  auto reply = handler_.handle(sv(req.method_string()), sv(req.target()), req.body());
  const auto answered = reply.recorded_seq;
  const bool keep_alive = req.keep_alive() && !reply.close;
  const bool written = co_await write_reply(c, std::move(reply), keep_alive, head);
  handler_.mark_completed(answered);
  co_return written && keep_alive;
}

template <class Stream>
net::awaitable<bool> server::impl::write_reply(connection<Stream>* c, http_reply r, bool keep_alive, bool head) {
  if (r.disconnect && !r.streaming) {
    c->close();
    co_return false;
  }
  if (r.streaming) co_return co_await write_stream(c, std::move(r), keep_alive);
  http::response<http::string_body> res;
  set_common(res, r, keep_alive);
  if (!head) res.body() = std::move(r.body);
  res.prepare_payload();
  c->lowest().expires_after(write_timeout);
  auto [ec, n] = co_await http::async_write(c->stream, res, use_tuple);
  co_return !ec;
}

template <class Stream>
net::awaitable<bool> server::impl::write_stream(connection<Stream>* c, http_reply r, bool keep_alive) {
  http::response<http::empty_body> res;
  set_common(res, r, keep_alive);
  res.chunked(true);
  http::response_serializer<http::empty_body> serializer{res};
  c->lowest().expires_after(write_timeout);
  auto [hec, hn] = co_await http::async_write_header(c->stream, serializer, use_tuple);
  if (hec) co_return false;
  for (std::size_t i = 0; i < r.events.size(); ++i) {
    if (stopping_) co_return false;
    const auto& event = r.events[i];
    auto chunk = http::make_chunk(net::buffer(event.bytes));
    c->lowest().expires_after(write_timeout);
    auto [ec, n] = co_await net::async_write(c->stream, chunk, use_tuple);
    if (ec) co_return false;  // the client went away
    if (event.delta && r.disconnect) {
      c->close();
      co_return false;
    }
    if (event.delta && r.delta_interval.count() > 0 && i + 1 < r.events.size()) {
      c->timer.expires_after(r.delta_interval);
      auto [tec] = co_await c->timer.async_wait(use_tuple);
      if (tec || stopping_) co_return false;
    }
  }
  auto last = http::make_chunk_last();
  c->lowest().expires_after(write_timeout);
  auto [ec, n] = co_await net::async_write(c->stream, last, use_tuple);
  co_return !ec;
}

// Reads the raw bytes (TLS records or not): they are dropped unread anyway.
template <class Stream>
net::awaitable<void> server::impl::drain(connection<Stream>* c) {
  boost::system::error_code ignored;
  c->lowest().socket().shutdown(tcp::socket::shutdown_send, ignored);
  c->lowest().expires_after(drain_timeout);
  std::vector<char> sink(std::size_t{64} * 1024U);
  for (std::size_t total = 0; total < drain_limit && !stopping_;) {
    auto buffer = net::buffer(sink);
    auto [ec, n] = co_await c->lowest().async_read_some(buffer, use_tuple);
    if (ec) break;
    total += n;
  }
}

server::server(server_options o) : impl_(std::make_unique<impl>(std::move(o))) {}
server::~server() = default;
result<void> server::start() { return impl_->start(); }
void server::stop() { impl_->stop(); }
std::uint16_t server::port() const { return impl_->port(); }
std::string server::base_url() const { return impl_->base_url(); }
std::vector<boost::json::value> server::requests(std::size_t after) const { return impl_->requests(after); }

std::size_t server::kept_bytes() const { return impl_->kept_bytes(); }

}  // namespace tether::mock
