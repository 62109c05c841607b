#include "runtime/agent/relay/model_relay.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <stop_token>

#include <spdlog/spdlog.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "http/client.h"
#include "http/gate.h"
#include "http/server_shell.h"
#include "runtime/agent/errors.h"
#include "runtime/agent/listen_socket.h"
#include "runtime/agent/relay/meter.h"
#include "runtime/agent/relay/splice.h"
#include "util/random.h"
#include "util/sha256.h"

namespace tether::runtime::agent {

namespace net = boost::asio;
namespace beast_http = boost::beast::http;
namespace json = boost::json;
using local = net::local::stream_protocol;
using namespace net::experimental::awaitable_operators;

namespace {

constexpr std::size_t token_bytes = 32;
constexpr auto use_tuple = net::as_tuple(net::use_awaitable);
constexpr std::chrono::milliseconds write_timeout{120'000};
// The scripted model takes any key; an agent must still send one.
constexpr std::string_view placeholder_key = "tether-scripted-model";

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

bool any_of_names(std::string_view name, std::initializer_list<std::string_view> names) {
  return std::any_of(names.begin(), names.end(), [name](std::string_view n) { return iequals(name, n); });
}

// Headers the relay sets itself, never copied from either side.
bool hop_by_hop(std::string_view name) {
  return any_of_names(
      name, {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection", "te",
             "trailer", "transfer-encoding", "upgrade", "content-length", "host"});
}

// The credential headers an agent's SDK sends its key in.
enum class credential { none, bearer, x_api_key, api_key };

struct presented {
  credential how = credential::none;
  std::string token;
};

presented credential_of(const http::request& req) {
  presented p;
  if (auto it = req.find(beast_http::field::authorization); it != req.end()) {
    std::string_view v(it->value().data(), it->value().size());
    if (v.size() > 7 && iequals(v.substr(0, 7), "bearer ")) {
      p.how = credential::bearer;
      p.token = std::string(v.substr(7));
      return p;
    }
  }
  if (auto it = req.find("x-api-key"); it != req.end()) {
    p.how = credential::x_api_key;
    p.token = std::string(it->value());
    return p;
  }
  if (auto it = req.find("api-key"); it != req.end()) {
    p.how = credential::api_key;
    p.token = std::string(it->value());
  }
  return p;
}

// "https://host:443/v1/" → {"https://host:443", "/v1"}.
struct split_url {
  std::string origin;
  std::string path;
};
split_url split(const std::string& url) {
  const auto scheme = url.find("://");
  const auto slash = scheme == std::string::npos ? std::string::npos : url.find('/', scheme + 3);
  split_url s;
  s.origin = slash == std::string::npos ? url : url.substr(0, slash);
  s.path = slash == std::string::npos ? std::string() : url.substr(slash);
  while (!s.path.empty() && s.path.back() == '/') s.path.pop_back();
  return s;
}

// Whether `target` is a model endpoint under `base_path` (and an optional /v1).
bool model_endpoint(std::string_view target, std::string_view base_path) {
  const auto query = target.find('?');
  const auto path = target.substr(0, query);
  if (!path.starts_with(base_path) || path.size() <= base_path.size() + 1 || path[base_path.size()] != '/')
    return false;
  if (path.find("..") != std::string_view::npos || path.find('%') != std::string_view::npos ||
      path.find("//") != std::string_view::npos)
    return false;
  auto rest = path.substr(base_path.size() + 1);
  // Anthropic's base URL is the root: its SDKs add /v1 themselves.
  if (rest.starts_with("v1/")) rest.remove_prefix(3);
  const auto first = rest.substr(0, rest.find('/'));
  for (const std::string_view allowed : {"responses", "chat", "completions", "messages", "models"})
    if (first == allowed) return first != "chat" || rest.starts_with("chat/completions");
  return false;
}

http::response json_error(unsigned status, std::string_view type, const std::string& message, bool keep_alive) {
  http::response res{static_cast<beast_http::status>(status), 11};
  res.set(beast_http::field::content_type, "application/json");
  res.body() =
      json::serialize(json::object{{"type", "error"}, {"error", json::object{{"type", type}, {"message", message}}}});
  res.keep_alive(keep_alive);
  res.prepare_payload();
  return res;
}

// A target as it may appear in a message or a log line: printable ASCII, at most 200 bytes.
std::string printable(std::string_view s) {
  std::string out(s.substr(0, 200));
  for (auto& c : out)
    if (c < 0x20 || c > 0x7e) c = '?';
  return out;
}

std::string chunk(std::string_view bytes) {
  std::array<char, 20> size{};
  const int n = std::snprintf(size.data(), size.size(), "%zx\r\n", bytes.size());
  std::string out(size.data(), static_cast<std::size_t>(n));
  out.append(bytes);
  out += "\r\n";
  return out;
}

}  // namespace

struct relay_ticket::shared {
  relay_upstream upstream;
  split_url where;
  std::string token;
  std::weak_ptr<model_relay::impl> relay;
  mutable std::mutex mu;
  model::usage usage;
  std::size_t responses = 0;
  std::atomic<std::size_t> requests{0};
};

using grant_ptr = std::shared_ptr<relay_ticket::shared>;

struct model_relay::impl : std::enable_shared_from_this<model_relay::impl> {
  impl(net::any_io_executor ex, relay_options o)
      : executor(std::move(ex)), options(std::move(o)), acceptor(executor), running(executor) {}

  net::any_io_executor executor;
  relay_options options;
  std::unique_ptr<http::server_shell> shell;
  local::acceptor acceptor;
  bound_file bound;
  http::gate running;  // the socket's accept loop and every splice
  std::atomic<std::size_t> spliced{0};
  std::atomic<bool> stopping{false};
  bool started = false;
  bool stop_called = false;

  // By the SHA-256 of their token: a lookup compares digests, so how long
  // it takes says nothing about how close a guess is to a live token.
  mutable std::mutex mu;
  std::map<std::string, grant_ptr, std::less<>> grants;

  grant_ptr find(std::string_view token) const {
    const auto digest = sha256_hex(token);
    std::lock_guard lock(mu);
    auto it = grants.find(digest);
    return it == grants.end() ? nullptr : it->second;
  }
  void forget(const std::string& token, const relay_ticket::shared* g) {
    const auto digest = sha256_hex(token);
    std::lock_guard lock(mu);
    auto it = grants.find(digest);
    if (it != grants.end() && it->second.get() == g) grants.erase(it);
  }
};

namespace {

// One response on its way back: the upstream's pieces wait here until the
// writer takes them (both on the connection's strand).
struct relay_pipe {
  explicit relay_pipe(const net::any_io_executor& ex) : ready(ex) {
    ready.expires_at(net::steady_timer::time_point::max());
  }
  std::string pending;
  bool upstream_done = false;
  bool downstream_failed = false;
  bool bodyless = false;
  std::stop_source stop;
  net::steady_timer ready;
  void notify() { ready.cancel(); }
};

// The upstream's head as the agent gets it: its status and headers but the
// hop-by-hop ones, the body chunked (none for 1xx, 204, 304 or a HEAD).
std::string head_bytes(const http::http_response_head& head, bool bodyless) {
  std::string out = "HTTP/1.1 " + std::to_string(head.status) + " " + head.reason + "\r\n";
  for (const auto& h : head.headers)
    if (!hop_by_hop(h.name)) out += h.name + ": " + h.value + "\r\n";
  out += bodyless ? "Content-Length: 0\r\n\r\n" : "Transfer-Encoding: chunked\r\n\r\n";
  return out;
}

net::awaitable<void> write_out(std::shared_ptr<relay_pipe> p, std::shared_ptr<http::stream> out) {
  for (;;) {
    if (p->pending.empty()) {
      if (p->upstream_done || p->downstream_failed) co_return;
      (void)co_await p->ready.async_wait(use_tuple);
      p->ready.expires_at(net::steady_timer::time_point::max());
      continue;
    }
    auto bytes = std::move(p->pending);
    p->pending.clear();
    if (auto ec = co_await out->write(std::move(bytes), write_timeout)) {
      p->downstream_failed = true;
      p->stop.request_stop();
      co_return;
    }
  }
}

class relay_routes final : public http::routes {
 public:
  explicit relay_routes(std::weak_ptr<model_relay::impl> relay) : relay_(std::move(relay)) {}

  http::head_policy inspect(const http::request& head, const http::request_info& info) override {
    (void)info;
    http::head_policy p;
    auto relay = relay_.lock();
    if (!relay) return p;
    p.body_limit = relay->options.max_request_bytes;
    const auto c = credential_of(head);
    p.trusted = c.how != credential::none && relay->find(c.token) != nullptr;
    return p;
  }

  net::awaitable<http::reply> handle(http::request req, http::request_info info) override {
    (void)info;
    http::reply r;
    auto relay = relay_.lock();
    if (!relay) co_return r;
    const auto c = credential_of(req);
    auto grant = c.how == credential::none ? nullptr : relay->find(c.token);
    if (!grant) {
      r.message = json_error(401, "authentication_error",
                             "tether relay: no run's token in Authorization, x-api-key or api-key", req.keep_alive());
      co_return r;
    }
    const std::string target(req.target());
    if (!model_endpoint(target, grant->where.path)) {
      r.message = json_error(403, "permission_error",
                             "tether relay: " + printable(target) + " is not a model endpoint under " +
                                 (grant->where.path.empty() ? std::string("/") : grant->where.path),
                             req.keep_alive());
      co_return r;
    }
    ++grant->requests;
    http::http_request up;
    up.method = std::string(req.method_string());
    up.url = grant->where.origin + target;
    for (const auto& h : req) {
      const std::string_view name(h.name_string().data(), h.name_string().size());
      if (hop_by_hop(name) || any_of_names(name, {"authorization", "x-api-key", "api-key", "accept-encoding"}))
        continue;
      up.headers.push_back({std::string(name), std::string(h.value())});
    }
    const std::string key = grant->upstream.key.empty() ? std::string(placeholder_key) : grant->upstream.key;
    switch (c.how) {
      case credential::x_api_key:
        up.headers.push_back({"x-api-key", key});
        break;
      case credential::api_key:
        up.headers.push_back({"api-key", key});
        break;
      default:
        up.headers.push_back({"Authorization", "Bearer " + key});
        break;
    }
    up.body = std::move(req.body());
    const bool keep_alive = req.keep_alive();
    const bool head_request = req.method() == beast_http::verb::head;
    r.streamer = [grant, up = std::move(up), keep_alive,
                  head_request](std::shared_ptr<http::stream> out) mutable -> net::awaitable<http::after_stream> {
      co_return co_await forward(grant, std::move(up), keep_alive, head_request, std::move(out));
    };
    co_return r;
  }

  http::response too_large(const http::request& head, std::size_t limit) override {
    (void)head;
    return json_error(413, "request_too_large",
                      "tether relay: the request body is over " + std::to_string(limit) + " bytes", false);
  }
  http::response malformed(unsigned status, std::string message) override {
    return json_error(status, "invalid_request_error", "tether relay: " + message, false);
  }

 private:
  static net::awaitable<http::after_stream> forward(grant_ptr grant, http::http_request up, bool keep_alive,
                                                    bool head_request, std::shared_ptr<http::stream> out) {
    const auto ex = co_await net::this_coro::executor;
    const auto began = std::chrono::steady_clock::now();
    auto p = std::make_shared<relay_pipe>(ex);
    auto meter = std::make_shared<relay_meter>("");
    http::http_handler h;
    h.on_head = [p, meter, head_request](const http::http_response_head& head) {
      p->bodyless = head_request || head.status == 204 || head.status == 304 || head.status < 200;
      *meter = relay_meter(head.header("content-type"));
      p->pending += head_bytes(head, p->bodyless);
      p->notify();
    };
    h.on_body = [p, meter](std::string_view bytes) {
      if (p->downstream_failed) return http::body_action::stop;
      meter->feed(bytes);
      if (!p->bodyless && !bytes.empty()) p->pending += chunk(bytes);
      p->notify();
      return http::body_action::more;
    };
    const std::string method = up.method;
    const std::string path = up.url.substr(grant->where.origin.size());
    auto send = [grant, p, up = std::move(up), h = std::move(h)]() mutable -> net::awaitable<http::http_result> {
      auto r = co_await grant->upstream.client->send(std::move(up), std::move(h), p->stop.get_token());
      p->upstream_done = true;
      p->notify();
      co_return r;
    };
    const auto result = co_await (send() && write_out(p, out));
    auto after = keep_alive ? http::after_stream::keep_alive : http::after_stream::close;
    if (p->downstream_failed) {
      after = http::after_stream::close;
    } else if (!result.head_received) {
      // Nothing reached the agent yet: a whole answer saying why.
      const auto res = json_error(502, "api_error", "tether relay: the model server: " + result.message, keep_alive);
      std::string bytes = "HTTP/1.1 502 Bad Gateway\r\nContent-Type: application/json\r\nContent-Length: " +
                          std::to_string(res.body().size()) +
                          (keep_alive ? "\r\n\r\n" : "\r\nConnection: close\r\n\r\n") + res.body();
      if (co_await out->write(std::move(bytes), write_timeout)) after = http::after_stream::close;
    } else if (result.error) {
      after = http::after_stream::close;  // broken mid-body: so is the agent's copy
    } else if (!p->bodyless) {
      if (co_await out->write("0\r\n\r\n", write_timeout)) after = http::after_stream::close;
    }
    if (auto u = meter->finish()) {
      std::lock_guard lock(grant->mu);
      grant->usage += *u;
      ++grant->responses;
    }
    spdlog::debug(
        "relay: {} {} → {} ({} bytes, {} ms)", method, printable(path),
        result.head_received ? "answered" : result.message, result.body_bytes,
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - began).count());
    co_return after;
  }

  std::weak_ptr<model_relay::impl> relay_;
};

net::awaitable<void> splice_to_port(std::shared_ptr<model_relay::impl> self, local::socket from) {
  const auto ex = from.get_executor();
  net::ip::tcp::socket to(ex);
  auto [ec] = co_await to.async_connect({net::ip::address_v4::loopback(), self->shell->port()}, use_tuple);
  if (!ec) co_await splice(std::move(from), std::move(to));
  --self->spliced;
  self->running.leave();
}

net::awaitable<void> accept_socket(std::shared_ptr<model_relay::impl> self) {
  for (;;) {
    auto [ec, socket] =
        co_await self->acceptor.async_accept(net::any_io_executor(net::make_strand(self->executor)), use_tuple);
    if (self->stopping || !self->acceptor.is_open()) break;
    if (ec) {
      spdlog::warn("relay: accept on its socket failed: {}", ec.message());
      net::steady_timer breathe(self->executor, std::chrono::milliseconds(100));
      co_await breathe.async_wait(use_tuple);
      continue;
    }
    if (self->spliced.load() >= self->options.max_socket_connections || !self->running.enter()) {
      boost::system::error_code ignored;
      socket.close(ignored);
      continue;
    }
    ++self->spliced;
    const auto ex = socket.get_executor();
    net::co_spawn(ex, splice_to_port(self, std::move(socket)), net::detached);
  }
  self->running.leave();
}

}  // namespace

relay_ticket& relay_ticket::operator=(relay_ticket&& o) noexcept {
  if (this != &o) {
    close();
    shared_ = std::move(o.shared_);
    token_ = std::move(o.token_);
  }
  return *this;
}

relay_ticket::~relay_ticket() { close(); }

relay_ticket::metered relay_ticket::take_usage() {
  metered m;
  if (!shared_) return m;
  std::lock_guard lock(shared_->mu);
  m.usage = shared_->usage;
  m.responses = shared_->responses;
  shared_->usage = {};
  shared_->responses = 0;
  return m;
}

std::size_t relay_ticket::requests() const { return shared_ ? shared_->requests.load() : 0; }

void relay_ticket::close() {
  if (!shared_) return;
  if (auto relay = shared_->relay.lock()) relay->forget(shared_->token, shared_.get());
  shared_.reset();
}

model_relay::model_relay(net::any_io_executor executor, relay_options options)
    : impl_(std::make_shared<impl>(std::move(executor), std::move(options))) {}

model_relay::~model_relay() {
  if (!impl_->started || impl_->stop_called) return;
  impl_->stopping = true;
  net::post(impl_->acceptor.get_executor(), [self = impl_] {
    boost::system::error_code ignored;
    self->acceptor.close(ignored);
  });
  remove_bound_file(impl_->bound);
}

result<void> model_relay::start() {
  if (impl_->started) return make_error(agent_errc::already_started, "start() may be called once");
  http::shell_options so;
  so.listen = "127.0.0.1:0";
  so.name = "relay";
  so.max_body_bytes = impl_->options.max_request_bytes;
  so.request_timeout = std::chrono::milliseconds(30'000);
  so.idle_timeout = std::chrono::milliseconds(120'000);
  so.write_timeout = write_timeout;
  impl_->shell = std::make_unique<http::server_shell>(impl_->executor, so, std::make_shared<relay_routes>(impl_));
  if (auto r = impl_->shell->start(); !r) return r.error();
  auto bound = listen_at(impl_->acceptor, impl_->options.socket);
  if (!bound) return bound.error();
  impl_->bound = std::move(*bound);
  impl_->started = true;
  impl_->running.enter();
  net::co_spawn(impl_->acceptor.get_executor(), accept_socket(impl_), net::detached);
  return ok();
}

net::awaitable<void> model_relay::stop() {
  if (!impl_->started || impl_->stop_called) co_return;
  impl_->stop_called = true;
  impl_->stopping = true;
  co_await net::post(impl_->acceptor.get_executor(), net::use_awaitable);
  {
    boost::system::error_code ignored;
    impl_->acceptor.close(ignored);
  }
  co_await impl_->shell->stop();  // ends every connection the splices lead to
  co_await impl_->running.close_and_wait();
  remove_bound_file(impl_->bound);
}

std::uint16_t model_relay::port() const { return impl_->shell ? impl_->shell->port() : 0; }

const std::filesystem::path& model_relay::socket_path() const { return impl_->options.socket; }

std::string model_relay::local_url(const std::string& upstream_base_url) const {
  return "http://127.0.0.1:" + std::to_string(port()) + split(upstream_base_url).path;
}

relay_ticket model_relay::open(relay_upstream upstream) {
  auto g = std::make_shared<relay_ticket::shared>();
  g->where = split(upstream.base_url);
  g->upstream = std::move(upstream);
  g->relay = impl_;
  {
    std::lock_guard lock(impl_->mu);
    std::string digest;
    do {
      g->token = random_hex(token_bytes);
      digest = sha256_hex(g->token);
    } while (impl_->grants.contains(digest));
    impl_->grants.emplace(std::move(digest), g);
  }
  relay_ticket t;
  t.token_ = g->token;
  t.shared_ = std::move(g);
  return t;
}

}  // namespace tether::runtime::agent
