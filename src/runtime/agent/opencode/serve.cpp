// opencode serve: one warm process per Tether session, driven over its HTTP
// API on loopback (warm_dialect.h says what a connection promises).
//
// Launch: `opencode serve --hostname 127.0.0.1 --port 0`, configured as
// opencode run is (opencode.h), with OPENCODE_SERVER_PASSWORD set to a
// random secret per process: every request carries it as HTTP Basic auth
// (user "opencode"), so no other local process can drive the agent. The
// runtime hands the secret back through connect_options::env.
//
// Protocol, as opencode 1.18 serves it:
//   stdout        "opencode server listening on http://127.0.0.1:PORT" (then
//                 drained, so the pipe never fills; its end is the process's)
//   GET /event    SSE of every event of the server; the first is
//                 server.connected, server.heartbeat every 10 s
//                 (opencode_events.h maps them)
//   POST /session {title}             → Session {id}; a title of our own spares
//                                       a title-generation request to the model
//   GET /session/{id}                 200, or 404: resume_refused
//   POST /session/{id}/prompt_async {parts: [{type: "text", text}]}   204; the
//                 turn runs, and a prompt sent while it runs joins it (the
//                 running step stops, the next step's request carries it)
//   POST /session/{id}/abort          the turn ends with session.error
//                                       MessageAbortedError, then session.idle
//   permission.asked {id, permission} → POST /permission/{id}/reply {reply:
//                 "once" | "reject"} as the profile's permissions say
//
// Bounds: a JSON answer over max_line_bytes, or an SSE event (or line) over
// it, fails the connection; the event stream has no total bound but an idle
// one (a minute without a byte, heartbeats included, means the server hangs).
#include <charconv>
#include <limits>
#include <stop_token>
#include <variant>

#include <spdlog/spdlog.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/detail/base64.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "http/client.h"
#include "http/sse_parser.h"
#include "process/child.h"
#include "runtime/agent/errors.h"
#include "runtime/agent/json_lines.h"
#include "runtime/agent/opencode/events.h"
#include "runtime/agent/opencode/opencode.h"
#include "runtime/agent/warm_dialect.h"
#include "util/random.h"

namespace tether::runtime::agent {

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);
constexpr std::string_view banner = "opencode server listening on ";
constexpr std::string_view password_variable = "OPENCODE_SERVER_PASSWORD";
constexpr std::string_view loopback_url = "http://127.0.0.1:";
constexpr int banner_lines = 16;                    // lines it may print before it says where it listens
constexpr auto startup = std::chrono::seconds(60);  // until it listens and streams events
constexpr auto request_deadline = std::chrono::seconds(30);
constexpr auto stream_idle = std::chrono::seconds(60);  // six heartbeats
constexpr std::size_t quoted_bytes = 200;
constexpr std::size_t stdout_line_bytes = 64U << 10U;  // it prints one line we read; the rest is dropped

std::string quote(std::string_view s) {
  return s.size() <= quoted_bytes ? std::string(s) : std::string(s.substr(0, quoted_bytes)) + "…";
}

std::string basic_auth(std::string_view password) {
  namespace b64 = boost::beast::detail::base64;
  const std::string plain = "opencode:" + std::string(password);
  std::string out(b64::encoded_size(plain.size()), '\0');
  out.resize(b64::encode(out.data(), plain.data(), plain.size()));
  return "Basic " + out;
}

http::http_options client_options(std::size_t max_bytes, std::chrono::milliseconds idle) {
  http::http_options h;
  h.deadlines = {std::chrono::seconds(5), request_deadline, idle};
  h.max_response_bytes = max_bytes;
  return h;
}

class serve_connection final : public agent_connection {
 public:
  serve_connection(asio::any_io_executor strand, process::child& proc, connect_options o, std::string password)
      : strand_(std::move(strand)),
        proc_(proc),
        o_(std::move(o)),
        auth_(basic_auth(password)),
        calls_(client_options(o_.max_line_bytes, request_deadline)),
        stream_(client_options(std::numeric_limits<std::size_t>::max(), stream_idle)),
        wake_(strand_) {}
  ~serve_connection() override { stop_.request_stop(); }
  serve_connection(const serve_connection&) = delete;
  serve_connection& operator=(const serve_connection&) = delete;

  task<result<std::string>> open(session_open so) override;
  task<result<void>> start_turn(std::string prompt) override;
  task<result<std::vector<agent_event>>> next() override;
  task<result<bool>> steer(std::string text) override;
  task<void> cancel() override;
  task<void> close() override;

 private:
  struct reply {
    int status = 0;
    std::string body;
  };
  task<result<reply>> request(std::string method, std::string target, std::string body);
  task<result<void>> prompt(std::string text);
  task<result<void>> start_server();
  task<void> drain_stdout();
  task<void> read_events();
  task<void> answer_permission(std::string id, std::string permission);
  task<void> tracked(task<void> t);
  void spawn(task<void> t);
  void on_event(const http::sse_event& e);
  void fail(tether::error why);
  template <class Ready>
  task<void> until(Ready ready, std::chrono::steady_clock::time_point deadline);

  asio::any_io_executor strand_;
  process::child& proc_;
  connect_options o_;
  std::string auth_;
  std::string base_url_;  // http://127.0.0.1:PORT, from the banner
  http::http_client calls_;
  http::http_client stream_;
  std::stop_source stop_;  // every exchange; requested by close()
  std::optional<opencode::serve_events> events_;
  std::vector<agent_event> queue_;
  std::optional<tether::error> failed_;  // sticky: the process or its stream ended
  bool started_ = false;
  bool connected_ = false;  // server.connected seen: no event of ours is missed
  bool announced_ = false;  // agent_session sent
  bool closing_ = false;
  int running_ = 0;          // coroutines spawned and not ended
  asio::steady_timer wake_;  // cancelled on every change the waits look at
};

template <class Ready>
task<void> serve_connection::until(Ready ready, std::chrono::steady_clock::time_point deadline) {
  while (!ready() && std::chrono::steady_clock::now() < deadline) {
    wake_.expires_at(deadline);
    co_await wake_.async_wait(use_tuple);
  }
}

void serve_connection::fail(tether::error why) {
  if (!failed_) failed_ = std::move(why);
  wake_.cancel();
}

task<void> serve_connection::tracked(task<void> t) {
  co_await std::move(t);
  --running_;
  wake_.cancel();
}

void serve_connection::spawn(task<void> t) {
  ++running_;
  asio::co_spawn(strand_, tracked(std::move(t)), asio::detached);
}

task<result<serve_connection::reply>> serve_connection::request(std::string method, std::string target,
                                                                std::string body) {
  if (failed_) co_return *failed_;
  http::http_request r;
  r.method = std::move(method);
  r.url = base_url_ + target;
  r.headers.push_back({"Authorization", auth_});
  if (!body.empty()) r.headers.push_back({"Content-Type", "application/json"});
  r.body = std::move(body);
  reply out;
  http::http_handler h;
  h.on_head = [&out](const http::http_response_head& head) { out.status = head.status; };
  h.on_body = [&out](std::string_view piece) {
    out.body.append(piece);
    return http::body_action::more;
  };
  const auto what = r.method + " " + target;
  auto res = co_await calls_.send(std::move(r), std::move(h), stop_.get_token());
  if (res.error == http::client_errc::cancelled)
    co_return tether::error(agent_errc::rpc_closed, "the connection to opencode was closed");
  if (res.error == http::client_errc::bad_response || res.error == http::client_errc::timeout)
    co_return tether::error(agent_errc::rpc_failed, what + ": " + res.message);
  if (res.error)
    co_return tether::error(agent_errc::rpc_closed, what + ": opencode did not answer (" + res.message + ")");
  co_return out;
}

task<result<void>> serve_connection::start_server() {
  using namespace asio::experimental::awaitable_operators;
  const auto deadline = std::chrono::steady_clock::now() + startup;
  for (int n = 0;; ++n) {
    if (n == banner_lines) co_return tether::error(agent_errc::protocol, "opencode did not say where it listens");
    asio::steady_timer timer(strand_, deadline);
    // Split, not fail: the first call's limits hold for the stream, and the
    // drain after the banner must never stop on a long line.
    auto got = co_await (proc_.read_line(process::stream::out, {stdout_line_bytes, process::overlong_line::split}) ||
                         timer.async_wait(use_tuple));
    if (got.index() == 1) co_return tether::error(agent_errc::rpc_closed, "opencode did not listen within 60 s");
    auto& line = std::get<0>(got);
    if (!line)
      co_return tether::error(agent_errc::rpc_closed, "cannot read opencode's output: " + line.error().message);
    if (!*line) co_return tether::error(agent_errc::rpc_closed, "opencode closed its output (it exited)");
    const auto& text = **line;
    const auto at = text.find(banner);
    if (at == std::string::npos) continue;
    base_url_ = text.substr(at + banner.size());
    while (!base_url_.empty() && (base_url_.back() == '\r' || base_url_.back() == ' ')) base_url_.pop_back();
    if (!base_url_.starts_with(loopback_url) || base_url_.size() == loopback_url.size() ||
        base_url_.find_first_not_of("0123456789", loopback_url.size()) != std::string::npos)
      co_return tether::error(agent_errc::protocol, "opencode listens somewhere else than loopback: " + quote(text));
    break;
  }
  if (o_.reach_there) {
    // It runs in an environment: its loopback is there, reached through a forward.
    // Its banner is the agent's output: a port past int's range is refused, never thrown on.
    int port = 0;
    const auto digits = std::string_view(base_url_).substr(loopback_url.size());
    const auto parsed = std::from_chars(digits.data(), digits.data() + digits.size(), port);
    if (parsed.ec != std::errc() || port <= 0 || port > 65535)
      co_return tether::error(agent_errc::protocol, "opencode names no port it can listen on: " + quote(base_url_));
    auto here = co_await o_.reach_there(port);
    if (!here)
      co_return tether::error(agent_errc::rpc_closed,
                              "opencode's server there cannot be reached from here: " + here.error().message);
    base_url_ = "http://" + *here;
  }
  spawn(drain_stdout());
  spawn(read_events());
  co_await until([this] { return connected_ || failed_.has_value(); }, deadline);
  if (failed_) co_return *failed_;
  if (!connected_) co_return tether::error(agent_errc::rpc_closed, "opencode's event stream did not start");
  co_return ok();
}

task<void> serve_connection::drain_stdout() {
  for (;;) {
    auto line = co_await proc_.read_line(process::stream::out, {stdout_line_bytes, process::overlong_line::split});
    if (!line || !*line) break;
  }
  if (!closing_) fail({agent_errc::rpc_closed, "opencode closed its output (it exited)"});
}

task<void> serve_connection::read_events() {
  http::http_request r;
  r.method = "GET";
  r.url = base_url_ + "/event";
  r.headers.push_back({"Authorization", auth_});
  r.headers.push_back({"Accept", "text/event-stream"});
  http::sse_parser parser;
  int status = 0;
  http::http_handler h;
  h.on_head = [&status](const http::http_response_head& head) { status = head.status; };
  h.on_body = [this, &parser, &status](std::string_view piece) {
    if (status != 200) return http::body_action::stop;
    for (const auto& e : parser.feed(piece)) {
      on_event(e);
      if (failed_) return http::body_action::stop;
    }
    if (parser.buffered() <= o_.max_line_bytes) return http::body_action::more;
    fail({agent_errc::protocol, "an event of opencode's stream over " + std::to_string(o_.max_line_bytes) + " bytes"});
    return http::body_action::stop;
  };
  auto res = co_await stream_.send(std::move(r), std::move(h), stop_.get_token());
  if (status != 200 && status != 0)
    fail({agent_errc::rpc_failed, "GET /event answered " + std::to_string(status)});
  else if (!closing_)
    fail({agent_errc::rpc_closed, "opencode ended its event stream (" + (res.error ? res.message : "EOF") + ")"});
}

void serve_connection::on_event(const http::sse_event& e) {
  if (e.data.empty()) return;
  std::error_code ec;
  auto v = json::parse(e.data, ec);
  if (ec || !v.is_object()) {
    fail({agent_errc::protocol, "not an event of opencode: " + quote(e.data)});
    return;
  }
  const auto& ev = v.as_object();
  const auto type = str(ev, "type");
  if (type == "server.connected") {
    connected_ = true;
  } else if (type == "permission.asked") {
    // Every session of this process is this Tether session's (a subagent's
    // too), so every request is answered.
    if (const auto* p = object_at(ev, "properties")) spawn(answer_permission(str(*p, "id"), str(*p, "permission")));
  } else if (events_) {
    const auto before = queue_.size();
    events_->feed(ev, queue_);
    if (queue_.size() == before) return;
  }
  wake_.cancel();
}

task<void> serve_connection::answer_permission(std::string id, std::string permission) {
  const auto policy = o_.settings != nullptr ? o_.settings->permissions : agent_permissions::deny_all;
  const auto answer = opencode::reply(policy, permission);
  // Built outside the co_await: GCC 12 rejects a braced literal there.
  const auto body = json::serialize(json::object{{"reply", answer}});
  auto r = co_await request("POST", "/permission/" + id + "/reply", body);
  if (!r || r->status != 200)
    spdlog::debug("agent: opencode permission {} ({}): the reply {} was not taken: {}", id, permission, answer,
                  r ? std::to_string(r->status) : r.error().message);
}

task<result<std::string>> serve_connection::open(session_open so) {
  if (!started_) {
    started_ = true;
    TETHER_CO_TRY(co_await start_server());
  }
  if (so.resume) {
    // Not of opencode's form (ses_…): opencode answers 500 for those.
    if (!so.resume->starts_with("ses_") || so.resume->find_first_of("/?#% ") != std::string::npos)
      co_return tether::error(agent_errc::resume_refused, "not an opencode session id: " + quote(*so.resume));
    auto r = co_await request("GET", "/session/" + *so.resume, {});
    if (!r) co_return r.error();
    if (r->status == 404) co_return tether::error(agent_errc::resume_refused, "opencode has no session " + *so.resume);
    if (r->status != 200)
      co_return tether::error(agent_errc::rpc_failed, "GET /session answered " + std::to_string(r->status));
    events_.emplace(*so.resume);
    co_return *so.resume;
  }
  const auto title = json::serialize(json::object{{"title", "Tether session"}});
  auto r = co_await request("POST", "/session", title);
  if (!r) co_return r.error();
  if (r->status != 200)
    co_return tether::error(agent_errc::rpc_failed,
                            "POST /session answered " + std::to_string(r->status) + ": " + quote(r->body));
  auto body = parse_object(r->body);
  if (!body || str(*body, "id").empty())
    co_return tether::error(agent_errc::protocol, "POST /session answered no session: " + quote(r->body));
  events_.emplace(str(*body, "id"));
  co_return events_->session();
}

task<result<void>> serve_connection::prompt(std::string text) {
  json::object body{{"parts", json::array{json::object{{"type", "text"}, {"text", std::move(text)}}}}};
  if (!o_.model.empty()) body["model"] = json::object{{"providerID", "tether"}, {"modelID", o_.model}};
  auto r = co_await request("POST", "/session/" + events_->session() + "/prompt_async", json::serialize(body));
  if (!r) co_return r.error();
  if (r->status != 204 && r->status != 200)
    co_return tether::error(agent_errc::rpc_failed,
                            "prompt_async answered " + std::to_string(r->status) + ": " + quote(r->body));
  co_return ok();
}

task<result<void>> serve_connection::start_turn(std::string text) {
  if (!events_) co_return tether::error(agent_errc::rpc_failed, "start_turn before open");
  if (failed_) co_return *failed_;
  if (!announced_) {
    announced_ = true;
    queue_.emplace_back(agent_session{events_->session()});
  }
  events_->begin_turn();  // before the request: its first events may come before the answer
  auto r = co_await prompt(std::move(text));
  if (!r) events_->abandon_turn();
  co_return r;
}

task<result<std::vector<agent_event>>> serve_connection::next() {
  co_await until([this] { return !queue_.empty() || failed_.has_value(); },
                 std::chrono::steady_clock::time_point::max());
  if (queue_.empty()) co_return *failed_;
  auto out = std::move(queue_);
  queue_.clear();
  co_return out;
}

task<result<bool>> serve_connection::steer(std::string text) {
  if (!events_ || !events_->turn_running() || failed_) co_return false;
  TETHER_CO_TRY(co_await prompt(std::move(text)));
  co_return true;
}

task<void> serve_connection::cancel() {
  if (!events_ || !events_->turn_running() || failed_) co_return;
  auto r = co_await request("POST", "/session/" + events_->session() + "/abort", {});
  if (!r) spdlog::debug("agent: opencode did not take the abort: {}", r.error().message);
}

task<void> serve_connection::close() {
  if (!closing_) {
    closing_ = true;
    stop_.request_stop();
    proc_.close_stdin();
    proc_.close_output(process::stream::out);
  }
  co_await until([this] { return running_ == 0; }, std::chrono::steady_clock::time_point::max());
  queue_.clear();
  fail({agent_errc::rpc_closed, "the connection to opencode was closed"});
}

class opencode_serve final : public warm_dialect {
 public:
  [[nodiscard]] std::string_view program() const override { return "opencode"; }
  [[nodiscard]] std::string_view key_variable() const override { return opencode::key_variable; }
  [[nodiscard]] std::string scripted_base_url(std::string_view root) const override {
    return std::string(root) + "/v1";
  }
  [[nodiscard]] bool can_steer() const override { return true; }

  result<launch> prepare(const launch_input& in) const override {
    auto env = opencode::write_config(in);
    if (!env) return env.error();
    launch l;
    l.env = std::move(*env);
    l.env[std::string(password_variable)] = random_hex(24);
    l.argv = {in.program.string(), "serve", "--hostname", "127.0.0.1", "--port", "0"};
    l.serves_loopback = true;  // Tether talks to its HTTP server on 127.0.0.1
    for (const auto& a : in.settings->args) l.argv.push_back(a);
    return l;
  }

  [[nodiscard]] std::unique_ptr<agent_connection> connect(asio::any_io_executor strand, process::child& proc,
                                                          connect_options o) const override {
    std::string password;
    if (const auto it = o.env.find(std::string(password_variable)); it != o.env.end()) password = it->second;
    return std::make_unique<serve_connection>(std::move(strand), proc, std::move(o), std::move(password));
  }
};

}  // namespace

std::unique_ptr<warm_dialect> make_opencode_serve() { return std::make_unique<opencode_serve>(); }

}  // namespace tether::runtime::agent
