// JSON-RPC over a child's stdio (json_rpc.h).
#include "runtime/agent/json_rpc.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "process/child.h"
#include "runtime/agent/errors.h"

namespace tether::runtime::agent {

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);
constexpr std::size_t quoted_bytes = 200;

std::string quote(std::string_view line) {
  if (line.size() <= quoted_bytes) return std::string(line);
  return std::string(line.substr(0, quoted_bytes)) + "…";
}

// Waits on `t` (a timer used as a condition) until `ready()`. `t` is a
// member of the awaiting caller's state, which outlives the await.
template <class Ready>  // NOLINTNEXTLINE(cppcoreguidelines-avoid-reference-coroutine-parameters)
asio::awaitable<void> until(asio::steady_timer& t, Ready ready,
                            std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max()) {
  while (!ready() && std::chrono::steady_clock::now() < deadline) {
    t.expires_at(deadline);
    co_await t.async_wait(use_tuple);
  }
}

}  // namespace

std::shared_ptr<json_rpc> json_rpc::make(asio::any_io_executor strand, process::child& proc, rpc_options o,
                                         rpc_handlers h) {
  return std::make_shared<json_rpc>(std::move(strand), proc, std::move(o), std::move(h));
}

json_rpc::json_rpc(asio::any_io_executor strand, process::child& proc, rpc_options o, rpc_handlers h)
    : strand_(std::move(strand)), proc_(proc), o_(std::move(o)), h_(std::move(h)), idle_(strand_) {}

json_rpc::~json_rpc() = default;

void json_rpc::start() {
  if (started_) return;
  started_ = true;
  ++running_;
  auto self = shared_from_this();
  asio::co_spawn(strand_, [self]() -> asio::awaitable<void> { co_await self->read_loop(); }, asio::detached);
}

asio::awaitable<void> json_rpc::read_loop() {
  for (;;) {
    auto line = co_await proc_.read_line(process::stream::out, {o_.max_line_bytes, process::overlong_line::fail});
    if (!line) {
      if (stdin_closed_)
        end({agent_errc::rpc_closed, "the agent's output was closed"});
      else
        end({agent_errc::protocol, "a line of output over the limit: " + line.error().message});
      break;
    }
    if (!*line) {
      end({agent_errc::rpc_closed, "the agent closed its output (it exited)"});
      break;
    }
    const auto& text = **line;
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::error_code ec;
    auto v = json::parse(text, ec);
    if (ec || !v.is_object()) {
      end({agent_errc::protocol, "not a JSON-RPC message: " + quote(text)});
      break;
    }
    dispatch(std::move(v.as_object()));
  }
  --running_;
  idle_.cancel();
}

void json_rpc::dispatch(json::object msg) {
  const auto* method = msg.if_contains("method");
  const auto* id = msg.if_contains("id");
  if (method != nullptr && method->is_string()) {
    std::string name(method->as_string());
    // Read only: object::operator[] reserves room first, which moves the
    // members and leaves `id` pointing at another value.
    const auto* given = msg.if_contains("params");
    json::value params = given != nullptr ? *given : json::value(json::object{});
    if (id != nullptr && !id->is_null()) {
      ++running_;
      auto self = shared_from_this();
      asio::co_spawn(strand_, serve(std::move(self), json::serialize(*id), std::move(name), std::move(params)),
                     asio::detached);
    } else if (h_.notification) {
      h_.notification(std::move(name), std::move(params));
    }
    return;
  }
  if (id == nullptr || !id->is_int64()) return;  // a response to nothing we sent: ignored
  const auto it = calls_.find(id->as_int64());
  if (it == calls_.end()) return;
  auto p = it->second;
  calls_.erase(it);
  if (const auto* err = msg.if_contains("error"); err != nullptr && err->is_object()) {
    std::string text;
    if (const auto* c = err->as_object().if_contains("code"); c != nullptr && c->is_int64())
      text = std::to_string(c->as_int64()) + ": ";
    if (const auto* m = err->as_object().if_contains("message"); m != nullptr && m->is_string())
      text += std::string(m->as_string());
    if (const auto* d = err->as_object().if_contains("data"); d != nullptr && !d->is_null())
      text += " (" + quote(json::serialize(*d)) + ")";
    p->reply = tether::error(agent_errc::rpc_failed, std::move(text));
  } else {
    const auto* result = msg.if_contains("result");
    p->reply = result != nullptr ? *result : json::value();
  }
  p->wake.cancel();
}

namespace {

// A response line: the id as the request gave it, its result or error.
std::string response_line(bool jsonrpc_member, const std::string& id, result<json::value> r) {
  json::object reply;
  if (jsonrpc_member) reply["jsonrpc"] = "2.0";
  std::error_code ec;
  reply["id"] = json::parse(id, ec);
  if (r) {
    reply["result"] = std::move(*r);
  } else {
    const bool unknown = r.error().code == std::make_error_code(std::errc::function_not_supported);
    json::object err;
    err["code"] = unknown ? -32601 : -32603;
    err["message"] = r.error().message;
    reply["error"] = std::move(err);
  }
  return json::serialize(reply);
}

}  // namespace

asio::awaitable<void> json_rpc::serve(std::shared_ptr<json_rpc> self, std::string id, std::string method,
                                      json::value params) {
  result<json::value> r = tether::error(std::make_error_code(std::errc::function_not_supported),
                                        "method not found: " + method);
  if (self->h_.request) r = co_await self->h_.request(method, std::move(params));
  auto line = response_line(self->o_.jsonrpc_member, id, std::move(r));
  if (!self->ended_) (void)co_await self->send(std::move(line));
  --self->running_;
  self->idle_.cancel();
}

asio::awaitable<result<void>> json_rpc::send(std::string line) {
  if (stdin_closed_) co_return tether::error(agent_errc::rpc_closed, "the connection to the agent is closing");
  auto p = std::make_shared<pending>(strand_);
  line += '\n';
  out_.emplace_back(std::move(line), p);
  if (!writing_) {
    writing_ = true;
    ++running_;
    auto self = shared_from_this();
    asio::co_spawn(strand_, [self]() -> asio::awaitable<void> { co_await self->write_loop(); }, asio::detached);
  }
  co_await until(p->wake, [&] { return p->reply.has_value(); });
  if (!*p->reply) co_return p->reply->error();
  co_return ok();
}

asio::awaitable<void> json_rpc::write_loop() {
  while (!out_.empty()) {
    auto [line, p] = std::move(out_.front());
    out_.pop_front();
    if (auto w = co_await proc_.write(std::move(line)); !w)
      p->reply = tether::error(agent_errc::rpc_closed, "cannot write to the agent: " + w.error().message);
    else
      p->reply = json::value();
    p->wake.cancel();
  }
  writing_ = false;
  --running_;
  idle_.cancel();
}

asio::awaitable<result<json::value>> json_rpc::call(std::string method, json::value params) {
  if (ended_) co_return *ended_;
  const auto id = next_id_++;
  auto p = std::make_shared<pending>(strand_);
  calls_.emplace(id, p);
  json::object msg;
  if (o_.jsonrpc_member) msg["jsonrpc"] = "2.0";
  msg["id"] = id;
  msg["method"] = method;
  msg["params"] = std::move(params);
  if (auto w = co_await send(json::serialize(msg)); !w) {
    calls_.erase(id);
    co_return w.error();
  }
  co_await until(p->wake, [&] { return p->reply.has_value(); });
  co_return std::move(*p->reply);
}

asio::awaitable<result<void>> json_rpc::notify(std::string method, json::value params) {
  if (ended_) co_return *ended_;
  json::object msg;
  if (o_.jsonrpc_member) msg["jsonrpc"] = "2.0";
  msg["method"] = method;
  msg["params"] = std::move(params);
  co_return co_await send(json::serialize(msg));
}

void json_rpc::end(tether::error why) {
  if (ended_) return;
  ended_ = why;
  auto calls = std::move(calls_);
  calls_.clear();
  for (auto& [id, p] : calls) {
    p->reply = why;
    p->wake.cancel();
  }
  if (h_.closed) h_.closed(why);
}

asio::awaitable<void> json_rpc::close() {
  const auto deadline = std::chrono::steady_clock::now() + o_.drain;
  if (!stdin_closed_) {
    co_await until(idle_, [&] { return !writing_; }, deadline);  // what was sent reaches the agent
    stdin_closed_ = true;
    proc_.close_stdin();
  }
  if (started_) {
    co_await until(idle_, [&] { return ended_.has_value(); }, deadline);
    if (!ended_) proc_.close_output(process::stream::out);
  }
  co_await until(idle_, [&] { return running_ == 0; });
  if (!ended_) end({agent_errc::rpc_closed, "the connection to the agent was closed"});
}

}  // namespace tether::runtime::agent
