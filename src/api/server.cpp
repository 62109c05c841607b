#include "api/server.h"

#include <array>
#include <atomic>
#include <charconv>
#include <chrono>
#include <exception>
#include <map>
#include <utility>

#include <spdlog/spdlog.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

#include "api/errors.h"
#include "api/handler.h"
#include "api/sse.h"
#include "util/fd.h"
#include "util/metrics.h"

namespace tether::api {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

namespace {

constexpr auto use_tuple = net::as_tuple(net::use_awaitable);
constexpr auto idle_timeout = std::chrono::seconds(60);
constexpr auto drain_timeout = std::chrono::seconds(2);
constexpr std::uint32_t header_limit = 16U * 1024U;

void log_failure(const std::exception_ptr& e) {
  if (!e) return;
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    spdlog::error("api: connection failed: {}", ex.what());
  }
}

result<tcp::endpoint> parse_listen(const std::string& listen) {
  const auto colon = listen.rfind(':');
  auto bad = [&] {
    return make_error(util_errc::invalid_argument, "listen address must be HOST:PORT, got '" + listen + "'");
  };
  if (colon == std::string::npos || colon == 0) return bad();
  std::string host = listen.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host == "localhost") host = "127.0.0.1";
  const std::string port_text = listen.substr(colon + 1);
  unsigned port = 0;
  const auto* end = port_text.data() + port_text.size();
  auto [p, ec] = std::from_chars(port_text.data(), end, port);
  if (ec != std::errc{} || p != end || port > 65535) return bad();
  boost::system::error_code aec;
  auto address = net::ip::make_address(host, aec);
  if (aec) return bad();
  return tcp::endpoint(address, static_cast<std::uint16_t>(port));
}

http::response<http::string_body> to_response(http_reply r, unsigned version, bool keep_alive) {
  http::response<http::string_body> res{static_cast<http::status>(r.status), version};
  res.set(http::field::content_type, r.content_type);
  res.set(http::field::server, "tether");
  res.body() = std::move(r.body);
  res.keep_alive(keep_alive);
  res.prepare_payload();
  return res;
}

}  // namespace

struct server::impl : std::enable_shared_from_this<server::impl> {
  impl(const net::any_io_executor& executor, handler_context c)
      : strand(net::make_strand(executor)), acceptor(strand), ctx(std::move(c)) {}

  net::strand<net::any_io_executor> strand;
  tcp::acceptor acceptor;
  handler_context ctx;
  std::atomic<std::uint16_t> bound_port{0};
  bool started = false;  // owner's calls only
  // On the strand only.
  bool stopping = false;
  std::size_t active = 0;  // the accept loop and every connection coroutine
  std::uint64_t next_id = 0;
  std::map<std::uint64_t, std::shared_ptr<beast::tcp_stream>> live;
};

// One SSE client's state, on the server's strand. Three coroutines feed one
// writer: the tail pump queues frames, the heartbeat queues a comment when
// nothing was written for a while, the reader notices the client leaving.
// Memory per client is bounded: the pump stops pulling from the tail while
// sse_max_buffered bytes wait for the socket (the tail then keeps its own
// bounded buffer: a session tail drops deltas and re-reads durable events
// from the store, the global tail ends as lagged), and a client whose socket
// accepts nothing for sse_stall_timeout is disconnected (it can resume with
// Last-Event-ID).
struct sse_client {
  sse_client(const net::any_io_executor& ex, std::shared_ptr<beast::tcp_stream> s, std::unique_ptr<store::event_tail> t)
      : stream(std::move(s)), tail(std::move(t)), wake(ex), drained(ex), beat(ex) {}
  std::shared_ptr<beast::tcp_stream> stream;
  std::unique_ptr<store::event_tail> tail;
  net::steady_timer wake;     // the writer waits on it; cancel() means "look again"
  net::steady_timer drained;  // the pump waits on it while the queue is full
  net::steady_timer beat;
  std::string queued;
  bool dead = false;
  std::chrono::steady_clock::time_point last_write = std::chrono::steady_clock::now();

  void end() {
    if (dead) return;
    dead = true;
    tail->close();
    wake.cancel();
    drained.cancel();
    beat.cancel();
    boost::system::error_code ignored;
    stream->socket().cancel(ignored);
  }
  void enqueue(std::string_view text) {
    if (dead) return;
    queued += text;
    wake.cancel();
  }
};

namespace {

using impl_ptr = std::shared_ptr<server::impl>;

// Reads and drops what the client still sends after a refused body, for a
// moment, so it sees the answer instead of a reset.
net::awaitable<void> drain(beast::tcp_stream* stream) {
  boost::system::error_code ignored;
  stream->socket().shutdown(tcp::socket::shutdown_send, ignored);
  stream->expires_after(drain_timeout);
  std::array<char, 16384> sink{};
  for (;;) {
    auto [ec, n] = co_await stream->async_read_some(net::buffer(sink), use_tuple);
    if (ec) co_return;
  }
}

net::awaitable<bool> write(beast::tcp_stream* stream, http_reply r, unsigned version, bool keep_alive) {
  auto res = to_response(std::move(r), version, keep_alive);
  auto [ec, n] = co_await http::async_write(*stream, res, use_tuple);
  co_return !ec;
}

constexpr int sse_socket_buffer = 256 * 1024;

net::awaitable<void> sse_writer(std::shared_ptr<sse_client> c, std::chrono::milliseconds stall) {
  while (!c->dead) {
    if (c->queued.empty()) {
      c->wake.expires_at(net::steady_timer::time_point::max());
      co_await c->wake.async_wait(use_tuple);
      continue;
    }
    std::string out;
    out.swap(c->queued);
    c->stream->expires_after(stall);  // a client that stops reading is dropped
    auto [ec, n] = co_await net::async_write(*c->stream, net::buffer(out), use_tuple);
    c->stream->expires_never();
    c->last_write = std::chrono::steady_clock::now();
    c->drained.cancel();
    if (ec == beast::error::timeout)
      spdlog::warn("api: an event stream client read nothing for {} ms; disconnecting it", stall.count());
    if (ec) c->end();
  }
}

net::awaitable<void> sse_beats(std::shared_ptr<sse_client> c, std::chrono::milliseconds every) {
  while (!c->dead) {
    c->beat.expires_after(every);
    co_await c->beat.async_wait(use_tuple);
    if (c->dead) break;
    if (std::chrono::steady_clock::now() - c->last_write >= every && c->queued.empty()) c->enqueue(sse_heartbeat);
  }
}

// Anything the client sends after its request is ignored; an end of stream
// or an error means it left.
net::awaitable<void> sse_reader(std::shared_ptr<sse_client> c) {
  std::array<char, 512> sink{};
  while (!c->dead) {
    auto [ec, n] = co_await c->stream->socket().async_read_some(net::buffer(sink), use_tuple);
    if (ec) break;
  }
  c->end();
}

net::awaitable<void> sse_pump(std::shared_ptr<sse_client> c, bool with_ids, std::size_t cap) {
  while (!c->dead) {
    while (!c->dead && c->queued.size() >= cap) {  // backpressure: wait for the socket
      c->drained.expires_at(net::steady_timer::time_point::max());
      co_await c->drained.async_wait(use_tuple);
    }
    if (c->dead) break;
    auto items = co_await c->tail->next();
    if (!items) {
      if (items.error() == store::store_errc::lagged)
        c->enqueue("event: error\ndata: {\"code\":\"lagged\",\"message\":\"the stream fell behind; reconnect\"}\n\n");
      break;
    }
    for (const auto& item : *items) c->enqueue(sse_frame(item, with_ids));
  }
  // Let the writer flush what is queued (it signals `drained` after each write), then stop everything.
  while (!c->dead && !c->queued.empty()) {
    c->drained.expires_at(net::steady_timer::time_point::max());
    co_await c->drained.async_wait(use_tuple);
  }
  c->end();
}

net::awaitable<void> stream_events(impl_ptr self, std::shared_ptr<beast::tcp_stream> stream, event_stream what,
                                   unsigned version) {
  std::unique_ptr<store::event_tail> tail = what.session ? self->ctx.store->tail(*what.session, what.after)
                                                         : self->ctx.store->tail_all(self->ctx.options.sse_tail_buffer);
  std::string head = version == 10 ? "HTTP/1.0 200 OK\r\n" : "HTTP/1.1 200 OK\r\n";
  head +=
      "Content-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n"
      "X-Accel-Buffering: no\r\nServer: tether\r\n\r\n";
  // A fixed kernel send buffer (no autotuning into megabytes): what a
  // subscriber has not read is bounded by it plus sse_max_buffered.
  boost::system::error_code ignored;
  stream->socket().set_option(net::socket_base::send_buffer_size(sse_socket_buffer), ignored);
  auto c = std::make_shared<sse_client>(self->strand, stream, std::move(tail));
  auto& subscribers = metrics::sse_subscribers();
  subscribers.add(1);
  c->enqueue(head);
  using namespace net::experimental::awaitable_operators;
  const auto& o = self->ctx.options;
  auto writer = sse_writer(c, o.sse_stall_timeout);
  auto beat = sse_beats(c, o.heartbeat);
  auto reader = sse_reader(c);
  auto pump = sse_pump(c, what.session.has_value(), o.sse_max_buffered);
  co_await (std::move(writer) && std::move(beat) && std::move(reader) && std::move(pump));
  subscribers.sub(1);
}

net::awaitable<void> serve(impl_ptr self, std::shared_ptr<beast::tcp_stream> stream, std::uint64_t id) {
  beast::flat_buffer buffer;
  for (;;) {
    if (self->stopping) break;
    http::request_parser<http::string_body> parser;
    parser.header_limit(header_limit);
    parser.body_limit(self->ctx.options.max_body_bytes);
    stream->expires_after(idle_timeout);
    auto [ec, n] = co_await http::async_read(*stream, buffer, parser, use_tuple);
    if (self->stopping) break;
    if (ec == http::error::body_limit) {
      auto too_large = make_error(api_errc::too_large,
                                  "the body exceeds " + std::to_string(self->ctx.options.max_body_bytes) + " bytes");
      auto reply = error_reply(too_large);
      if (co_await write(stream.get(), std::move(reply), parser.get().version(), false)) co_await drain(stream.get());
      break;
    }
    if (ec == http::error::end_of_stream || ec == net::error::eof || ec == beast::error::timeout ||
        ec == net::error::operation_aborted || ec == net::error::connection_reset)
      break;
    if (ec) {
      auto bad = make_error(api_errc::bad_request, "malformed HTTP request: " + ec.message());
      auto reply = error_reply(bad);
      co_await write(stream.get(), std::move(reply), 11, false);
      break;
    }
    auto req = parser.release();
    http_request hr;
    hr.method = std::string(req.method_string());
    hr.target = std::string(req.target());
    hr.authorization = std::string(req[http::field::authorization]);
    hr.accept = std::string(req[http::field::accept]);
    hr.last_event_id = std::string(req["Last-Event-ID"]);
    hr.body = std::move(req.body());
    const bool keep_alive = req.keep_alive();
    auto reply = co_await handle(&self->ctx, std::move(hr));
    if (self->stopping) break;
    metrics::http_requests_total().with(std::to_string(reply.status)).inc();
    if (reply.stream) {  // the connection becomes an event stream until either side ends it
      co_await stream_events(self, stream, *reply.stream, req.version());
      break;
    }
    if (!co_await write(stream.get(), std::move(reply), req.version(), keep_alive) || !keep_alive) break;
  }
  boost::system::error_code ignored;
  stream->socket().shutdown(tcp::socket::shutdown_both, ignored);
  stream->socket().close(ignored);
  self->live.erase(id);
  --self->active;
}

net::awaitable<void> accept_loop(impl_ptr self) {
  for (;;) {
    auto [ec, socket] = co_await self->acceptor.async_accept(use_tuple);
    if (self->stopping || !self->acceptor.is_open()) break;
    if (ec) {  // out of descriptors, …: breathe, then accept again
      spdlog::warn("api: accept failed: {}", ec.message());
      net::steady_timer pause(self->strand, std::chrono::milliseconds(50));
      co_await pause.async_wait(use_tuple);
      continue;
    }
    set_cloexec(socket.native_handle());
    boost::system::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    auto stream = std::make_shared<beast::tcp_stream>(std::move(socket));
    const auto id = self->next_id++;
    self->live.emplace(id, stream);
    ++self->active;
    auto conn = serve(self, std::move(stream), id);
    net::co_spawn(self->strand, std::move(conn), log_failure);
  }
  --self->active;
}

net::awaitable<void> shut_down(impl_ptr self) {
  self->stopping = true;
  boost::system::error_code ignored;
  self->acceptor.close(ignored);
  for (auto& [id, stream] : self->live) {
    stream->socket().cancel(ignored);
    stream->socket().close(ignored);
  }
  net::steady_timer tick(self->strand);
  while (self->active > 0) {
    tick.expires_after(std::chrono::milliseconds(2));
    co_await tick.async_wait(use_tuple);
  }
}

}  // namespace

server::server(const net::any_io_executor& executor, session::session_service& service, store::event_store& store,
               server_options options) {
  handler_context c;
  c.service = &service;
  c.store = &store;
  c.options = std::move(options);
  impl_ = std::make_shared<impl>(executor, std::move(c));
}

server::~server() {
  // The owner is expected to co_await stop(); closing here only releases the
  // port if it did not (connection coroutines keep impl alive until they end).
  if (impl_->started) {
    net::post(impl_->strand, [self = impl_] {
      self->stopping = true;
      boost::system::error_code ignored;
      self->acceptor.close(ignored);
      for (auto& [id, stream] : self->live) stream->socket().close(ignored);
    });
  }
}

result<void> server::start() {
  if (impl_->started) return make_error(util_errc::invalid_argument, "start() may be called once");
  auto ep = parse_listen(impl_->ctx.options.listen);
  if (!ep) return ep.error();
  auto& acc = impl_->acceptor;
  boost::system::error_code ec;
  auto fail = [&](const std::string& what) {
    boost::system::error_code ignored;
    acc.close(ignored);
    return make_error(api_errc::listen_failed, what + " " + impl_->ctx.options.listen + ": " + ec.message());
  };
  acc.open(ep->protocol(), ec);
  if (ec) return fail("cannot open a socket for");
  set_cloexec(acc.native_handle());
  acc.set_option(tcp::acceptor::reuse_address(true), ec);
  acc.bind(*ep, ec);
  if (ec) return fail("cannot bind");
  acc.listen(net::socket_base::max_listen_connections, ec);
  if (ec) return fail("cannot listen on");
  impl_->bound_port = acc.local_endpoint().port();
  impl_->started = true;
  impl_->active = 1;  // the accept loop; set before it can run
  auto loop = accept_loop(impl_);
  net::co_spawn(impl_->strand, std::move(loop), log_failure);
  return ok();
}

net::awaitable<void> server::stop() {
  if (!impl_->started) co_return;
  auto shut = shut_down(impl_);
  co_await net::co_spawn(impl_->strand, std::move(shut), net::use_awaitable);
}

std::uint16_t server::port() const { return impl_->bound_port.load(); }

}  // namespace tether::api
