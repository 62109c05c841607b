// The Agent Client Protocol client (make_acp, warm_dialect.h): JSON-RPC 2.0
// over the agent's stdio (json_rpc.h), the same for every ACP agent; only
// the launch differs (acp_agents.cpp).
//
//   open()        initialize {protocolVersion 1, fs capabilities, clientInfo}
//                 (first call), then session/new {cwd, mcpServers} or
//                 session/load {sessionId, cwd, mcpServers}. Loading replays
//                 the history as session/update notifications: no turn runs
//                 then, so they are dropped. No loadSession capability, or an
//                 error answer → resume_refused.
//   start_turn()  session/prompt {sessionId, prompt:[{type:"text", text}]},
//                 awaited by a coroutine of the connection; its result ends
//                 the turn (acp_protocol.h maps it and the updates).
//   cancel()      session/cancel {sessionId} (a notification).
//   agent → us    session/request_permission (the profile's policy),
//                 fs/read_text_file, fs/write_text_file (confined to the
//                 workspace); anything else: method not found.
#include <deque>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>

#include "runtime/agent/acp/acp.h"
#include "runtime/agent/acp/protocol.h"
#include "runtime/agent/claude/cli.h"
#include "runtime/agent/errors.h"
#include "runtime/agent/file_work.h"
#include "runtime/agent/json_lines.h"
#include "runtime/agent/json_rpc.h"

#ifndef TETHER_VERSION
#define TETHER_VERSION "0"
#endif

namespace tether::runtime::agent {

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

// What the connection shares with its handlers and its prompt coroutine.
struct acp_state {
  acp_state(const asio::any_io_executor& ex, connect_options opts) : o(std::move(opts)), wake(ex), idle(ex) {}

  connect_options o;
  acp_turn turn;
  std::deque<agent_event> queue;      // for next()
  std::optional<tether::error> ended;  // the agent's output ended: why
  std::string session;
  bool in_turn = false;
  bool cancelled = false;
  int tasks = 0;             // prompt coroutines running
  std::uintmax_t record_at_start = 0;  // claude's session file's size when the turn began (claude_record)
  asio::steady_timer wake;   // next() waits on it
  asio::steady_timer idle;   // close() waits on it for tasks == 0

  void push(std::vector<agent_event> events) {
    for (auto& e : events) queue.push_back(std::move(e));
    wake.cancel();
  }
  [[nodiscard]] agent_permissions policy() const {
    return o.settings != nullptr ? o.settings->permissions : agent_permissions::deny_all;
  }
};
using state_ptr = std::shared_ptr<acp_state>;

std::optional<std::int64_t> optional_integer(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  if (v == nullptr || !v->is_number()) return std::nullopt;
  return integer(o, key);
}

json::object permission_answer(acp_state& st, const json::object& params) {
  const json::object cancelled{{"outcome", json::object{{"outcome", "cancelled"}}}};
  if (st.cancelled) return cancelled;
  std::string kind;
  std::string call_id;
  if (const auto* call = object_at(params, "toolCall")) {
    call_id = str(*call, "toolCallId");
    kind = str(*call, "kind");
    if (kind.empty()) kind = st.turn.tool_kind(call_id);
  }
  const auto* options = params.if_contains("options");
  if (options == nullptr || !options->is_array()) return cancelled;
  auto id = pick_permission(st.policy(), kind, options->as_array());
  if (!id) return cancelled;
  // An allowed call runs now: some agents (claude-agent-acp) never report it
  // in progress, only pending and then done.
  for (const auto& o : options->as_array())
    if (o.is_object() && str(o.as_object(), "optionId") == *id && str(o.as_object(), "kind").starts_with("allow") &&
        st.in_turn)
      st.push(st.turn.approved(call_id));
  return json::object{{"outcome", json::object{{"outcome", "selected"}, {"optionId", *id}}}};
}

// The agent's fs/* requests: file work, done on file_work's pool with a
// deadline (a FIFO or a hung mount must not stop an I/O thread).
std::function<result<json::value>()> file_request(const acp_state& st, std::string_view method,
                                                  const json::object& p) {
  if (method == "fs/read_text_file") {
    return [ws = st.o.workspace, path = str(p, "path"), line = optional_integer(p, "line"),
            limit = optional_integer(p, "limit")]() -> result<json::value> {
      auto text = read_text_file(ws, path, line, limit);
      if (!text) return text.error();
      json::object out;
      out["content"] = std::move(*text);
      return json::value(std::move(out));
    };
  }
  if (method == "fs/write_text_file") {
    return [ws = st.o.workspace, policy = st.policy(), path = str(p, "path"),
            content = str(p, "content")]() -> result<json::value> {
      auto w = write_text_file(ws, policy, path, content);
      if (!w) return w.error();
      return json::value(json::object{});
    };
  }
  return {};
}

// The agent's requests of the client.
asio::awaitable<result<json::value>> serve(state_ptr st, std::string method, json::value params) {
  static const json::object none;
  const auto& p = params.is_object() ? params.as_object() : none;
  if (method == "session/request_permission") co_return json::value(permission_answer(*st, p));
  if (auto work = file_request(*st, method, p)) co_return co_await file_work::run(std::move(work));
  co_return tether::error(std::make_error_code(std::errc::function_not_supported), "method not found: " + method);
}

rpc_handlers handlers(const state_ptr& st) {
  rpc_handlers h;
  h.notification = [st](std::string method, json::value params) {
    if (method != "session/update" || !st->in_turn || !params.is_object()) return;
    const auto& p = params.as_object();
    if (str(p, "sessionId") != st->session) return;
    if (const auto* u = object_at(p, "update")) st->push(st->turn.update(*u));
  };
  h.request = [st](std::string method, json::value params) {
    return serve(st, std::move(method), std::move(params));
  };
  h.closed = [st](const tether::error& why) {
    st->ended = why;
    st->wake.cancel();
  };
  return h;
}

// The CLAUDE_CONFIG_DIR of an agent that runs claude (claude-agent-acp), or
// empty: its session file is claude's, written in batches (claude_cli.h).
std::string claude_record(const acp_state& st) {
  if (!st.o.home_here) return {};  // in an environment: the file is there
  const auto it = st.o.env.find("CLAUDE_CONFIG_DIR");
  return it == st.o.env.end() ? std::string() : it->second;
}

// Until claude's session file holds the turn's last message (a few seconds
// at most): a turn reported done before claude wrote it down would be lost
// to a SIGKILL of Tether. `last` is that message's text ("": any assistant
// entry of the turn).
asio::awaitable<void> recorded(state_ptr st, std::string last) {
  auto config = claude_record(*st);
  if (config.empty()) co_return;
  std::string needle = R"("type":"assistant")";
  if (!last.empty()) {
    needle = json::serialize(json::value(last));  // as JSON writes it, without its quotes
    needle = needle.substr(1, needle.size() - 2);
  }
  co_await claude_session_written(std::move(config), st->session, std::move(needle), st->record_at_start);
}

asio::awaitable<void> run_prompt(std::shared_ptr<json_rpc> rpc, state_ptr st, json::object params) {
  auto r = co_await rpc->call("session/prompt", std::move(params));
  if (r) {
    auto evs = st->turn.finish(*r);
    std::string last;
    for (const auto& e : evs)
      if (const auto* m = std::get_if<agent_message>(&e)) last = m->text;
    if (!st->cancelled) co_await recorded(st, std::move(last));
    st->push(std::move(evs));
  }
  if (!r && r.error() == agent_errc::rpc_failed)
    st->push(st->turn.fail("the agent failed the turn: " + r.error().message));
  // Otherwise the agent's output ended: next() says so after what came before.
  st->in_turn = false;
  --st->tasks;
  st->idle.cancel();
}

class acp_connection final : public agent_connection {
 public:
  acp_connection(asio::any_io_executor strand, process::child& proc, connect_options o)
      : strand_(std::move(strand)), st_(std::make_shared<acp_state>(strand_, std::move(o))) {
    rpc_options ro;
    ro.jsonrpc_member = true;
    ro.max_line_bytes = st_->o.max_line_bytes;
    rpc_ = json_rpc::make(strand_, proc, ro, handlers(st_));
  }

  task<result<std::string>> open(session_open o) override {
    if (st_->ended) co_return *st_->ended;
    if (!initialized_) {
      rpc_->start();
      auto r = co_await rpc_->call("initialize", initialize_params());
      if (!r) co_return r.error();
      if (const auto* caps = r->is_object() ? object_at(r->as_object(), "agentCapabilities") : nullptr)
        if (const auto* load = caps->if_contains("loadSession"); load != nullptr && load->is_bool())
          can_load_ = load->as_bool();
      initialized_ = true;
    }
    json::object params{{"cwd", st_->o.workspace.string()}, {"mcpServers", mcp_servers()}};
    if (o.resume) {
      if (!can_load_) co_return tether::error(agent_errc::resume_refused, "the agent cannot load sessions");
      params["sessionId"] = *o.resume;
      auto r = co_await rpc_->call("session/load", std::move(params));
      if (!r && r.error() == agent_errc::rpc_failed)
        co_return tether::error(agent_errc::resume_refused,
                                "the agent did not load session " + *o.resume + ": " + r.error().message);
      if (!r) co_return r.error();
      st_->session = *o.resume;
      co_return st_->session;
    }
    auto r = co_await rpc_->call("session/new", std::move(params));
    if (!r) co_return r.error();
    auto id = r->is_object() ? str(r->as_object(), "sessionId") : std::string();
    if (id.empty()) co_return tether::error(agent_errc::protocol, "session/new answered without a sessionId");
    st_->session = id;
    co_return id;
  }

  task<result<void>> start_turn(std::string prompt) override {
    if (st_->ended) co_return *st_->ended;
    if (st_->session.empty()) co_return tether::error(util_errc::invalid_argument, "no agent session: open() first");
    if (st_->in_turn) co_return tether::error(util_errc::invalid_argument, "a turn is already running");
    st_->turn.begin();
    if (const auto config = claude_record(*st_); !config.empty())
      st_->record_at_start = claude_session_size(config, st_->session);
    st_->in_turn = true;
    st_->cancelled = false;
    ++st_->tasks;
    json::object params{{"sessionId", st_->session},
                        {"prompt", json::array{json::object{{"type", "text"}, {"text", std::move(prompt)}}}}};
    asio::co_spawn(strand_, run_prompt(rpc_, st_, std::move(params)), asio::detached);
    co_return ok();
  }

  task<result<std::vector<agent_event>>> next() override {
    for (;;) {
      if (!st_->queue.empty()) {
        std::vector<agent_event> out(std::make_move_iterator(st_->queue.begin()),
                                     std::make_move_iterator(st_->queue.end()));
        st_->queue.clear();
        co_return out;
      }
      if (st_->ended) co_return *st_->ended;
      st_->wake.expires_at(std::chrono::steady_clock::time_point::max());
      co_await st_->wake.async_wait(use_tuple);
    }
  }

  task<result<bool>> steer(std::string text) override {
    (void)text;  // ACP has no way into a running turn
    co_return false;
  }

  task<void> cancel() override {
    if (!st_->in_turn || st_->cancelled || st_->ended) co_return;
    st_->cancelled = true;
    json::object params;  // not a braced list inside co_await: GCC rejects it ("array used as initializer")
    params["sessionId"] = st_->session;
    (void)co_await rpc_->notify("session/cancel", std::move(params));
  }

  task<void> close() override {
    if (closed_) co_return;
    closed_ = true;
    co_await cancel();
    co_await rpc_->close();  // EOF to the agent; every pending call fails
    while (st_->tasks > 0) {
      st_->idle.expires_at(std::chrono::steady_clock::time_point::max());
      co_await st_->idle.async_wait(use_tuple);
    }
  }

 private:
  static json::object initialize_params() {
    return json::object{
        {"protocolVersion", 1},
        {"clientCapabilities",
         json::object{{"fs", json::object{{"readTextFile", true}, {"writeTextFile", true}}}, {"terminal", false}}},
        {"clientInfo", json::object{{"name", "tether"}, {"version", TETHER_VERSION}}}};
  }

  [[nodiscard]] json::array mcp_servers() const {
    json::array out;
    if (!st_->o.mcp) return out;
    json::array env;
    for (const auto& [k, v] : st_->o.mcp->env) env.push_back(json::object{{"name", k}, {"value", v}});
    out.push_back(json::object{{"name", "tether"},
                               {"command", st_->o.mcp->program.string()},
                               {"args", json::array{"mcp"}},
                               {"env", std::move(env)}});
    return out;
  }

  asio::any_io_executor strand_;
  state_ptr st_;
  std::shared_ptr<json_rpc> rpc_;
  bool initialized_ = false;
  bool can_load_ = false;
  bool closed_ = false;
};

}  // namespace

std::unique_ptr<agent_connection> connect_acp(asio::any_io_executor strand, process::child& proc, connect_options o) {
  return std::make_unique<acp_connection>(std::move(strand), proc, std::move(o));
}

}  // namespace tether::runtime::agent
