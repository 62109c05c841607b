#include "api/server.h"

#include <malloc.h>

#include <exception>
#include <utility>

#include <spdlog/spdlog.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http.hpp>

#include "api/errors.h"
#include "api/guard.h"
#include "api/handler.h"
#include "api/server_metrics.h"
#include "api/sse_stream.h"
#include "api/web_auth.h"
#include "api/workspace.h"
#include "http/gate.h"
#include "util/metrics.h"

namespace tether::api {

namespace net = boost::asio;
namespace bhttp = boost::beast::http;

api_metrics& server_metrics() {
  static api_metrics m{
      metrics::global().add_gauge("tether_http_connections", "Open HTTP connections (event streams included)."),
      metrics::global().add_counter("tether_http_connections_refused_total",
                                    "Connections answered 503 and closed: over the total or per-peer limit."),
      metrics::global().add_gauge("tether_sse_queued_bytes",
                                  "Bytes of SSE frames queued in the server for their clients (all streams)."),
  };
  return m;
}

namespace {

constexpr auto use_tuple = net::as_tuple(net::use_awaitable);
constexpr std::size_t trim_threshold = 4U << 20U;  // free heap bytes worth handing back

// The answer to a connection over the limits: short, complete, and closing.
constexpr std::string_view refusal =
    "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
    "Connection: close\r\nServer: tether\r\nContent-Length: 82\r\n\r\n"
    "{\"error\":{\"code\":\"unavailable\",\"message\":\"too many connections; try again later\"}}";
constexpr std::uint32_t header_limit = 16U * 1024U;
constexpr std::size_t login_body_limit = 4096;  // {"token": "…"} with room to spare

// What every answer says about itself to a browser: no script, style or
// connection from anywhere but this server, never framed, never sniffed
// (a reply's own Content-Security-Policy replaces the first).
constexpr std::string_view content_policy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "font-src 'self'; frame-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

// A reply to a HEAD keeps its GET's Content-Length and sends no body.
http::response to_response(http_reply r, unsigned version, bool keep_alive, bool head) {
  http::response res{static_cast<bhttp::status>(r.status), version};
  res.set(bhttp::field::content_type, r.content_type);
  res.set(bhttp::field::server, "tether");
  res.set("Content-Security-Policy", content_policy);
  res.set("X-Content-Type-Options", "nosniff");
  res.set("Referrer-Policy", "no-referrer");
  for (auto& [name, value] : r.headers) {
    if (name == "Set-Cookie")
      res.insert(name, value);
    else
      res.set(name, value);
  }
  res.body() = std::move(r.body);
  res.keep_alive(keep_alive);
  res.prepare_payload();
  if (head) res.body().clear();
  return res;
}

http_request from_wire(http::request req, http::request_info info) {
  http_request hr;
  hr.peer = std::move(info.peer);
  hr.method = std::string(req.method_string());
  hr.target = std::string(req.target());
  hr.authorization = std::string(req[bhttp::field::authorization]);
  hr.accept = std::string(req[bhttp::field::accept]);
  hr.last_event_id = std::string(req["Last-Event-ID"]);
  hr.content_type = std::string(req[bhttp::field::content_type]);
  hr.cookie = std::string(req[bhttp::field::cookie]);
  hr.csrf = std::string(req["X-Tether-CSRF"]);
  hr.if_none_match = std::string(req[bhttp::field::if_none_match]);
  hr.host = std::string(req[bhttp::field::host]);
  hr.body = std::move(req.body());
  return hr;
}

// An event stream's tail is opened when the shell hands the connection over.
net::awaitable<http::after_stream> stream_reply(std::shared_ptr<const handler_context> ctx, event_stream what,
                                                std::shared_ptr<http::stream> stream, unsigned version) {
  auto tail =
      what.session ? ctx->store->tail(*what.session, what.after) : ctx->store->tail_all(ctx->options.sse_tail_buffer);
  const auto& o = ctx->options;
  sse_options so{o.heartbeat, o.sse_max_buffered, o.sse_stall_timeout, version, what.session.has_value()};
  co_return co_await stream_events(std::move(stream), std::move(tail), so);
}

// The API's side of the HTTP shell: requests to handle(), replies back.
class api_routes final : public http::routes {
 public:
  explicit api_routes(std::shared_ptr<const handler_context> ctx) : ctx_(std::move(ctx)) {}

  net::awaitable<http::reply> handle(http::request req, http::request_info info) override {
    const unsigned version = req.version();
    const bool keep_alive = req.keep_alive();
    const bool head = req.method() == bhttp::verb::head;
    auto r = co_await api::handle(ctx_.get(), from_wire(std::move(req), std::move(info)));
    metrics::http_requests_total().with(std::to_string(r.status)).inc();
    http::reply out;
    if (r.stream) {  // the connection becomes an event stream until either side ends it
      out.streamer = [ctx = ctx_, what = *r.stream, version](std::shared_ptr<http::stream> s) {
        return stream_reply(ctx, what, std::move(s), version);
      };
      co_return out;
    }
    out.message = to_response(std::move(r), version, keep_alive, head);
    co_return out;
  }

  // Sign-in takes a small body; a head with a valid token or sign-in cookie
  // makes its connection one the shell evicts last.
  http::head_policy inspect(const http::request& head, const http::request_info&) override {
    http::head_policy p;
    if (head.target() == "/v1/auth/login") p.body_limit = login_body_limit;
    p.trusted = bearer_matches(head[bhttp::field::authorization], ctx_->options.token) ||
                (ctx_->auth && ctx_->auth->check(head[bhttp::field::cookie], unix_now()).has_value());
    return p;
  }

  http::response too_large(const http::request& head, std::size_t limit) override {
    auto e = make_error(api_errc::too_large, "the body exceeds " + std::to_string(limit) + " bytes");
    return to_response(error_reply(e), head.version(), false, false);
  }

  http::response malformed(unsigned status, std::string message) override {
    auto e = make_error(status == 431 ? api_errc::headers_too_large : api_errc::bad_request, std::move(message));
    return to_response(error_reply(e), 11, false, false);
  }

  void refused() override {
    server_metrics().refused.inc();
    metrics::http_requests_total().with("503").inc();
  }
  void connections_changed(int delta) override { server_metrics().connections.add(delta); }

 private:
  std::shared_ptr<const handler_context> ctx_;
};

http::shell_options shell_options_of(const server_options& o) {
  http::shell_options so;
  so.listen = o.listen;
  so.name = "api";
  so.header_limit = header_limit;
  so.max_body_bytes = o.max_body_bytes;
  so.request_timeout = o.request_timeout;
  so.idle_timeout = o.idle_timeout;
  so.write_timeout = o.write_timeout;
  so.max_connections = o.max_connections;
  so.max_connections_per_peer = o.max_connections_per_peer;
  so.descriptor_reserve = o.descriptor_reserve;
  so.refusal = std::string(refusal);
  so.tls = o.tls;
  return so;
}

}  // namespace

struct server::impl : std::enable_shared_from_this<server::impl> {
  impl(const net::any_io_executor& executor, std::shared_ptr<const handler_context> c)
      : ctx(std::move(c)),
        shell(executor, shell_options_of(ctx->options), std::make_shared<api_routes>(ctx)),
        strand(net::make_strand(executor)),
        trim(strand),
        trimming(executor) {}

  std::shared_ptr<const handler_context> ctx;
  http::server_shell shell;
  net::strand<net::any_io_executor> strand;  // the trim timer's
  net::steady_timer trim;
  bool trim_stopping = false;  // on the strand
  http::gate trimming;
  bool started = false;  // the owner's calls only
  bool stopped = false;

  // On the strand: the trim loop ends at its next look.
  void stop_trimming() {
    trim_stopping = true;
    trim.cancel();
  }
};

namespace {

// Hands freed heap memory back to the system now and then: after a burst
// (many slow readers, long transcripts) glibc keeps freed pages otherwise.
net::awaitable<void> trim_loop(std::shared_ptr<server::impl> self) {
  const auto every = self->ctx->options.trim_interval;
  for (;;) {
    self->trim.expires_after(every);
    auto [ec] = co_await self->trim.async_wait(use_tuple);
    if (ec || self->trim_stopping) break;
    // Off the strand (it can take a while), and only when there is something to give back.
    net::post(self->strand.get_inner_executor(), [] {
      if (::mallinfo2().fordblks >= trim_threshold) ::malloc_trim(0);
    });
  }
  self->trimming.leave();
}

std::shared_ptr<const handler_context> context_of(session::session_service& service, store::event_store& store,
                                                  server_options options) {
  auto c = std::make_shared<handler_context>();
  c->service = &service;
  c->store = &store;
  c->options = std::move(options);
  c->work = c->options.work;
  c->auth = std::make_shared<web_auth>(c->options.token);
  c->throttle = std::make_shared<credential_throttle>();
  c->options.workspace_roots = resolve_roots(c->options.workspace_roots);
  return c;
}

}  // namespace

server::server(const net::any_io_executor& executor, session::session_service& service, store::event_store& store,
               server_options options)
    : impl_(std::make_shared<impl>(executor, context_of(service, store, std::move(options)))) {}

server::~server() {
  // The owner is expected to co_await stop(); the shell's destructor only
  // releases the port and the connections if it did not.
  if (impl_->started && !impl_->stopped) net::post(impl_->strand, [self = impl_] { self->stop_trimming(); });
}

result<void> server::start() {
  if (impl_->started) return make_error(util_errc::invalid_argument, "start() may be called once");
  if (auto r = impl_->shell.start(); !r) {
    if (r.error() == http::server_errc::invalid_listen_address)
      return make_error(util_errc::invalid_argument,
                        "listen address must be HOST:PORT, got '" + impl_->ctx->options.listen + "'");
    if (r.error() == http::server_errc::address_in_use) return r.error();  // its own exit code in `serve`
    return make_error(api_errc::listen_failed, r.error().message);
  }
  server_metrics();  // the API's metrics are listed from the start
  impl_->started = true;
  if (impl_->ctx->options.trim_interval.count() > 0 && impl_->trimming.enter())
    net::co_spawn(impl_->strand, trim_loop(impl_), [](const std::exception_ptr& e) {
      if (e) spdlog::error("api: the memory trim loop failed");
    });
  return ok();
}

net::awaitable<void> server::stop() {
  if (!impl_->started || impl_->stopped) co_return;
  impl_->stopped = true;
  net::post(impl_->strand, [self = impl_] { self->stop_trimming(); });
  co_await impl_->shell.stop();
  co_await impl_->trimming.close_and_wait();
}

std::uint16_t server::port() const { return impl_->shell.port(); }

std::size_t server::connections() const { return impl_->shell.connections(); }

}  // namespace tether::api
