// The HTTP side of the scripted model: the shared HTTP shell
// (http/server_shell.h) on one I/O thread of its own. Requests go to
// request_handler (handler.h); this file only turns its replies into HTTP.
#include "mock/server.h"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <sstream>
#include <thread>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/beast/http.hpp>

#include "http/server_shell.h"
#include "mock/handler.h"

namespace tether::mock {

namespace net = boost::asio;
namespace bhttp = boost::beast::http;

namespace {

constexpr std::uint32_t header_limit = 64U * 1024U;
// A connection idle this long (or a request this slow) is closed; a stalled write fails.
constexpr auto idle_timeout = std::chrono::minutes(10);

std::string_view sv(boost::beast::string_view s) { return {s.data(), s.size()}; }

template <class Response>
void set_common(Response& res, const http_reply& r, bool keep_alive) {
  res.version(11);
  res.result(r.status);
  if (r.status == 529) res.reason("Site Overloaded");
  res.set(bhttp::field::server, "tether-mock");
  res.set(bhttp::field::content_type, r.content_type);
  for (const auto& [k, v] : r.headers) res.set(k, v);
  res.keep_alive(keep_alive);
}

http::response whole(http_reply r, bool keep_alive, bool head) {
  http::response res;
  set_common(res, r, keep_alive);
  if (!head) res.body() = std::move(r.body);
  res.prepare_payload();
  return res;
}

std::string chunk(std::string_view bytes) {
  std::array<char, 24> size{};
  const int n = std::snprintf(size.data(), size.size(), "%zx\r\n", bytes.size());
  std::string out(size.data(), static_cast<std::size_t>(n));
  out += bytes;
  out += "\r\n";
  return out;
}

// A streaming reply: chunked, each event flushed as produced, paced by
// `Stream slowly`, cut after the first delta by `Fail with: disconnect`.
net::awaitable<http::after_stream> write_events(std::shared_ptr<http::stream> s, http_reply r, bool keep_alive,
                                                std::chrono::milliseconds write_timeout, request_handler* handler) {
  bhttp::response<bhttp::empty_body> res;
  set_common(res, r, keep_alive);
  res.chunked(true);
  std::ostringstream head;
  head << res.base();
  bool complete = !co_await s->write(head.str(), write_timeout);
  for (std::size_t i = 0; complete && i < r.events.size(); ++i) {
    const auto& event = r.events[i];
    // Stopping, or the client went away.
    complete = !s->closing() && !co_await s->write(chunk(event.bytes), write_timeout);
    if (complete && event.delta && r.disconnect) {
      s->close();
      complete = false;
    }
    if (complete && event.delta && r.delta_interval.count() > 0 && i + 1 < r.events.size())
      complete = co_await s->pause(r.delta_interval);
  }
  if (complete) complete = !co_await s->write("0\r\n\r\n", write_timeout);
  handler->mark_completed(r.recorded_seq);
  co_return (complete && keep_alive) ? http::after_stream::keep_alive : http::after_stream::close;
}

class mock_routes final : public http::routes {
 public:
  mock_routes(request_handler& h, std::chrono::milliseconds write_timeout)
      : handler_(h), write_timeout_(write_timeout) {}

  net::awaitable<http::reply> handle(http::request req, http::request_info) override {
    const bool head = req.method() == bhttp::verb::head;
    auto r = handler_.handle(sv(req.method_string()), sv(req.target()), req.body());
    const bool keep_alive = req.keep_alive() && !r.close;
    http::reply out;
    if (r.streaming) {
      // Called once: the reply moves into the coroutine.
      out.streamer = [h = &handler_, r = std::move(r), keep_alive, t = write_timeout_](
                         std::shared_ptr<http::stream> s) mutable {
        return write_events(std::move(s), std::move(r), keep_alive, t, h);
      };
      co_return out;
    }
    if (r.disconnect) co_return out;  // closed without an answer
    out.written = [h = &handler_, seq = r.recorded_seq] { h->mark_completed(seq); };
    out.message = whole(std::move(r), keep_alive, head);
    co_return out;
  }

  http::response too_large(const http::request& head, std::size_t limit) override {
    return whole(handler_.too_large(sv(head.target()), limit), false, false);
  }

  http::response malformed(unsigned status, std::string message) override {
    return whole(malformed_http(status, message), false, false);
  }

 private:
  request_handler& handler_;
  std::chrono::milliseconds write_timeout_;
};

mock_errc mock_code(const error& e) {
  if (e == http::server_errc::invalid_listen_address) return mock_errc::invalid_listen_address;
  if (e == http::server_errc::address_in_use) return mock_errc::address_in_use;
  if (e == http::server_errc::already_started) return mock_errc::already_started;
  return mock_errc::listen_failed;
}

}  // namespace

class server::impl {
 public:
  explicit impl(server_options o) : opts_(std::move(o)), handler_(opts_.max_kept_bytes) {}
  ~impl() { stop(); }
  impl(const impl&) = delete;
  impl& operator=(const impl&) = delete;

  result<void> start();
  void stop();
  std::uint16_t port() const { return port_.load(); }
  std::string base_url() const {
    return (opts_.tls ? "https://" : "http://") + host_ + ":" + std::to_string(port());
  }
  std::vector<boost::json::value> requests(std::size_t after) const { return handler_.requests(after); }
  std::size_t kept_bytes() const { return handler_.kept_bytes(); }
  std::size_t connections() const { return shell_ ? shell_->connections() : 0; }

 private:
  enum class state { idle, running, stopped };

  server_options opts_;
  request_handler handler_;
  net::io_context io_{1};
  std::unique_ptr<http::server_shell> shell_;
  std::thread thread_;
  std::atomic<std::uint16_t> port_{0};
  std::string host_ = "127.0.0.1";
  state state_ = state::idle;
};

result<void> server::impl::start() {
  if (state_ != state::idle) return error(mock_errc::already_started, "start() may be called once");
  http::shell_options so;
  so.listen = opts_.listen;
  so.name = "mock-llm";
  so.header_limit = header_limit;
  so.max_body_bytes = opts_.max_body_bytes;
  so.request_timeout = idle_timeout;
  so.idle_timeout = idle_timeout;
  so.write_timeout = opts_.write_timeout;
  so.one_thread = true;  // io_ runs on thread_ alone
  if (auto ep = http::parse_listen(opts_.listen); !ep) return error(mock_code(ep.error()), ep.error().message);
  if (opts_.tls) {
    auto ctx = tether::http::make_server_tls_context(*opts_.tls);
    if (!ctx) return ctx.error();
    so.tls = std::move(*ctx);
  }
  if (opts_.record_file) TETHER_TRY(handler_.open_record(*opts_.record_file));
  shell_ = std::make_unique<http::server_shell>(io_.get_executor(), std::move(so),
                                                std::make_shared<mock_routes>(handler_, opts_.write_timeout));
  if (auto r = shell_->start(); !r) return error(mock_code(r.error()), r.error().message);
  port_ = shell_->port();
  const auto address = shell_->local_endpoint().address();
  if (address.is_unspecified())
    host_ = address.is_v6() ? "[::1]" : "127.0.0.1";
  else
    host_ = address.is_v6() ? "[" + address.to_string() + "]" : address.to_string();
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
  // Ends every connection (streams mid-way or pausing included) and waits
  // for them; then io_ has no work left and its thread returns.
  net::co_spawn(io_, shell_->stop(), net::use_future).wait();
  if (thread_.joinable()) thread_.join();
}

server::server(server_options o) : impl_(std::make_unique<impl>(std::move(o))) {}
server::~server() = default;
result<void> server::start() { return impl_->start(); }
void server::stop() { impl_->stop(); }
std::uint16_t server::port() const { return impl_->port(); }
std::string server::base_url() const { return impl_->base_url(); }
std::vector<boost::json::value> server::requests(std::size_t after) const { return impl_->requests(after); }

std::size_t server::kept_bytes() const { return impl_->kept_bytes(); }
std::size_t server::connections() const { return impl_->connections(); }

}  // namespace tether::mock
