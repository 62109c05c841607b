#include "runtime/agent/bridge/tool_bridge.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <exception>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>

#include <spdlog/spdlog.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include "http/gate.h"
#include "runtime/agent/bridge/protocol.h"
#include "runtime/agent/bridge/tcp_door.h"
#include "runtime/agent/errors.h"
#include "runtime/agent/listen_socket.h"
#include "runtime/agent/run_queue.h"
#include "util/fd.h"
#include "util/random.h"

namespace tether::runtime::agent {

namespace net = boost::asio;
namespace json = boost::json;
using local = net::local::stream_protocol;

// The ticket's view of its run is the run itself.
struct run_ticket::shared : bridge_run {};

namespace {

constexpr auto use_tuple = net::as_tuple(net::use_awaitable);
constexpr std::size_t token_bytes = 32;
constexpr auto accept_backoff = std::chrono::milliseconds(50);

// A bridge connection. Everything but shut() runs on its strand (the
// socket's executor).
struct connection : std::enable_shared_from_this<connection> {
  explicit connection(local::socket s) : socket(std::move(s)), deadline(socket.get_executor()) {}
  local::socket socket;
  net::steady_timer deadline;             // closes the connection while it waits for a request too long
  std::string buffer;                     // read but not yet framed
  std::shared_ptr<pending_call> waiting;  // the call whose reply it awaits
  // Under impl::mu: the run it authenticated as (null: not yet), and whether
  // it was evicted to make room (then it counts as gone).
  bridge_run* run = nullptr;
  bool evicted = false;

  void close_now() {
    deadline.cancel();
    boost::system::error_code ignored;
    socket.shutdown(local::socket::shutdown_both, ignored);
    socket.close(ignored);
    if (waiting) {
      waiting->abandoned = true;
      waiting->done.close();
    }
  }
  // Any thread.
  void shut() {
    net::post(socket.get_executor(), [c = shared_from_this()] { c->close_now(); });
  }
};

}  // namespace

struct tool_bridge::impl : std::enable_shared_from_this<tool_bridge::impl> {
  impl(net::any_io_executor ex, std::filesystem::path p)
      : executor(std::move(ex)),
        accept_strand(net::make_strand(executor)),
        acceptor(accept_strand),
        backoff(accept_strand),
        path(std::move(p)),
        running(executor) {}

  net::any_io_executor executor;
  net::strand<net::any_io_executor> accept_strand;
  local::acceptor acceptor;
  net::steady_timer backoff;
  std::filesystem::path path;
  bound_file bound;
  http::gate running;  // the accept loop and every connection coroutine
  std::atomic<bool> stop_called{false};
  bool started = false;  // the owner's calls only

  mutable std::mutex mu;
  bool stopping = false;  // under mu (read unlocked only as a hint after a co_await)
  std::unordered_map<std::string, std::shared_ptr<bridge_run>> runs;
  std::map<std::uint64_t, std::shared_ptr<connection>> live;
  std::uint64_t next_id = 0;

  [[nodiscard]] bool is_stopping() const {
    std::lock_guard lock(mu);
    return stopping;
  }
  [[nodiscard]] std::shared_ptr<bridge_run> find(const std::string& token) const {
    std::lock_guard lock(mu);
    const auto it = runs.find(token);
    return it == runs.end() ? nullptr : it->second;
  }
  void forget(const std::string& token, const bridge_run* run) {
    std::lock_guard lock(mu);
    if (const auto it = runs.find(token); it != runs.end() && it->second.get() == run) runs.erase(it);
  }
  // Registers a new connection; the oldest unauthenticated one makes room
  // when there are max_unauthenticated. false: refuse it (stopping, or over
  // max_connections).
  bool admit(const std::shared_ptr<connection>& c, std::uint64_t& id) {
    std::lock_guard lock(mu);
    if (stopping || live.size() >= max_connections) return false;
    std::size_t unauthenticated = 0;
    std::shared_ptr<connection> oldest;
    for (auto& [i, other] : live) {
      if (other->run != nullptr || other->evicted) continue;
      if (!oldest) oldest = other;
      ++unauthenticated;
    }
    if (unauthenticated >= max_unauthenticated && oldest) {
      oldest->evicted = true;
      oldest->shut();
    }
    id = next_id++;
    live.emplace(id, c);
    return true;
  }
  // The connection authenticates as `run`: false when the run has its
  // max_connections_per_run already (the run counts the refusal).
  bool authenticate(const std::shared_ptr<connection>& c, const std::shared_ptr<bridge_run>& run) {
    std::lock_guard lock(mu);
    if (c->run == run.get()) return true;
    std::size_t held = 0;
    for (auto& [i, other] : live) held += other->run == run.get() ? 1 : 0;
    if (held >= max_connections_per_run) {
      ++run->refused;
      return false;
    }
    c->run = run.get();
    return true;
  }
  void release(std::uint64_t id) {
    std::lock_guard lock(mu);
    live.erase(id);
  }
  void shut_all() {
    std::lock_guard lock(mu);
    stopping = true;
    for (auto& [id, c] : live) c->shut();
  }
};

namespace {

using impl_ptr = std::shared_ptr<tool_bridge::impl>;
using conn_ptr = std::shared_ptr<connection>;

// The reply line to one well-formed request, or nullopt when the bridge is
// stopping (the connection then ends unanswered).
net::awaitable<std::optional<std::string>> answer(impl_ptr self, conn_ptr c, protocol::request req) {
  auto run = self->find(req.token);
  if (!run) co_return protocol::refusal("unknown run token");
  if (!self->authenticate(c, run)) co_return protocol::refusal("too many connections for this run");
  if (req.kind == protocol::op::list) co_return protocol::list_reply(run->tools);
  if (!run->offers(req.tool)) co_return protocol::refusal("the run offers no tool \"" + req.tool + "\"");
  auto call = std::make_shared<pending_call>(c->socket.get_executor(), std::move(req.tool),
                                             json::value(std::move(req.arguments)));
  c->waiting = call;
  submit(run, call);
  auto [ec, line] = co_await call->done.async_receive(use_tuple);
  c->waiting.reset();
  if (ec || self->is_stopping()) co_return std::nullopt;
  co_return std::move(line);
}

net::awaitable<bool> send(conn_ptr c, std::string line) {
  auto [ec, n] = co_await net::async_write(c->socket, net::buffer(line), use_tuple);
  co_return !ec;
}

// Closes the connection unless a request line arrives within `d`.
void await_request(const conn_ptr& c, std::chrono::milliseconds d) {
  c->deadline.expires_after(d);
  c->deadline.async_wait([weak = std::weak_ptr<connection>(c)](boost::system::error_code ec) {
    if (ec) return;  // a request came (or the connection ended)
    if (auto c = weak.lock()) c->close_now();
  });
}

// Lines in, replies out, until the peer leaves, a line is refused with a
// close, waits too long, or the bridge stops.
net::awaitable<void> converse(impl_ptr self, conn_ptr c) {
  for (bool first = true;; first = false) {
    if (c->buffer.find('\n') == std::string::npos)
      await_request(c, first ? tool_bridge::auth_timeout : tool_bridge::idle_timeout);
    auto [ec, n] = co_await net::async_read_until(
        c->socket, net::dynamic_buffer(c->buffer, tool_bridge::max_line_bytes + 1), '\n', use_tuple);
    if (self->is_stopping()) co_return;
    if (ec == net::error::not_found) {
      co_await send(c, protocol::refusal("a request line is longer than " +
                                         std::to_string(tool_bridge::max_line_bytes) + " bytes"));
      co_return;
    }
    if (ec) co_return;  // the peer left, or waited too long (a partial last line is dropped)
    c->deadline.cancel();
    std::string line = c->buffer.substr(0, n - 1);
    c->buffer.erase(0, n);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    auto req = protocol::parse_request(line);
    if (!req) {
      co_await send(c, protocol::refusal(req.error().message));
      co_return;
    }
    auto reply = co_await answer(self, c, std::move(*req));
    if (!reply || !co_await send(c, std::move(*reply))) co_return;
  }
}

net::awaitable<void> serve(impl_ptr self, conn_ptr c, std::uint64_t id) {
  try {
    co_await converse(self, c);
  } catch (const std::exception& e) {  // a bug: this connection ends, the others go on
    spdlog::error("tool bridge: a connection failed: {}", e.what());
  }
  c->close_now();
  self->release(id);
  self->running.leave();
}

// Answers a connection over the bound without a coroutine: the refusal fits
// an empty send buffer, and the descriptor is closed before the next accept.
void refuse_now(local::socket& socket) {
  boost::system::error_code ec;
  socket.non_blocking(true, ec);
  const auto line = protocol::refusal("too many connections to the tool bridge");
  net::write(socket, net::buffer(line), ec);
  socket.shutdown(local::socket::shutdown_both, ec);
  socket.close(ec);
}

void spawn_connection(const impl_ptr& self, local::socket socket) {
  auto c = std::make_shared<connection>(std::move(socket));
  std::uint64_t id = 0;
  if (!self->admit(c, id)) {
    refuse_now(c->socket);
    spdlog::warn("tool bridge: refused a connection ({} open, or stopping)", tool_bridge::max_connections);
    return;
  }
  if (!self->running.enter()) {  // stop() began after admit
    self->release(id);
    c->close_now();
    return;
  }
  const auto ex = c->socket.get_executor();
  net::co_spawn(ex, serve(self, std::move(c), id), [](const std::exception_ptr& e) { log_failure("a connection", e); });
}

net::awaitable<void> accept_loop(impl_ptr self) {
  for (;;) {
    auto [ec, socket] =
        co_await self->acceptor.async_accept(net::any_io_executor(net::make_strand(self->executor)), use_tuple);
    if (self->is_stopping() || !self->acceptor.is_open()) break;
    if (ec) {  // out of descriptors, …: breathe, then accept again
      spdlog::warn("tool bridge: accept failed: {}", ec.message());
      self->backoff.expires_after(accept_backoff);
      co_await self->backoff.async_wait(use_tuple);
      continue;
    }
    set_cloexec(socket.native_handle());
    spawn_connection(self, std::move(socket));
  }
  self->running.leave();
}

// On the accept strand: no accept is pending once it returns.
void close_listener(const impl_ptr& self) {
  boost::system::error_code ignored;
  self->acceptor.close(ignored);
  self->backoff.cancel();
}

}  // namespace

run_ticket& run_ticket::operator=(run_ticket&& o) noexcept {
  if (this != &o) {
    close();
    shared_ = std::move(o.shared_);
    token_ = std::move(o.token_);
  }
  return *this;
}

run_ticket::~run_ticket() { close(); }

std::string unreachable_tools(std::size_t refused) {
  return "could not reach Tether's tools: the tool bridge turned " + std::to_string(refused) +
         " of its connections away (more than " + std::to_string(tool_bridge::max_connections_per_run) +
         " at once), so a tool call may not have run";
}

std::size_t run_ticket::refused() const { return shared_ ? shared_->refused.load() : 0; }

void run_ticket::close() {
  if (!shared_) return;
  shared_->closed = true;
  if (auto bridge = shared_->bridge.lock()) bridge->forget(shared_->token, shared_.get());
  shared_.reset();
}

tool_bridge::tool_bridge(net::any_io_executor executor, std::filesystem::path socket_path)
    : impl_(std::make_shared<impl>(std::move(executor), std::move(socket_path))) {}

tool_bridge::~tool_bridge() {
  if (!impl_->started || impl_->stop_called) return;
  // The owner is expected to co_await stop(); this only closes the listener
  // and the connections if it did not (their coroutines keep impl alive).
  impl_->shut_all();
  net::post(impl_->accept_strand, [self = impl_] { close_listener(self); });
  remove_bound_file(impl_->bound);
}

result<void> tool_bridge::start() {
  if (impl_->started) return make_error(agent_errc::already_started, "start() may be called once");
  auto bound = listen_at(impl_->acceptor, impl_->path);
  if (!bound) return bound.error();
  impl_->bound = std::move(*bound);
  impl_->started = true;
  impl_->running.enter();  // the accept loop
  net::co_spawn(impl_->accept_strand, accept_loop(impl_),
                [](const std::exception_ptr& e) { log_failure("the accept loop", e); });
  return ok();
}

result<std::uint16_t> tool_bridge::tcp_port() {
  std::lock_guard lock(door_mu_);
  if (!door_) door_ = std::make_unique<tcp_door>(impl_->executor, impl_->path);
  return door_->open();
}

net::awaitable<void> tool_bridge::stop() {
  {
    std::lock_guard lock(door_mu_);
    if (door_) door_->close();
  }
  if (!impl_->started || impl_->stop_called.exchange(true)) co_return;
  impl_->shut_all();
  net::post(impl_->accept_strand, [self = impl_] { close_listener(self); });
  co_await impl_->running.close_and_wait();
  remove_bound_file(impl_->bound);
}

const std::filesystem::path& tool_bridge::socket_path() const { return impl_->path; }

run_ticket tool_bridge::open(net::any_io_executor run_executor, std::vector<tool_spec> tools, tool_handler handler) {
  auto run = std::make_shared<run_ticket::shared>();
  run->executor = std::move(run_executor);
  run->tools = std::move(tools);
  run->handler = std::move(handler);
  run->bridge = impl_;
  {
    std::lock_guard lock(impl_->mu);
    do {
      run->token = random_hex(token_bytes);
    } while (impl_->runs.contains(run->token));
    impl_->runs.emplace(run->token, run);
  }
  run_ticket ticket;
  ticket.token_ = run->token;
  ticket.shared_ = std::move(run);
  return ticket;
}

std::optional<std::vector<tool_spec>> tool_bridge::tools_of(const std::string& token) const {
  auto run = impl_->find(token);
  if (!run) return std::nullopt;
  return run->tools;
}

}  // namespace tether::runtime::agent
