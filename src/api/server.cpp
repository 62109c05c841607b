#include "api/server.h"

#include <malloc.h>
#include <sys/resource.h>

#include <array>
#include <atomic>
#include <charconv>
#include <chrono>
#include <exception>
#include <map>
#include <unordered_map>
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
#include "api/workspace.h"
#include "util/metrics.h"

namespace tether::api {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

namespace {

constexpr auto use_tuple = net::as_tuple(net::use_awaitable);
constexpr auto drain_timeout = std::chrono::seconds(2);
constexpr auto refusal_timeout = std::chrono::seconds(1);
constexpr std::size_t default_max_connections = 4096;
constexpr auto refusal_log_every = std::chrono::seconds(10);
constexpr std::size_t trim_threshold = 4U << 20U;  // free heap bytes worth handing back

// The API's own metrics, registered with the process's on first use.
struct api_metrics {
  metrics::gauge& connections;
  metrics::counter& refused;
  metrics::gauge& sse_queued;
};
api_metrics& am() {
  static api_metrics m{
      metrics::global().add_gauge("tether_http_connections", "Open HTTP connections (event streams included)."),
      metrics::global().add_counter("tether_http_connections_refused_total",
                                    "Connections answered 503 and closed: over the total or per-peer limit."),
      metrics::global().add_gauge("tether_sse_queued_bytes",
                                  "Bytes of SSE frames queued in the server for their clients (all streams)."),
  };
  return m;
}

// The answer to a connection over the limits: short, complete, and closing.
constexpr std::string_view refusal =
    "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
    "Connection: close\r\nServer: tether\r\nContent-Length: 82\r\n\r\n"
    "{\"error\":{\"code\":\"unavailable\",\"message\":\"too many connections; try again later\"}}";
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

// One accepted connection, on the server's strand.
struct connection {
  enum class state {
    fresh,  // no complete request yet
    idle,   // between requests on a keep-alive connection
    busy,   // a request is being handled, or an event stream runs
  };
  std::shared_ptr<beast::tcp_stream> stream;
  std::string peer;  // the remote address
  state now = state::fresh;
  bool evicted = false;  // closed to make room: answer 503 and end
};

struct server::impl : std::enable_shared_from_this<server::impl> {
  impl(const net::any_io_executor& executor, handler_context c)
      : strand(net::make_strand(executor)), acceptor(strand), trim(strand), ctx(std::move(c)) {}

  net::strand<net::any_io_executor> strand;
  tcp::acceptor acceptor;
  net::steady_timer trim;
  handler_context ctx;
  std::atomic<std::uint16_t> bound_port{0};
  bool started = false;                             // owner's calls only
  std::size_t max_total = default_max_connections;  // set by start()
  std::size_t max_per_peer = default_max_connections;
  // On the strand only.
  bool stopping = false;
  std::size_t active = 0;  // the accept loop and every connection coroutine
  std::uint64_t next_id = 0;
  std::map<std::uint64_t, std::shared_ptr<connection>> live;  // in accept order
  std::unordered_map<std::string, std::size_t> per_peer;      // live connections by address (evicted ones not counted)
  std::size_t counted = 0;                                    // live connections not evicted
  std::size_t refused_unlogged = 0;
  std::chrono::steady_clock::time_point last_refusal_log{};

  void forget(std::uint64_t id) {
    const auto it = live.find(id);
    if (it == live.end()) return;
    if (!it->second->evicted) release(*it->second);
    live.erase(it);
  }
  void release(const connection& c) {
    --counted;
    if (auto p = per_peer.find(c.peer); p != per_peer.end() && --p->second == 0) per_peer.erase(p);
  }
  // Makes room by closing the oldest connection that is waiting for a
  // request (one that never sent a complete request first), among all or
  // only `peer`'s. Connections handling a request or streaming events are
  // never closed. False when there is none.
  bool evict(const std::string* peer) {
    for (const auto want : {connection::state::fresh, connection::state::idle}) {
      for (auto& [id, c] : live) {
        if (c->evicted || c->now != want || (peer != nullptr && c->peer != *peer)) continue;
        c->evicted = true;
        release(*c);
        boost::system::error_code ignored;
        c->stream->socket().cancel(ignored);
        return true;
      }
    }
    return false;
  }
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
  ~sse_client() { am().sse_queued.sub(static_cast<std::int64_t>(queued.size())); }
  sse_client(const sse_client&) = delete;
  sse_client& operator=(const sse_client&) = delete;

  std::string queued;
  std::size_t writing = 0;  // bytes handed to the socket and not yet written
  bool dead = false;
  std::chrono::steady_clock::time_point last_write = std::chrono::steady_clock::now();

  // What this client holds in the server (tether_sse_queued_bytes adds it up).
  [[nodiscard]] std::size_t pending() const { return queued.size() + writing; }

  void end() {
    if (dead) return;
    dead = true;
    tail->close();
    wake.cancel();
    drained.cancel();
    beat.cancel();
    am().sse_queued.sub(static_cast<std::int64_t>(queued.size()));
    std::string().swap(queued);
    boost::system::error_code ignored;
    stream->socket().cancel(ignored);
  }
  void enqueue(std::string_view text) {
    if (dead) return;
    queued += text;
    am().sse_queued.add(static_cast<std::int64_t>(text.size()));
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
    c->writing = out.size();
    c->stream->expires_after(stall);  // a client that stops reading is dropped
    auto [ec, n] = co_await net::async_write(*c->stream, net::buffer(out), use_tuple);
    c->stream->expires_never();
    am().sse_queued.sub(static_cast<std::int64_t>(out.size()));
    c->writing = 0;
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

// Waits until `bytes` more fit under `cap` (a frame larger than cap waits
// for an empty queue); false once the client is gone.
net::awaitable<bool> room_for(sse_client* c, std::size_t bytes, std::size_t cap) {
  while (!c->dead && c->pending() > 0 && c->pending() + bytes > cap) {  // backpressure: wait for the socket
    c->drained.expires_at(net::steady_timer::time_point::max());
    co_await c->drained.async_wait(use_tuple);
  }
  co_return !c->dead;
}

// Frames go into the queue one at a time as room appears, so what waits for
// a slow socket stays under `cap`; the tail behind holds the rest within its
// own byte budget (it drops deltas, then re-reads durable events or lags).
net::awaitable<void> sse_pump(std::shared_ptr<sse_client> c, bool with_ids, std::size_t cap) {
  while (!c->dead) {
    if (!co_await room_for(c.get(), 1, cap)) break;
    auto items = co_await c->tail->next();
    if (!items) {
      if (items.error() == store::store_errc::lagged)
        c->enqueue("event: error\ndata: {\"code\":\"lagged\",\"message\":\"the stream fell behind; reconnect\"}\n\n");
      break;
    }
    for (auto& item : *items) {
      std::string frame = sse_frame(item, with_ids);
      { [[maybe_unused]] const auto gone = std::move(item); }  // the event's memory goes as soon as its frame exists
      if (!co_await room_for(c.get(), frame.size(), cap)) break;
      c->enqueue(frame);
    }
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

net::awaitable<void> refuse(beast::tcp_stream* stream) {
  am().refused.inc();
  metrics::http_requests_total().with("503").inc();
  stream->expires_after(refusal_timeout);
  co_await net::async_write(*stream, net::buffer(refusal), use_tuple);
}

net::awaitable<void> serve(impl_ptr self, std::shared_ptr<connection> conn, std::uint64_t id) {
  const auto& o = self->ctx.options;
  auto& stream = conn->stream;
  beast::flat_buffer buffer;
  for (;;) {
    if (self->stopping) break;
    http::request_parser<http::string_body> parser;
    parser.header_limit(header_limit);
    parser.body_limit(o.max_body_bytes);
    // A new connection must send its request soon; a kept-alive one may wait longer for its next.
    stream->expires_after(conn->now == connection::state::fresh ? o.request_timeout : o.idle_timeout);
    auto [ec, n] = co_await http::async_read(*stream, buffer, parser, use_tuple);
    if (self->stopping) break;
    if (conn->evicted) {  // closed to make room for a newer connection
      co_await refuse(stream.get());
      break;
    }
    conn->now = connection::state::busy;
    if (ec == http::error::body_limit) {
      auto too_large =
          make_error(api_errc::too_large, "the body exceeds " + std::to_string(o.max_body_bytes) + " bytes");
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
    hr.content_type = std::string(req[http::field::content_type]);
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
    conn->now = connection::state::idle;
  }
  boost::system::error_code ignored;
  stream->socket().shutdown(tcp::socket::shutdown_both, ignored);
  stream->socket().close(ignored);
  self->forget(id);
  am().connections.sub(1);
  --self->active;
}

// Answers a connection over the limits at once, without a coroutine: what
// the client already sent is read and dropped (closing with unread data
// would reset the connection before it sees the answer), the answer fits in
// an empty send buffer, and the descriptor is closed before the next accept.
void refuse_now(tcp::socket& socket) {
  boost::system::error_code ec;
  socket.non_blocking(true, ec);
  std::array<char, 4096> sink{};
  for (int i = 0; i < 16 && !ec; ++i) socket.read_some(net::buffer(sink), ec);
  ec.clear();
  net::write(socket, net::buffer(refusal), ec);
  socket.shutdown(tcp::socket::shutdown_send, ec);
  socket.close(ec);
  am().refused.inc();
  metrics::http_requests_total().with("503").inc();
}

// Whether a new connection from `peer` may be served, closing an older idle
// one to make room when a limit is reached.
bool admit(server::impl& self, const std::string& peer) {
  if (self.counted >= self.max_total && !self.evict(nullptr)) return false;
  const auto p = self.per_peer.find(peer);
  if (p != self.per_peer.end() && p->second >= self.max_per_peer && !self.evict(&peer)) return false;
  return true;
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
    const auto remote = socket.remote_endpoint(ignored);
    std::string peer = ignored ? std::string() : remote.address().to_string();
    if (!admit(*self, peer)) {
      refuse_now(socket);
      ++self->refused_unlogged;
      if (const auto now = std::chrono::steady_clock::now(); now - self->last_refusal_log >= refusal_log_every) {
        spdlog::warn("api: refused {} connection(s) over the limits ({} in total, {} per peer; latest from {})",
                     self->refused_unlogged, self->max_total, self->max_per_peer, peer);
        self->refused_unlogged = 0;
        self->last_refusal_log = now;
      }
      continue;
    }
    auto c = std::make_shared<connection>();
    c->stream = std::make_shared<beast::tcp_stream>(std::move(socket));
    c->peer = std::move(peer);
    ++self->per_peer[c->peer];
    ++self->counted;
    am().connections.add(1);
    const auto id = self->next_id++;
    self->live.emplace(id, c);
    ++self->active;
    auto conn = serve(self, std::move(c), id);
    net::co_spawn(self->strand, std::move(conn), log_failure);
  }
  --self->active;
}

// Hands freed heap memory back to the system now and then: after a burst
// (many slow readers, long transcripts) glibc keeps freed pages otherwise.
net::awaitable<void> trim_loop(impl_ptr self) {
  const auto every = self->ctx.options.trim_interval;
  for (;;) {
    self->trim.expires_after(every);
    auto [ec] = co_await self->trim.async_wait(use_tuple);
    if (ec || self->stopping) break;
    // Off the strand (it can take a while), and only when there is something to give back.
    net::post(self->strand.get_inner_executor(), [] {
      if (::mallinfo2().fordblks >= trim_threshold) ::malloc_trim(0);
    });
  }
  --self->active;
}

net::awaitable<void> shut_down(impl_ptr self) {
  self->stopping = true;
  boost::system::error_code ignored;
  self->acceptor.close(ignored);
  self->trim.cancel();
  for (auto& [id, c] : self->live) {
    c->stream->socket().cancel(ignored);
    c->stream->socket().close(ignored);
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
  c.options.workspace_roots = resolve_roots(c.options.workspace_roots);
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
      self->trim.cancel();
      for (auto& [id, c] : self->live) c->stream->socket().close(ignored);
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
  const auto& o = impl_->ctx.options;
  const std::size_t fds = descriptor_limit();
  const std::size_t reserve = o.descriptor_reserve != 0 ? o.descriptor_reserve : std::max<std::size_t>(256, fds / 4);
  const std::size_t room = fds > reserve ? fds - reserve : 1;
  impl_->max_total = std::min(o.max_connections != 0 ? o.max_connections : default_max_connections, room);
  impl_->max_per_peer = o.max_connections_per_peer != 0 ? std::min(o.max_connections_per_peer, impl_->max_total)
                                                        : std::max<std::size_t>(1, impl_->max_total / 2);
  spdlog::debug("api: at most {} connections, {} per peer ({} descriptors, {} kept in reserve)", impl_->max_total,
                impl_->max_per_peer, fds, reserve);
  am();  // the API's metrics are listed from the start
  impl_->started = true;
  impl_->active = 1;  // the accept loop; set before it can run
  auto loop = accept_loop(impl_);
  net::co_spawn(impl_->strand, std::move(loop), log_failure);
  if (o.trim_interval.count() > 0) {
    ++impl_->active;
    auto trimming = trim_loop(impl_);
    net::co_spawn(impl_->strand, std::move(trimming), log_failure);
  }
  return ok();
}

std::size_t descriptor_limit() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return 1U << 20U;
  return static_cast<std::size_t>(r.rlim_cur);
}

std::size_t raise_descriptor_limit() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
    r.rlim_cur = r.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &r);  // refused (a hard limit above the kernel's): the old one stays
  }
  return descriptor_limit();
}

net::awaitable<void> server::stop() {
  if (!impl_->started) co_return;
  auto shut = shut_down(impl_);
  co_await net::co_spawn(impl_->strand, std::move(shut), net::use_awaitable);
}

std::uint16_t server::port() const { return impl_->bound_port.load(); }

}  // namespace tether::api
