#include "http/client.h"

#include <array>
#include <chrono>
#include <mutex>
#include <optional>

#include <fmt/format.h>
#include <openssl/ssl.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include "http/connection_pool.h"
#include "util/fd.h"

namespace tether::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using steady = std::chrono::steady_clock;

namespace {

class client_error_category final : public std::error_category {
 public:
  [[nodiscard]] const char* name() const noexcept override { return "http client"; }
  [[nodiscard]] std::string message(int value) const override {
    switch (static_cast<client_errc>(value)) {
      case client_errc::invalid_request:
        return "invalid request";
      case client_errc::transport:
        return "transport failure";
      case client_errc::incomplete_stream:
        return "incomplete response";
      case client_errc::timeout:
        return "timeout";
      case client_errc::bad_response:
        return "bad response";
      case client_errc::cancelled:
        return "cancelled";
    }
    return "unknown http client error";
  }
};

}  // namespace

const std::error_category& client_category() {
  static const client_error_category category;
  return category;
}

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);
constexpr std::size_t read_chunk = 16 * 1024;

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

std::string base64(std::string_view in) {
  static constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::uint32_t acc = 0;
  int bits = 0;
  for (const unsigned char c : in) {
    acc = (acc << 8U) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out.push_back(alphabet[(acc >> static_cast<unsigned>(bits)) & 0x3FU]);
    }
  }
  if (bits > 0) out.push_back(alphabet[(acc << static_cast<unsigned>(6 - bits)) & 0x3FU]);
  while (out.size() % 4 != 0) out.push_back('=');
  return out;
}

bool is_ip_literal(const std::string& host) {
  beast::error_code ec;
  (void)asio::ip::make_address(host, ec);
  return !ec;
}

// The sockets of one exchange, shared with the stop callback and the
// resolve watchdog, which may run after the exchange has returned.
struct connection {
  explicit connection(const asio::any_io_executor& ex) : resolver(ex), plain(ex), resolve_timer(ex) {}
  tcp::resolver resolver;
  beast::tcp_stream plain;
  std::optional<ssl::stream<beast::tcp_stream>> tls;  // takes `plain` over for https
  asio::steady_timer resolve_timer;
  bool cancelled = false;
  bool resolve_expired = false;
  bool reused = false;     // borrowed from the pool, not connected for this exchange
  bool reusable = false;   // the response was read to its end, nothing left over, keep-alive
  bool response_byte = false;  // some byte of a response arrived

  beast::tcp_stream& lowest() { return tls ? tls->next_layer() : plain; }
  void abort() {
    cancelled = true;
    resolver.cancel();
    resolve_timer.cancel();
    beast::error_code ignored;
    lowest().socket().close(ignored);
  }
};

struct exchange {
  const http_options* options = nullptr;
  ssl::context* tls_context = nullptr;
  connection_pool* pool = nullptr;
  pool_key key;
  http_request request;
  bhttp::request<bhttp::string_body> wire;  // built once: a retry sends the same bytes
  http_handler handler;
  http_url url;
  std::optional<http_url> proxy;
  std::shared_ptr<connection> conn;
  std::stop_token stop;
  http_result result;

  [[nodiscard]] const http_url& hop() const { return proxy ? *proxy : url; }
};

// Records a failed step; cancellation and deadlines win over the step's own kind.
void fail(exchange& x, const beast::error_code& ec, client_errc otherwise, const std::string& what) {
  if (x.conn->cancelled || x.stop.stop_requested()) {
    x.result.error = client_errc::cancelled;
    x.result.message = "the request was cancelled";
  } else if (ec == beast::error::timeout) {
    x.result.error = client_errc::timeout;
    x.result.message = what + ": deadline passed";
  } else {
    x.result.error = otherwise;
    x.result.message = what + ": " + ec.message();
  }
}

http_response_head to_head(const bhttp::response_header<>& h) {
  http_response_head out;
  out.status = static_cast<int>(h.result_int());
  out.reason = std::string(h.reason());
  for (const auto& f : h) out.headers.push_back({std::string(f.name_string()), std::string(f.value())});
  return out;
}

// No Nagle delay: a request written as several TLS records on a kept
// connection would otherwise wait for the peer's delayed ACK (~40 ms).
void on_connected(connection& conn) {
  set_cloexec(conn.plain.socket().native_handle());
  beast::error_code ignored;
  conn.plain.socket().set_option(tcp::no_delay(true), ignored);
}

// The phases below take the exchange (and its stream, parser, buffers) by
// reference: each is awaited at once by run(), which request() awaits at
// once, and request() owns them all in its frame.
// NOLINTNEXTLINE(cppcoreguidelines-avoid-reference-coroutine-parameters)
asio::awaitable<bool> connect_phase(exchange& x, steady::time_point deadline) {
  auto conn = x.conn;
  const http_url& hop = x.hop();
  const std::string where = hop.host_port();
  // An address literal (a local model, a proxy by IP) needs no resolver,
  // whose lookups run on a thread of their own.
  std::string literal = hop.host;
  if (literal.size() > 2 && literal.front() == '[' && literal.back() == ']')
    literal = literal.substr(1, literal.size() - 2);
  boost::system::error_code aec;
  const auto address = asio::ip::make_address(literal, aec);
  if (!aec) {
    conn->plain.expires_at(deadline);
    const tcp::endpoint endpoint(address, hop.port);
    auto [cec] = co_await conn->plain.async_connect(endpoint, use_tuple);
    if (cec) {
      fail(x, cec, client_errc::transport, "connecting to " + where);
      co_return false;
    }
    on_connected(*conn);
    co_return true;
  }
  // tcp_stream's expiry does not cover name resolution: a watchdog does.
  conn->resolve_timer.expires_at(deadline);
  conn->resolve_timer.async_wait([weak = std::weak_ptr<connection>(conn)](beast::error_code ec) {
    if (ec) return;
    if (auto c = weak.lock()) {
      c->resolve_expired = true;
      c->resolver.cancel();
    }
  });
  const std::string port = std::to_string(hop.port);
  auto [rec, endpoints] = co_await conn->resolver.async_resolve(hop.host, port, use_tuple);
  conn->resolve_timer.cancel();
  if (rec) {
    fail(x, conn->resolve_expired ? beast::error_code(beast::error::timeout) : rec, client_errc::transport,
         "resolving " + hop.host);
    co_return false;
  }
  conn->plain.expires_at(deadline);
  auto [cec, ep] = co_await conn->plain.async_connect(endpoints, use_tuple);
  if (cec) {
    fail(x, cec, client_errc::transport, "connecting to " + where);
    co_return false;
  }
  on_connected(*conn);
  co_return true;
}

// NOLINTNEXTLINE(cppcoreguidelines-avoid-reference-coroutine-parameters)
asio::awaitable<bool> tunnel_phase(exchange& x, steady::time_point deadline) {
  auto conn = x.conn;
  const std::string target = x.url.host_port();
  const std::string what = "proxy CONNECT to " + target + " via " + x.proxy->host_port();
  bhttp::request<bhttp::empty_body> req;
  req.method(bhttp::verb::connect);
  req.target(target);
  req.version(11);
  req.set(bhttp::field::host, target);
  if (!x.proxy->userinfo.empty()) req.set(bhttp::field::proxy_authorization, "Basic " + base64(x.proxy->userinfo));
  conn->plain.expires_at(deadline);
  auto [wec, wn] = co_await bhttp::async_write(conn->plain, req, use_tuple);
  if (wec) {
    fail(x, wec, client_errc::transport, what);
    co_return false;
  }
  beast::flat_buffer buf;
  bhttp::response_parser<bhttp::empty_body> parser;
  parser.skip(true);  // a 2xx answer to CONNECT has no body: the tunnel starts
  auto [rec, rn] = co_await bhttp::async_read_header(conn->plain, buf, parser, use_tuple);
  if (rec) {
    fail(x, rec, client_errc::transport, what);
    co_return false;
  }
  const int status = static_cast<int>(parser.get().result_int());
  if (status < 200 || status > 299) {
    x.result.error = client_errc::transport;
    x.result.message = fmt::format("{}: the proxy answered {}", what, status);
    co_return false;
  }
  co_return true;
}

// NOLINTNEXTLINE(cppcoreguidelines-avoid-reference-coroutine-parameters)
asio::awaitable<bool> tls_phase(exchange& x, steady::time_point deadline) {
  auto conn = x.conn;
  conn->tls.emplace(std::move(conn->plain), *x.tls_context);
  auto& tls = *conn->tls;
  if (!is_ip_literal(x.url.host)) SSL_set_tlsext_host_name(tls.native_handle(), x.url.host.c_str());
  tls.set_verify_mode(ssl::verify_peer);
  tls.set_verify_callback(ssl::host_name_verification(x.url.host));
  if (const auto session = x.pool->session(x.key)) SSL_set_session(tls.native_handle(), session.get());
  tls.next_layer().expires_at(deadline);
  auto [hec] = co_await tls.async_handshake(ssl::stream_base::client, use_tuple);
  if (hec) {
    fail(x, hec, client_errc::transport, "TLS handshake with " + x.url.host_port());
    co_return false;
  }
  x.result.tls_resumed = SSL_session_reused(tls.native_handle()) == 1;
  x.pool->remember_session(x.key, SSL_get0_session(tls.native_handle()));
  co_return true;
}

bhttp::request<bhttp::string_body> build_request(exchange& x) {
  bhttp::request<bhttp::string_body> req;
  const auto verb = bhttp::string_to_verb(x.request.method);
  if (verb == bhttp::verb::unknown)
    req.method_string(x.request.method);
  else
    req.method(verb);
  req.version(11);
  const bool absolute_form = x.proxy && !x.url.tls();
  req.target(absolute_form ? x.url.scheme + "://" + x.url.authority() + x.url.target : x.url.target);
  req.set(bhttp::field::host, x.url.authority());
  req.set(bhttp::field::user_agent, "tether/0.1");
  for (const auto& h : x.request.headers) {
    if (iequals(h.name, "user-agent"))
      req.set(bhttp::field::user_agent, h.value);  // the caller's own (the model relay passes the agent's on)
    else
      req.insert(h.name, h.value);
  }
  if (absolute_form && !x.proxy->userinfo.empty())
    req.set(bhttp::field::proxy_authorization, "Basic " + base64(x.proxy->userinfo));
  req.body() = std::move(x.request.body);
  req.prepare_payload();
  return req;
}

// Reads what is left of a response whose reader has seen enough (the end
// marker of a stream arrives just before the body's own end), so that the
// connection can be lent again. Bounded by bytes and time: a server that
// keeps talking costs the connection, never the turn.
template <class Stream, class Parser>
// NOLINTNEXTLINE(cppcoreguidelines-avoid-reference-coroutine-parameters)
asio::awaitable<void> drain_rest(exchange& x, Stream& stream, Parser& parser, beast::flat_buffer& buf,
                                 std::vector<char>& chunk) {
  std::size_t left = x.options->drain_bytes;
  x.conn->lowest().expires_after(x.options->drain_timeout);
  while (!parser.is_done() && left > 0) {
    parser.get().body().data = chunk.data();
    parser.get().body().size = chunk.size();
    auto [rec, rn] = co_await bhttp::async_read_some(stream, buf, parser, use_tuple);
    if (rec == bhttp::error::need_buffer) rec = {};
    if (rec) co_return;
    const std::size_t got = chunk.size() - parser.get().body().size;
    left = got >= left ? 0 : left - got;
  }
}

template <class Stream>
// NOLINTNEXTLINE(cppcoreguidelines-avoid-reference-coroutine-parameters)
asio::awaitable<void> exchange_phase(exchange& x, Stream& stream) {
  auto conn = x.conn;
  const std::string peer = x.url.host_port();
  conn->lowest().expires_after(x.options->deadlines.first_byte);
  auto [wec, wn] = co_await bhttp::async_write(stream, x.wire, use_tuple);
  if (wec) {
    fail(x, wec, client_errc::transport, "sending the request to " + peer);
    co_return;
  }
  x.result.request_sent = true;

  beast::flat_buffer buf;
  bhttp::response_parser<bhttp::buffer_body> parser;
  parser.body_limit(boost::none);  // counted below against max_response_bytes
  parser.header_limit(64 * 1024);
  auto [hec, hn] = co_await bhttp::async_read_header(stream, buf, parser, use_tuple);
  conn->response_byte = parser.got_some() || buf.size() > 0;
  if (hec) {
    const bool malformed = hec.category() == bhttp::make_error_code(bhttp::error::bad_version).category() &&
                           hec != bhttp::error::end_of_stream && hec != bhttp::error::partial_message;
    fail(x, hec, malformed ? client_errc::bad_response : client_errc::incomplete_stream,
         "waiting for the response head from " + peer);
    co_return;
  }
  x.result.head_received = true;
  const auto head = to_head(parser.get().base());
  if (x.options->tap) x.options->tap->on_head(head);
  if (x.handler.on_head) x.handler.on_head(head);

  std::vector<char> chunk(read_chunk);
  while (!parser.is_done()) {
    parser.get().body().data = chunk.data();
    parser.get().body().size = chunk.size();
    conn->lowest().expires_after(x.options->deadlines.idle);
    auto [rec, rn] = co_await bhttp::async_read_some(stream, buf, parser, use_tuple);
    if (rec == bhttp::error::need_buffer) rec = {};
    // A TLS peer that closes without close_notify ends an EOF-delimited body.
    if (rec == ssl::error::stream_truncated && !parser.chunked() && !parser.content_length()) {
      beast::error_code eof_ec;
      parser.put_eof(eof_ec);
      rec = eof_ec;
    }
    const std::size_t got = chunk.size() - parser.get().body().size;
    if (got > 0) {
      x.result.body_bytes += got;
      if (x.result.body_bytes > x.options->max_response_bytes) {
        x.result.error = client_errc::bad_response;
        x.result.message = fmt::format("the response from {} exceeds {} bytes", peer, x.options->max_response_bytes);
        co_return;
      }
      const std::string_view piece(chunk.data(), got);
      if (x.options->tap) x.options->tap->on_body(piece);
      if (x.handler.on_body && x.handler.on_body(piece) == body_action::stop) {
        if (!parser.is_done()) co_await drain_rest(x, stream, parser, buf, chunk);
        break;
      }
    }
    if (rec) {
      fail(x, rec, client_errc::incomplete_stream, "reading the response from " + peer);
      co_return;
    }
  }
  conn->reusable = parser.is_done() && parser.keep_alive() && buf.size() == 0 && !x.stop.stop_requested();
}

// NOLINTNEXTLINE(cppcoreguidelines-avoid-reference-coroutine-parameters)
asio::awaitable<void> run(exchange& x) {
  auto conn = x.conn;
  if (!conn->reused) {
    const auto connect_deadline = steady::now() + x.options->deadlines.connect;
    if (!co_await connect_phase(x, connect_deadline)) co_return;
    if (x.proxy && x.url.tls() && !co_await tunnel_phase(x, connect_deadline)) co_return;
    if (x.url.tls() && !co_await tls_phase(x, connect_deadline)) co_return;
  }
  if (conn->tls) {
    co_await exchange_phase(x, *conn->tls);
    // Tickets of TLS 1.3 arrive after the handshake: keep the newest.
    x.pool->remember_session(x.key, SSL_get0_session(conn->tls->native_handle()));
  } else {
    co_await exchange_phase(x, conn->plain);
  }
}

// Wraps an idle pooled connection in I/O objects of `conn`, which live on
// the borrowing coroutine's executor (connection_pool.h says why).
bool adopt(connection& conn, idle_connection idle) {
  beast::error_code ec;
  const int fd = idle.fd();
  conn.plain.socket().assign(idle.family() == ip_family::v6 ? tcp::v6() : tcp::v4(), fd, ec);
  if (ec) return false;  // `idle` still owns the descriptor and closes it
  (void)idle.release_fd();
  conn.reused = true;
  if (auto tls = idle.release_tls()) conn.tls.emplace(std::move(conn.plain), tls.release());
  return true;
}

// Takes a finished connection apart for the pool: its descriptor and TLS
// state leave the Asio objects, which are then destroyed with `conn`.
std::optional<idle_connection> take_apart(connection& conn) {
  beast::error_code ec;
  auto& socket = conn.lowest().socket();
  const auto family = socket.local_endpoint(ec).protocol() == tcp::v6() ? ip_family::v6 : ip_family::v4;
  if (ec) return std::nullopt;
  ssl_ptr tls;
  if (conn.tls) {
    SSL* s = conn.tls->native_handle();
    SSL_up_ref(s);  // the stream frees its own reference
    tls.reset(s);
  }
  const int fd = socket.release(ec);
  if (ec) return std::nullopt;
  conn.tls.reset();
  return idle_connection(fd, family, std::move(tls));
}

// A reused connection that failed before any byte of a response arrived was
// most likely closed by the server while idle: the request is sent once
// more on a fresh connection. Never after a response byte, a deadline (the
// server may be working on it) or a stop.
bool retry_on_fresh(const exchange& x) {
  if (!x.conn->reused || x.conn->response_byte || x.result.head_received) return false;
  const auto e = x.result.error;
  return e == client_errc::transport || e == client_errc::incomplete_stream;
}

void close(connection& conn) {
  beast::error_code ignored;
  conn.lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
  conn.lowest().socket().close(ignored);
}

}  // namespace

std::string http_response_head::header(std::string_view name) const {
  for (const auto& h : headers)
    if (iequals(h.name, name)) return h.value;
  return {};
}

struct http_client::impl {
  explicit impl(http_options o) : options(std::move(o)), pool(options.pool) {}
  http_options options;
  connection_pool pool;
  std::once_flag tls_once;
  std::optional<ssl::context> tls_context;
  std::string tls_error;  // the CA file could not be loaded: every https request fails with it

  ssl::context& tls() {
    std::call_once(tls_once, [this] {
      tls_context.emplace(ssl::context::tls_client);
      SSL_CTX_set_min_proto_version(tls_context->native_handle(), TLS1_2_VERSION);
      beast::error_code ignored;  // no CA store: every handshake fails verification, loudly
      tls_context->set_default_verify_paths(ignored);
      if (!options.ca_file.empty()) {
        beast::error_code ec;
        tls_context->load_verify_file(options.ca_file, ec);
        if (ec) tls_error = fmt::format("cannot load the CA file {}: {}", options.ca_file, ec.message());
      }
    });
    return *tls_context;
  }
};

http_client::http_client(http_options options) : impl_(std::make_unique<impl>(std::move(options))) {}

http_client::~http_client() = default;

asio::awaitable<http_result> http_client::send(http_request request, http_handler handler, std::stop_token stop) {
  exchange x;
  x.options = &impl_->options;
  x.stop = stop;
  auto url = parse_http_url(request.url);
  if (!url) {
    x.result.error = client_errc::invalid_request;
    x.result.message = url.error().message;
    co_return x.result;
  }
  x.url = std::move(*url);
  auto proxy = select_proxy(x.url, impl_->options.proxies);
  if (!proxy) {
    x.result.error = client_errc::invalid_request;
    x.result.message = proxy.error().message;
    co_return x.result;
  }
  x.proxy = std::move(*proxy);
  if (x.url.tls()) {
    x.tls_context = &impl_->tls();
    if (!impl_->tls_error.empty()) {
      x.result.error = client_errc::transport;
      x.result.message = impl_->tls_error;
      co_return x.result;
    }
  }
  x.pool = &impl_->pool;
  x.key = pool_key{x.url.scheme, x.url.host, x.url.port, x.proxy ? x.proxy->host_port() : std::string()};
  if (impl_->options.tap) impl_->options.tap->on_request(request);
  x.request = std::move(request);
  x.wire = build_request(x);
  x.handler = std::move(handler);

  const auto ex = co_await asio::this_coro::executor;
  for (bool first = true;; first = false) {
    x.conn = std::make_shared<connection>(ex);
    if (first) {
      if (auto idle = impl_->pool.acquire(x.key)) adopt(*x.conn, std::move(*idle));
    }
    {
      // Only this exchange's connection: a pooled idle one has no Asio
      // object a stop could reach, and a borrowed one is nobody else's.
      std::stop_callback on_stop(stop, [conn = x.conn, ex] { asio::post(ex, [conn] { conn->abort(); }); });
      if (stop.stop_requested()) {
        x.result.error = client_errc::cancelled;
        x.result.message = "the request was cancelled";
      } else {
        co_await run(x);
      }
    }
    x.result.reused_connection = x.conn->reused;
    if (!stop.stop_requested() && retry_on_fresh(x)) {
      close(*x.conn);
      x.result = http_result{};
      continue;
    }
    break;
  }
  if (!x.result.error && x.conn->reusable && !x.conn->cancelled && !stop.stop_requested()) {
    if (auto idle = take_apart(*x.conn)) {
      impl_->pool.release(x.key, std::move(*idle));
      co_return x.result;
    }
  }
  close(*x.conn);
  co_return x.result;
}

std::size_t http_client::idle_connections() const { return impl_->pool.idle_count(); }

}  // namespace tether::http
