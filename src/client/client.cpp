#include "client/client.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <algorithm>
#include <sstream>

#include <fmt/format.h>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

namespace tether::client {

namespace {

namespace http = boost::beast::http;
namespace json = boost::json;
using clock_type = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr std::string_view user_agent = "tether-cli/0.1.0";
constexpr std::size_t max_json_body = 64U << 20U;

class client_category_impl final : public std::error_category {
 public:
  [[nodiscard]] const char* name() const noexcept override { return "client"; }
  [[nodiscard]] std::string message(int v) const override {
    switch (static_cast<client_errc>(v)) {
      case client_errc::unreachable:
        return "the server cannot be reached";
      case client_errc::timeout:
        return "the server did not answer in time";
      case client_errc::unauthorized:
        return "the server refused the token";
      case client_errc::refused:
        return "the server refused the request";
      case client_errc::bad_response:
        return "the server's response is malformed";
      case client_errc::interrupted:
        return "interrupted";
    }
    return "unknown client error";
  }
};

std::atomic<int> sigints{0};

extern "C" void on_sigint(int /*signal*/) { sigints.fetch_add(1, std::memory_order_relaxed); }

// Waits for `events` on `fd` until `deadline`, in slices so that a Ctrl-C
// landing just before poll() is still seen promptly.
result<void> wait_fd(int fd, short events, clock_type::time_point deadline, int baseline, std::string_view what) {
  for (;;) {
    if (sigint_count() != baseline) return make_error(client_errc::interrupted, "interrupted");
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now());
    if (left <= 0ms) return make_error(client_errc::timeout, fmt::format("the server did not {} in time", what));
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min<std::int64_t>(left.count(), 200)));
    if (n > 0) return ok();
    if (n < 0 && errno != EINTR) return make_error(client_errc::bad_response, std::strerror(errno));
  }
}

// One TCP connection with deadlines.
class connection {
 public:
  connection() = default;
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;
  ~connection() {
    if (fd_ >= 0) ::close(fd_);
  }

  result<void> connect(const server_address& a, clock_type::time_point deadline, int baseline) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (const int rc = ::getaddrinfo(a.host.c_str(), a.port.c_str(), &hints, &found); rc != 0)
      return unreachable(a, ::gai_strerror(rc));
    std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> owned(found, &::freeaddrinfo);
    std::string why = "no address";
    for (const addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
      if (fd_ >= 0) ::close(fd_);
      fd_ = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
      if (fd_ < 0) {
        why = std::strerror(errno);
        continue;
      }
      if (::connect(fd_, ai->ai_addr, ai->ai_addrlen) == 0) return ok();
      if (errno != EINPROGRESS) {
        why = std::strerror(errno);
        continue;
      }
      if (auto w = wait_fd(fd_, POLLOUT, deadline, baseline, "accept the connection"); !w) {
        if (w.error() == client_errc::interrupted) return w.error();
        why = "timed out";
        continue;
      }
      int err = 0;
      socklen_t len = sizeof err;
      ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err == 0) return ok();
      why = std::strerror(err);
    }
    return unreachable(a, why);
  }

  result<void> write_all(std::string_view data, clock_type::time_point deadline, int baseline) {
    while (!data.empty()) {
      const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n > 0) {
        data.remove_prefix(static_cast<std::size_t>(n));
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        TETHER_TRY(wait_fd(fd_, POLLOUT, deadline, baseline, "take the request"));
        continue;
      }
      return make_error(client_errc::bad_response,
                        fmt::format("the connection broke while sending the request ({})", std::strerror(errno)));
    }
    return ok();
  }

  // Appends what arrives to `into`; 0 bytes means the server closed.
  result<std::size_t> read_some(std::string& into, clock_type::time_point deadline, int baseline,
                                std::string_view what) {
    for (;;) {
      char buf[16384];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n >= 0) {
        into.append(buf, static_cast<std::size_t>(n));
        return static_cast<std::size_t>(n);
      }
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
        TETHER_TRY(wait_fd(fd_, POLLIN, deadline, baseline, what));
        continue;
      }
      return make_error(client_errc::bad_response, fmt::format("the connection broke ({})", std::strerror(errno)));
    }
  }

  [[nodiscard]] int fd() const { return fd_; }

 private:
  static error unreachable(const server_address& a, std::string_view why) {
    std::string reason(why);
    for (auto& c : reason) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return make_error(client_errc::unreachable,
                      fmt::format("cannot reach the server at {} ({}) — is `tether serve` running?", a.url, reason));
  }

  int fd_ = -1;
};

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// `extra` headers replace the defaults of the same name (a test's own
// Authorization, Content-Type or Connection).
std::string build_request(std::string_view method, const server_address& a, std::string_view target,
                          const client_options& o, const std::string* body, std::string_view accept,
                          std::optional<std::int64_t> last_event_id, const std::vector<header_field>& extra = {}) {
  http::request<http::string_body> req;
  req.method_string(method);
  req.target(a.base_path + std::string(target));
  req.version(11);
  req.set(http::field::host, a.port == "80" ? a.host : a.host + ":" + a.port);
  req.set(http::field::user_agent, user_agent);
  req.set(http::field::accept, accept);
  req.set(http::field::connection, "close");
  if (!o.token.empty()) req.set(http::field::authorization, "Bearer " + o.token);
  if (last_event_id) req.set("Last-Event-ID", std::to_string(*last_event_id));
  if (body != nullptr) {
    req.set(http::field::content_type, "application/json");
    req.body() = *body;
  }
  req.prepare_payload();
  for (const auto& h : extra) {
    for (auto it = req.begin(); it != req.end();) {
      if (iequals(it->name_string(), h.name))
        it = req.erase(it);
      else
        ++it;
    }
  }
  for (const auto& h : extra) req.insert(h.name, h.value);
  std::ostringstream os;
  os << req;
  return os.str();
}

// The server's {"error":{code,message}} as one line; 401 says where the
// token came from, since that is what the user has to fix.
error error_from(int status, std::string_view body, const client_options& o) {
  std::string code;
  std::string message;
  boost::system::error_code ec;
  const auto v = json::parse(body, ec);
  if (!ec && v.is_object()) {
    if (const auto* e = v.as_object().if_contains("error"); e != nullptr && e->is_object()) {
      if (const auto* c = e->as_object().if_contains("code"); c != nullptr && c->is_string()) code = c->as_string();
      if (const auto* m = e->as_object().if_contains("message"); m != nullptr && m->is_string())
        message = m->as_string();
    }
  }
  if (code.empty()) code = fmt::format("HTTP {}", status);
  if (message.empty()) message = std::string(body.substr(0, 200));
  if (status == 401) {
    const std::string source =
        o.token.empty() ? "no token was found: " + o.token_source : "the token came from " + o.token_source;
    return make_error(client_errc::unauthorized, fmt::format("unauthorized: {} — {}", message, source));
  }
  return make_error(client_errc::refused, fmt::format("{}: {}", code, message));
}

// Reads a response head (and, when `whole`, the body) from `conn` into `p`.
// `buf` keeps bytes read but not yet consumed by the parser.
template <class Parser>
result<void> read_response(connection& conn, Parser& p, std::string& buf, clock_type::time_point deadline, int baseline,
                           bool whole) {
  for (;;) {
    boost::system::error_code ec;
    if (!buf.empty()) {
      const std::size_t n = p.put(boost::asio::buffer(buf), ec);
      buf.erase(0, n);
      if (ec && ec != http::error::need_more)
        return make_error(client_errc::bad_response, "the server's response is not HTTP: " + ec.message());
      if (whole ? p.is_done() : p.is_header_done()) return ok();
      if (!ec && n > 0) continue;
    }
    auto got = conn.read_some(buf, deadline, baseline, "answer");
    if (!got) return got.error();
    if (*got == 0) {
      // Beast completes a response parser that saw nothing at EOF (as a
      // default 200): a server that died before answering is no answer.
      if (!p.got_some())
        return make_error(client_errc::bad_response, "the server closed the connection without answering");
      p.put_eof(ec);
      if (!ec && (whole ? p.is_done() : p.is_header_done())) return ok();
      return make_error(client_errc::bad_response, "the server closed the connection mid-response");
    }
  }
}

class sse_stream final : public event_stream {
 public:
  sse_stream(std::unique_ptr<connection> conn, std::unique_ptr<http::response_parser<http::string_body>> parser,
             std::string buffered, std::chrono::milliseconds idle)
      : conn_(std::move(conn)), parser_(std::move(parser)), buf_(std::move(buffered)), idle_(idle) {}

  result<std::vector<::tether::http::sse_event>> next(std::chrono::milliseconds wait) override {
    std::vector<::tether::http::sse_event> out;
    if (auto r = drain(out); !r) return r.error();
    if (!out.empty()) return out;
    if (clock_type::now() - last_data_ > idle_)
      return make_error(client_errc::timeout, "the event stream went silent (no heartbeat)");
    const int baseline = sigint_count();
    pollfd p{conn_->fd(), POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(wait.count()));
    if (n <= 0 || sigint_count() != baseline) return out;
    auto got = conn_->read_some(buf_, clock_type::now() + 1s, baseline, "send events");
    if (!got) {
      if (got.error() == client_errc::interrupted || got.error() == client_errc::timeout) return out;
      return got.error();
    }
    if (*got == 0) return make_error(client_errc::bad_response, "the server closed the event stream");
    last_data_ = clock_type::now();
    if (auto r = drain(out); !r) return r.error();
    return out;
  }

  [[nodiscard]] int fd() const override { return conn_->fd(); }

 private:
  // Feeds buffered bytes through HTTP de-chunking and the SSE parser.
  result<void> drain(std::vector<::tether::http::sse_event>& out) {
    while (!buf_.empty() && !parser_->is_done()) {
      boost::system::error_code ec;
      const std::size_t n = parser_->put(boost::asio::buffer(buf_), ec);
      buf_.erase(0, n);
      if (ec == http::error::need_more) break;
      if (ec) return make_error(client_errc::bad_response, "the event stream is malformed: " + ec.message());
      if (n == 0) break;
    }
    auto& body = parser_->get().body();
    if (!body.empty()) {
      for (auto& e : sse_.feed(body)) out.push_back(std::move(e));
      body.clear();
    }
    if (parser_->is_done() && out.empty())
      return make_error(client_errc::bad_response, "the server closed the event stream");
    return ok();
  }

  std::unique_ptr<connection> conn_;
  std::unique_ptr<http::response_parser<http::string_body>> parser_;
  std::string buf_;
  std::chrono::milliseconds idle_;
  clock_type::time_point last_data_ = clock_type::now();
  ::tether::http::sse_parser sse_;
};

}  // namespace

const std::error_category& client_category() {
  static const client_category_impl c;
  return c;
}

void install_sigint_handler() {
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocked read returns EINTR
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
}

int sigint_count() { return sigints.load(std::memory_order_relaxed); }

result<server_address> parse_server_url(std::string_view url) {
  server_address a;
  a.url = std::string(url);
  constexpr std::string_view scheme = "http://";
  if (!url.starts_with(scheme)) {
    return make_error(util_errc::invalid_argument,
                      fmt::format("the server URL '{}' must start with http:// (the API is plain HTTP)", url));
  }
  url.remove_prefix(scheme.size());
  const auto slash = url.find('/');
  std::string_view authority = url.substr(0, slash);
  if (slash != std::string_view::npos) {
    a.base_path = std::string(url.substr(slash));
    while (!a.base_path.empty() && a.base_path.back() == '/') a.base_path.pop_back();
  }
  a.port = "80";
  if (authority.starts_with('[')) {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return make_error(util_errc::invalid_argument, "bad server URL: " + a.url);
    a.host = std::string(authority.substr(1, close - 1));
    if (close + 1 < authority.size() && authority[close + 1] == ':') a.port = std::string(authority.substr(close + 2));
  } else if (const auto colon = authority.rfind(':'); colon != std::string_view::npos) {
    a.host = std::string(authority.substr(0, colon));
    a.port = std::string(authority.substr(colon + 1));
  } else {
    a.host = std::string(authority);
  }
  if (a.host.empty() || a.port.empty() || a.port.find_first_not_of("0123456789") != std::string::npos)
    return make_error(util_errc::invalid_argument, "bad server URL: " + a.url);
  return a;
}

api_client::api_client(client_options options) : options_(std::move(options)) {
  if (auto a = parse_server_url(options_.server)) {
    address_ = std::move(*a);
  } else {
    address_error_ = a.error().message;
  }
}

result<json::value> api_client::get(std::string_view target) { return exchange("GET", target, nullptr); }

result<json::value> api_client::post(std::string_view target, const json::value& body) {
  const std::string text = json::serialize(body);
  return exchange("POST", target, &text);
}

result<json::value> api_client::exchange(std::string_view method, std::string_view target, const std::string* body) {
  auto res = raw(method, target, body != nullptr ? *body : std::string());
  if (!res) return res.error();
  if (res->status >= 400) {
    last_status_ = res->status;
    return error_from(res->status, res->body, options_);
  }
  if (res->body.empty()) return json::value(nullptr);
  boost::system::error_code ec;
  auto v = json::parse(res->body, ec);
  if (ec) return make_error(client_errc::bad_response, "the server's answer is not JSON: " + ec.message());
  return v;
}

result<raw_response> api_client::raw(std::string_view method, std::string_view target, const std::string& body,
                                     const std::vector<header_field>& headers) {
  last_status_ = 0;
  if (!address_) return make_error(util_errc::invalid_argument, address_error_);
  const int baseline = sigint_count();
  connection conn;
  TETHER_TRY(conn.connect(*address_, clock_type::now() + options_.connect_timeout, baseline));
  const auto deadline = clock_type::now() + options_.response_timeout;
  const bool has_body = !body.empty() || method == "POST" || method == "PUT" || method == "PATCH";
  // A server may answer before the whole body arrived (413) and close: its
  // answer, when there is one, is the result, not the broken write.
  const auto written = conn.write_all(
      build_request(method, *address_, target, options_, has_body ? &body : nullptr, "application/json", {}, headers),
      deadline, baseline);
  if (!written && written.error() != client_errc::bad_response) return written.error();
  http::response_parser<http::string_body> p;
  p.body_limit(max_json_body);
  p.eager(true);
  std::string buf;
  if (auto read = read_response(conn, p, buf, deadline, baseline, true); !read)
    return written ? read.error() : written.error();
  raw_response out;
  out.status = static_cast<int>(p.get().result_int());
  for (const auto& f : p.get()) out.headers.push_back({std::string(f.name_string()), std::string(f.value())});
  out.body = std::move(p.get().body());
  return out;
}

std::string raw_response::header(std::string_view name) const {
  for (const auto& h : headers)
    if (iequals(h.name, name)) return h.value;
  return {};
}

result<std::unique_ptr<event_stream>> api_client::open_events(std::string_view target,
                                                          std::optional<std::int64_t> last_event_id) {
  last_status_ = 0;
  if (!address_) return make_error(util_errc::invalid_argument, address_error_);
  const int baseline = sigint_count();
  auto conn = std::make_unique<connection>();
  TETHER_TRY(conn->connect(*address_, clock_type::now() + options_.connect_timeout, baseline));
  const auto deadline = clock_type::now() + options_.response_timeout;
  TETHER_TRY(
      conn->write_all(build_request("GET", *address_, target, options_, nullptr, "text/event-stream", last_event_id),
                      deadline, baseline));
  auto p = std::make_unique<http::response_parser<http::string_body>>();
  p->body_limit(boost::none);  // a stream has no end; the body is consumed as it arrives
  p->eager(true);
  std::string buf;
  TETHER_TRY(read_response(*conn, *p, buf, deadline, baseline, false));
  const int status = static_cast<int>(p->get().result_int());
  if (status >= 400) {
    last_status_ = status;
    // The error body is short; read it all.
    auto whole = read_response(*conn, *p, buf, deadline, baseline, true);
    return error_from(status, whole ? std::string_view(p->get().body()) : std::string_view(), options_);
  }
  if (status != 200)
    return make_error(client_errc::bad_response, fmt::format("the event stream answered HTTP {}", status));
  return std::unique_ptr<event_stream>(
      std::make_unique<sse_stream>(std::move(conn), std::move(p), std::move(buf), options_.stream_idle_timeout));
}

}  // namespace tether::client
