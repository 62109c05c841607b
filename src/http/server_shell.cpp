#include "http/server_shell.h"

#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <exception>
#include <map>
#include <mutex>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <spdlog/spdlog.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include "http/gate.h"
#include "util/fd.h"

namespace tether::http {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = net::ip::tcp;

namespace {

constexpr auto use_tuple = net::as_tuple(net::use_awaitable);
constexpr auto drain_timeout = std::chrono::seconds(2);
constexpr std::size_t drain_limit = 64U << 20U;
constexpr auto refusal_timeout = std::chrono::seconds(1);
constexpr auto tls_shutdown_timeout = std::chrono::seconds(1);
constexpr auto accept_backoff = std::chrono::milliseconds(50);
constexpr auto refusal_log_every = std::chrono::seconds(10);
constexpr std::size_t default_max_connections = 4096;

constexpr std::string_view default_refusal =
    "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nRetry-After: 1\r\n"
    "Connection: close\r\nContent-Length: 21\r\n\r\ntoo many connections\n";

using plain_stream = beast::tcp_stream;
using tls_stream = beast::ssl_stream<beast::tcp_stream>;
template <class S>
constexpr bool is_tls = std::is_same_v<S, tls_stream>;

// Errors of a request that deserve an answer (it does not parse), as
// opposed to the peer going away or a timeout.
bool is_parse_error(const boost::system::error_code& ec) {
  return ec.category() == bhttp::make_error_code(bhttp::error::bad_method).category() &&
         ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message;
}

}  // namespace

// What the connection table holds of a connection: the accept loop and
// stop() reach a connection only through these, which post to its strand.
struct connection_base {
  enum class state {
    fresh,  // no complete request head yet
    body,   // its head is read, its body is still coming
    idle,   // between requests on a keep-alive connection
    busy,   // a request is being handled, or a stream runs
  };
  virtual ~connection_base() = default;
  virtual void interrupt_read() = 0;  // a pending request read ends (it was evicted)
  virtual void shut() = 0;            // everything ends (stop)

  // Under impl::mu.
  std::string peer;
  state now = state::fresh;
  bool trusted = false;  // it sent a head routes::inspect() trusted
  bool evicted = false;  // closed to make room: refused at its next look
};

struct server_shell::impl : std::enable_shared_from_this<server_shell::impl> {
  impl(net::any_io_executor ex, shell_options o, std::shared_ptr<routes> r)
      : executor(std::move(ex)),
        accept_strand(net::make_strand(executor)),
        acceptor(accept_strand),
        backoff(accept_strand),
        options(std::move(o)),
        routes_(std::move(r)),
        running(executor) {
    if (options.refusal.empty()) options.refusal = std::string(default_refusal);
  }

  net::any_io_executor executor;
  net::strand<net::any_io_executor> accept_strand;
  tcp::acceptor acceptor;
  net::steady_timer backoff;
  shell_options options;
  std::shared_ptr<routes> routes_;
  gate running;  // the accept loop and every connection coroutine
  std::atomic<std::uint16_t> bound_port{0};
  std::atomic<bool> stopping{false};
  std::atomic<bool> stop_called{false};
  bool started = false;  // the owner's calls only
  std::size_t max_total = default_max_connections;
  std::size_t max_per_peer = default_max_connections;

  // The connection table: what the limits need. Only here do connections meet.
  std::mutex mu;
  std::uint64_t next_id = 0;
  std::map<std::uint64_t, std::shared_ptr<connection_base>> live;  // in accept order
  std::unordered_map<std::string, std::size_t> per_peer;           // not counting evicted ones
  std::size_t counted = 0;                                         // live and not evicted
  // On the accept strand.
  std::size_t refused_unlogged = 0;
  std::chrono::steady_clock::time_point last_refusal_log{};

  void release_locked(const connection_base& c) {
    --counted;
    if (auto p = per_peer.find(c.peer); p != per_peer.end() && --p->second == 0) per_peer.erase(p);
  }
  // Makes room by evicting the oldest connection not being served, among
  // all or only `peer`'s: untrusted ones first; in each group one without a
  // complete head, then one sending its body, then an idle one.
  bool evict_locked(const std::string* peer) {
    using st = connection_base::state;
    for (const bool trusted : {false, true}) {
      for (const auto want : {st::fresh, st::body, st::idle}) {
        for (auto& [id, c] : live) {
          if (c->evicted || c->now != want || c->trusted != trusted || (peer != nullptr && c->peer != *peer))
            continue;
          c->evicted = true;
          release_locked(*c);
          c->interrupt_read();
          return true;
        }
      }
    }
    return false;
  }
  // Registers a new connection, making room if a limit is reached; false:
  // refuse it (over a limit with nobody to evict, or stopping).
  bool admit(const std::shared_ptr<connection_base>& c, std::uint64_t& id) {
    std::lock_guard lock(mu);
    if (stopping) return false;
    if (counted >= max_total && !evict_locked(nullptr)) return false;
    const auto p = per_peer.find(c->peer);
    if (p != per_peer.end() && p->second >= max_per_peer && !evict_locked(&c->peer)) return false;
    ++per_peer[c->peer];
    ++counted;
    id = next_id++;
    live.emplace(id, c);
    return true;
  }
  // The connection moves on to `to` (body: its head is read; busy: its
  // request is handled); false: it was evicted meanwhile.
  bool advance(std::uint64_t id, connection_base::state to, bool trusted = false) {
    std::lock_guard lock(mu);
    const auto it = live.find(id);
    if (it == live.end() || it->second->evicted) return false;
    it->second->now = to;
    it->second->trusted = it->second->trusted || trusted;
    return true;
  }
  // Whether it may read on: not evicted. Checked on the connection's strand
  // before each read: an eviction before the check is seen here, one after
  // it ends the read (interrupt_read shuts the receive side). Without it, a
  // connection evicted between two reads was told only after its next read.
  bool may_read(std::uint64_t id) {
    std::lock_guard lock(mu);
    const auto it = live.find(id);
    return it != live.end() && !it->second->evicted;
  }
  void end_request(std::uint64_t id) {
    std::lock_guard lock(mu);
    if (const auto it = live.find(id); it != live.end()) it->second->now = connection_base::state::idle;
  }
  void forget(std::uint64_t id) {
    std::lock_guard lock(mu);
    const auto it = live.find(id);
    if (it == live.end()) return;
    if (!it->second->evicted) release_locked(*it->second);
    live.erase(it);
  }
  // Stops accepting new connections and ends every live one.
  void shut_all() {
    std::lock_guard lock(mu);
    stopping = true;
    for (auto& [id, c] : live) c->shut();
  }

  void log_failure(const std::exception_ptr& e) const {
    if (!e) return;
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      spdlog::error("{}: connection failed: {}", options.name, ex.what());
    }
  }
};

namespace {

using impl_ptr = std::shared_ptr<server_shell::impl>;

// One accepted connection over Stream (plain TCP or TLS over it), on its own strand.
template <class Stream>
class connection final : public connection_base,
                         public stream,
                         public std::enable_shared_from_this<connection<Stream>> {
 public:
  connection(tcp::socket s, const impl_ptr& shell) requires(!is_tls<Stream>)
      : shell_(shell), strand_(s.get_executor()), s_(std::move(s)), pacer_(strand_) {}
  connection(tcp::socket s, const impl_ptr& shell) requires(is_tls<Stream>)
      : shell_(shell), strand_(s.get_executor()), s_(std::move(s), *shell->options.tls), pacer_(strand_) {}

  Stream& raw() { return s_; }
  beast::tcp_stream& lowest() { return beast::get_lowest_layer(s_); }
  beast::flat_buffer& buffer() { return buffer_; }

  // connection_base: any thread, so they post to the strand.
  // Shuts the receive side rather than cancelling: a cancel reaches only a
  // read already registered with the socket, and a composed read (Beast's)
  // may register its next socket read after this runs. A shut receive side
  // ends that read too (end of stream); the answer still goes out.
  void interrupt_read() override {
    net::post(strand_, [self = this->shared_from_this()] {
      boost::system::error_code ignored;
      self->lowest().socket().shutdown(tcp::socket::shutdown_receive, ignored);
    });
  }
  void shut() override {
    net::post(strand_, [self = this->shared_from_this()] { self->close(); });
  }

  // stream: on the strand.
  net::awaitable<boost::system::error_code> write(std::string bytes, std::chrono::milliseconds timeout) override {
    lowest().expires_after(timeout);
    auto [ec, n] = co_await net::async_write(s_, net::buffer(bytes), use_tuple);
    lowest().expires_never();
    co_return ec;
  }
  net::awaitable<boost::system::error_code> discard_input() override {
    std::array<char, 512> sink{};
    for (;;) {
      boost::system::error_code ec;
      if constexpr (is_tls<Stream>) {
        std::tie(ec, std::ignore) = co_await s_.async_read_some(net::buffer(sink), use_tuple);
      } else {  // the socket itself, so a write's timeout does not end the read
        std::tie(ec, std::ignore) = co_await lowest().socket().async_read_some(net::buffer(sink), use_tuple);
      }
      if (ec) co_return ec;
    }
  }
  net::awaitable<bool> pause(std::chrono::milliseconds d) override {
    if (closing()) co_return false;
    pacer_.expires_after(d);
    auto [ec] = co_await pacer_.async_wait(use_tuple);
    co_return !ec && !closing();
  }
  void cancel() override {
    boost::system::error_code ignored;
    lowest().socket().cancel(ignored);
  }
  void close() override {
    closed_ = true;
    boost::system::error_code ignored;
    lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
    lowest().close();
    pacer_.cancel();
  }
  void set_send_buffer(int bytes) override {
    boost::system::error_code ignored;
    lowest().socket().set_option(net::socket_base::send_buffer_size(bytes), ignored);
  }
  [[nodiscard]] bool closing() const override { return closed_ || shell_->stopping; }

 private:
  impl_ptr shell_;
  net::any_io_executor strand_;
  Stream s_;
  net::steady_timer pacer_;
  beast::flat_buffer buffer_;
  bool closed_ = false;
};

template <class Stream>
using conn_ptr = std::shared_ptr<connection<Stream>>;

// After refusing a body: stop sending and read (and drop) what the client
// still sends for a moment, so it sees the answer instead of a reset.
// Raw bytes: TLS records or not, they are dropped unread anyway.
template <class Stream>
net::awaitable<void> drain(conn_ptr<Stream> c) {
  boost::system::error_code ignored;
  c->lowest().socket().shutdown(tcp::socket::shutdown_send, ignored);
  c->lowest().expires_after(drain_timeout);
  std::vector<char> sink(std::size_t{64} * 1024U);
  for (std::size_t total = 0; total < drain_limit && !c->closing();) {
    auto [ec, n] = co_await c->lowest().async_read_some(net::buffer(sink), use_tuple);
    if (ec) break;
    total += n;
  }
}

template <class Stream>
net::awaitable<bool> write_response(conn_ptr<Stream> c, response res, std::chrono::milliseconds timeout) {
  c->lowest().expires_after(timeout);
  auto [ec, n] = co_await bhttp::async_write(c->raw(), res, use_tuple);
  co_return !ec;
}

enum class next { serve_again, close };

// The answer of a connection evicted to make room for a newer one.
template <class Stream>
net::awaitable<next> refuse_evicted(impl_ptr self, conn_ptr<Stream> c) {
  self->routes_->refused();
  co_await c->write(self->options.refusal, refusal_timeout);
  co_return next::close;
}

// One request and its reply.
template <class Stream>
net::awaitable<next> exchange(impl_ptr self, conn_ptr<Stream> c, std::uint64_t id, bool first) {
  const auto& o = self->options;
  bhttp::request_parser<bhttp::string_body> parser;
  parser.header_limit(o.header_limit);
  parser.body_limit(o.max_body_bytes);
  // A new connection must send its request soon; a kept-alive one may wait longer for its next.
  c->lowest().expires_after(first ? o.request_timeout : o.idle_timeout);
  if (!self->may_read(id)) co_return co_await refuse_evicted(self, c);
  auto [ec, n] = co_await bhttp::async_read_header(c->raw(), c->buffer(), parser, use_tuple);
  if (self->stopping) co_return next::close;
  // Its head is read: from now on it is one sending its body, also while the
  // routes inspect the head (not one without a head, which goes first).
  if (!self->advance(id, connection_base::state::body)) co_return co_await refuse_evicted(self, c);
  head_policy policy;
  if (!ec) policy = self->routes_->inspect(parser.get(), request_info{c->peer});
  const std::size_t limit = policy.body_limit != 0 ? std::min(policy.body_limit, o.max_body_bytes) : o.max_body_bytes;
  if (policy.trusted && !self->advance(id, connection_base::state::body, true))
    co_return co_await refuse_evicted(self, c);
  if (!ec && limit < o.max_body_bytes) {
    parser.body_limit(limit);
    if (parser.content_length() && *parser.content_length() > limit) ec = bhttp::error::body_limit;
  }
  if (ec == bhttp::error::body_limit) {  // Content-Length over the limit
    auto res = self->routes_->too_large(parser.get(), limit);
    res.keep_alive(false);
    if (co_await write_response(c, std::move(res), o.write_timeout)) co_await drain(c);
    co_return next::close;
  }
  if (ec) {
    if (is_parse_error(ec)) {
      const unsigned status = ec == bhttp::error::header_limit ? 431 : 400;
      auto res = self->routes_->malformed(status, "malformed HTTP request: " + ec.message());
      res.keep_alive(false);
      co_await write_response(c, std::move(res), o.write_timeout);
    }
    co_return next::close;
  }
  if (beast::iequals(parser.get()[bhttp::field::expect], "100-continue") && !parser.is_done()) {
    bhttp::response<bhttp::empty_body> proceed{bhttp::status::continue_, 11};
    c->lowest().expires_after(o.write_timeout);
    auto [wec, wn] = co_await bhttp::async_write(c->raw(), proceed, use_tuple);
    if (wec) co_return next::close;
  }
  c->lowest().expires_after(o.request_timeout);
  if (!self->may_read(id)) co_return co_await refuse_evicted(self, c);
  auto [bec, bn] = co_await bhttp::async_read(c->raw(), c->buffer(), parser, use_tuple);
  if (self->stopping) co_return next::close;
  if (!self->advance(id, connection_base::state::busy)) co_return co_await refuse_evicted(self, c);
  if (bec == bhttp::error::body_limit) {  // a chunked body that grew over the limit
    auto res = self->routes_->too_large(parser.get(), limit);
    res.keep_alive(false);
    if (co_await write_response(c, std::move(res), o.write_timeout)) co_await drain(c);
    co_return next::close;
  }
  if (bec) {
    if (is_parse_error(bec)) {
      auto res = self->routes_->malformed(400, "malformed HTTP request: " + bec.message());
      res.keep_alive(false);
      co_await write_response(c, std::move(res), o.write_timeout);
    }
    co_return next::close;
  }
  c->lowest().expires_never();
  request_info info;  // named: a braced temporary in a co_await is destroyed twice by g++ 12
  info.peer = c->peer;
  auto r = co_await self->routes_->handle(parser.release(), std::move(info));
  if (self->stopping) co_return next::close;
  if (r.streamer) {
    const auto after = co_await r.streamer(c);
    co_return after == after_stream::keep_alive && !c->closing() ? next::serve_again : next::close;
  }
  if (!r.message) co_return next::close;
  const bool keep_alive = r.message->keep_alive();
  const bool written = co_await write_response(c, std::move(*r.message), o.write_timeout);
  if (r.written) r.written();
  co_return (written && keep_alive) ? next::serve_again : next::close;
}

template <class Stream>
net::awaitable<void> serve(impl_ptr self, conn_ptr<Stream> c, std::uint64_t id) {
  bool open = true;
  if constexpr (is_tls<Stream>) {
    c->lowest().expires_after(self->options.handshake_timeout);
    auto [ec] = co_await c->raw().async_handshake(net::ssl::stream_base::server, use_tuple);
    open = !ec && !self->stopping;
  }
  for (bool first = true; open && !c->closing(); first = false) {
    try {
      open = co_await exchange(self, c, id, first) == next::serve_again;
    } catch (const std::exception& e) {  // a bug in a route: this connection ends, the others go on
      spdlog::error("{}: a request failed: {}", self->options.name, e.what());
      open = false;
    }
    if (open) self->end_request(id);
  }
  if constexpr (is_tls<Stream>) {
    // close_notify, so a client keeping the connection in a pool sees a
    // clean end rather than a truncated stream.
    if (!c->closing() && c->lowest().socket().is_open()) {
      c->lowest().expires_after(tls_shutdown_timeout);
      co_await c->raw().async_shutdown(use_tuple);
    }
  }
  boost::system::error_code ignored;
  c->lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
  c->lowest().close();
  self->forget(id);
  self->routes_->connections_changed(-1);
  self->running.leave();
}

// Answers a connection over the limits at once, without a coroutine: what
// the client already sent is read and dropped (closing with unread data
// would reset the connection before it sees the answer), the answer fits in
// an empty send buffer, and the descriptor is closed before the next accept.
void refuse_now(tcp::socket& socket, std::string_view refusal) {
  boost::system::error_code ec;
  socket.non_blocking(true, ec);
  std::array<char, 4096> sink{};
  for (int i = 0; i < 16 && !ec; ++i) socket.read_some(net::buffer(sink), ec);
  ec.clear();
  net::write(socket, net::buffer(refusal), ec);
  socket.shutdown(tcp::socket::shutdown_send, ec);
  socket.close(ec);
}

template <class Stream>
void spawn(const impl_ptr& self, tcp::socket socket, std::string peer) {
  auto c = std::make_shared<connection<Stream>>(std::move(socket), self);
  c->peer = std::move(peer);
  std::uint64_t id = 0;
  if (!self->admit(c, id)) {
    refuse_now(c->lowest().socket(), self->options.refusal);
    self->routes_->refused();
    if (++self->refused_unlogged; std::chrono::steady_clock::now() - self->last_refusal_log >= refusal_log_every) {
      spdlog::warn("{}: refused {} connection(s) over the limits ({} in total, {} per peer; latest from {})",
                   self->options.name, self->refused_unlogged, self->max_total, self->max_per_peer, c->peer);
      self->refused_unlogged = 0;
      self->last_refusal_log = std::chrono::steady_clock::now();
    }
    return;
  }
  if (!self->running.enter()) {  // stop() began after admit: close at once
    self->forget(id);
    c->close();
    return;
  }
  self->routes_->connections_changed(1);
  const auto ex = c->lowest().get_executor();
  net::co_spawn(ex, serve<Stream>(self, std::move(c), id),
                [self](const std::exception_ptr& e) { self->log_failure(e); });
}

net::awaitable<void> accept_loop(impl_ptr self) {
  for (;;) {
    // The new socket's executor is a strand (as a strand<> type: handing
    // async_accept a strand inside an any_io_executor made Boost 1.81 free
    // that executor twice), or the executor itself on one thread.
    boost::system::error_code ec;
    tcp::socket socket(self->executor);
    if (self->options.one_thread) {
      std::tie(ec, socket) = co_await self->acceptor.async_accept(self->executor, use_tuple);
    } else {
      auto [aec, s] = co_await self->acceptor.async_accept(net::make_strand(self->executor), use_tuple);
      ec = aec;
      socket = tcp::socket(std::move(s));
    }
    if (self->stopping || !self->acceptor.is_open()) break;
    if (ec) {  // out of descriptors, …: breathe, then accept again
      spdlog::warn("{}: accept failed: {}", self->options.name, ec.message());
      self->backoff.expires_after(accept_backoff);
      co_await self->backoff.async_wait(use_tuple);
      continue;
    }
    set_cloexec(socket.native_handle());
    boost::system::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);  // each streamed event leaves at once
    const auto remote = socket.remote_endpoint(ignored);
    std::string peer = ignored ? std::string() : remote.address().to_string();
    if (self->options.tls)
      spawn<tls_stream>(self, std::move(socket), std::move(peer));
    else
      spawn<plain_stream>(self, std::move(socket), std::move(peer));
  }
  self->running.leave();
}

// Runs on the accept strand: no accept is pending once it returns.
void close_listener(const impl_ptr& self) {
  boost::system::error_code ignored;
  self->acceptor.close(ignored);
  self->backoff.cancel();
}

}  // namespace

result<tcp::endpoint> parse_listen(const std::string& listen) {
  const auto bad = [&] {
    return make_error(server_errc::invalid_listen_address,
                      "'" + listen + "' is not HOST:PORT with a numeric address (e.g. 127.0.0.1:8080)");
  };
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0) return bad();
  std::string host = listen.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host == "localhost") host = "127.0.0.1";
  const std::string port_text = listen.substr(colon + 1);
  unsigned port = 0;
  const auto* end = port_text.data() + port_text.size();
  auto [p, ec] = std::from_chars(port_text.data(), end, port);
  if (port_text.empty() || ec != std::errc{} || p != end || port > 65535) return bad();
  boost::system::error_code aec;
  auto address = net::ip::make_address(host, aec);
  if (aec) return bad();
  return tcp::endpoint(address, static_cast<std::uint16_t>(port));
}

server_shell::server_shell(net::any_io_executor executor, shell_options options, std::shared_ptr<routes> r)
    : impl_(std::make_shared<impl>(std::move(executor), std::move(options), std::move(r))) {}

server_shell::~server_shell() {
  if (!impl_->started || impl_->stop_called) return;
  // The owner is expected to co_await stop(); this only releases the port
  // and the connections if it did not (their coroutines keep impl alive).
  impl_->shut_all();
  net::post(impl_->accept_strand, [self = impl_] { close_listener(self); });
}

result<void> server_shell::start() {
  if (impl_->started) return make_error(server_errc::already_started, "start() may be called once");
  auto ep = parse_listen(impl_->options.listen);
  if (!ep) return ep.error();
  auto& acc = impl_->acceptor;
  const std::string& listen = impl_->options.listen;
  boost::system::error_code ec;
  auto fail = [&](server_errc code, const std::string& what) {
    boost::system::error_code ignored;
    acc.close(ignored);
    return make_error(code, what + " " + listen + ": " + ec.message());
  };
  acc.open(ep->protocol(), ec);
  if (ec) return fail(server_errc::listen_failed, "cannot open a socket for");
  set_cloexec(acc.native_handle());
  acc.set_option(tcp::acceptor::reuse_address(true), ec);
  acc.bind(*ep, ec);
  if (ec == net::error::address_in_use) return fail(server_errc::address_in_use, "cannot listen on");
  if (ec) return fail(server_errc::listen_failed, "cannot bind");
  acc.listen(net::socket_base::max_listen_connections, ec);
  if (ec) return fail(server_errc::listen_failed, "cannot listen on");
  impl_->bound_port = acc.local_endpoint().port();

  const auto& o = impl_->options;
  const std::size_t fds = descriptor_limit();
  const std::size_t reserve = o.descriptor_reserve != 0 ? o.descriptor_reserve : std::max<std::size_t>(256, fds / 4);
  const std::size_t room = fds > reserve ? fds - reserve : 1;
  impl_->max_total = std::min(o.max_connections != 0 ? o.max_connections : default_max_connections, room);
  impl_->max_per_peer = o.max_connections_per_peer != 0 ? std::min(o.max_connections_per_peer, impl_->max_total)
                                                        : std::max<std::size_t>(1, impl_->max_total / 2);
  spdlog::debug("{}: at most {} connections, {} per peer ({} descriptors, {} kept in reserve)", o.name,
                impl_->max_total, impl_->max_per_peer, fds, reserve);
  impl_->started = true;
  impl_->running.enter();  // the accept loop
  auto self = impl_;
  net::co_spawn(impl_->accept_strand, accept_loop(impl_),
                [self](const std::exception_ptr& e) { self->log_failure(e); });
  return ok();
}

net::awaitable<void> server_shell::stop() {
  if (!impl_->started || impl_->stop_called.exchange(true)) co_return;
  impl_->shut_all();
  net::post(impl_->accept_strand, [self = impl_] { close_listener(self); });
  co_await impl_->running.close_and_wait();
}

std::uint16_t server_shell::port() const { return impl_->bound_port.load(); }

tcp::endpoint server_shell::local_endpoint() const {
  boost::system::error_code ec;
  return impl_->acceptor.local_endpoint(ec);
}

std::size_t server_shell::connections() const {
  std::lock_guard lock(impl_->mu);
  return impl_->live.size();
}

std::size_t server_shell::idle_connections() const {
  std::lock_guard lock(impl_->mu);
  return static_cast<std::size_t>(std::count_if(impl_->live.begin(), impl_->live.end(), [](const auto& entry) {
    return !entry.second->evicted && entry.second->now == connection_base::state::idle;
  }));
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

}  // namespace tether::http
