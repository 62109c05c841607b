// codex app-server: one warm codex process per session (warm_dialect.h).
//
// The protocol (codex 0.171; `codex app-server generate-json-schema` prints
// it): JSON-RPC without the "jsonrpc" member, one object per line.
//
//   → initialize {clientInfo}              ← {userAgent, codexHome, …}
//   → initialized (notification)
//   → thread/start {cwd, approvalPolicy, sandbox, model}       ← {thread: {id}}
//     or thread/resume {threadId, excludeTurns, …}              ← the same; an
//        error (-32600 "no rollout found for thread id …") when codex does
//        not know the thread: resume_refused
//   → turn/start {threadId, input: [{type: "text", text}]}     ← {turn: {id}}
//   ← item/started, item/agentMessage/delta, item/completed {item}
//   ← thread/tokenUsage/updated {tokenUsage: {total, last}}: total is the
//        thread's, from its first turn on (a resumed thread starts where it
//        was, and restates that total first), so a turn's usage is the
//        total at its end minus the total before it
//   ← error {error: {message}, willRetry}
//   ← turn/completed {turn: {status: completed|interrupted|failed, error}}
//   → turn/steer {threadId, expectedTurnId, input}: into the running turn,
//        seen by the model's next request (after a running tool ends, or
//        by restarting the request in flight); -32600 "no active turn to
//        steer" once it ended
//   → turn/interrupt {threadId, turnId}: the turn ends interrupted
//   ← approval requests, answered by the profile's permissions (decide())
//
// codex exits when its stdin closes, killing what its tools run.
#include <algorithm>
#include <deque>
#include <set>
#include <utility>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include "model/reported.h"
#include "runtime/agent/codex/common.h"
#include "runtime/agent/errors.h"
#include "runtime/agent/json_lines.h"
#include "runtime/agent/json_rpc.h"
#include "runtime/agent/warm_dialect.h"

namespace tether::runtime::agent {

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

// approve-all runs unattended; the others have codex ask before anything but
// a known-safe read, and Tether answers (decide()).
std::string thread_approval(agent_permissions p) {
  return p == agent_permissions::approve_all ? "never" : "untrusted";
}
std::string config_approval(agent_permissions p) {
  return p == agent_permissions::approve_all ? "never" : "on-request";
}

json::array text_input(std::string text) {
  return json::array{json::object{{"type", "text"}, {"text", std::move(text)}}};
}

// The requests' parameters, built outside the coroutines: GCC 12 rejects
// braced initializers holding string literals inside a coroutine.
json::object initialize_params() {
  return {{"clientInfo", json::object{{"name", "tether"}, {"title", "Tether"}, {"version", "0"}}}};
}
json::object thread_params(const connect_options& o, const std::optional<std::string>& resume) {
  const auto perms = o.settings != nullptr ? o.settings->permissions : agent_permissions::deny_all;
  json::object p{{"cwd", o.workspace.string()}, {"approvalPolicy", thread_approval(perms)},
                 {"sandbox", codex_sandbox(perms)}};
  if (!o.model.empty()) p["model"] = o.model;
  if (resume) {
    p["threadId"] = *resume;
    p["excludeTurns"] = true;
  }
  return p;
}
json::object turn_params(const std::string& thread, std::string text) {
  return {{"threadId", thread}, {"input", text_input(std::move(text))}};
}
json::object steer_params(const std::string& thread, const std::string& turn, std::string text) {
  return {{"threadId", thread}, {"expectedTurnId", turn}, {"input", text_input(std::move(text))}};
}
json::object interrupt_params(const std::string& thread, const std::string& turn) {
  return {{"threadId", thread}, {"turnId", turn}};
}

// Whether every action codex parsed out of a command only reads.
bool only_reads(const json::object& params) {
  const auto* actions = params.if_contains("commandActions");
  if (actions == nullptr || !actions->is_array() || actions->as_array().empty()) return false;
  for (const auto& a : actions->as_array()) {
    if (!a.is_object()) return false;
    const auto type = str(a.as_object(), "type");
    if (type != "read" && type != "listFiles" && type != "search") return false;
  }
  return true;
}

// The answer to one of codex's requests to its client.
result<json::value> decide(agent_permissions p, std::string_view method, const json::object& params) {
  const bool all = p == agent_permissions::approve_all;
  if (method == "item/commandExecution/requestApproval") {
    const bool yes = all || (p == agent_permissions::approve_reads && only_reads(params));
    return json::value(json::object{{"decision", yes ? "accept" : "decline"}});
  }
  if (method == "item/fileChange/requestApproval")
    return json::value(json::object{{"decision", all ? "accept" : "decline"}});
  if (method == "execCommandApproval" || method == "applyPatchApproval")  // the older protocol's
    return json::value(json::object{{"decision", all ? "approved" : "denied"}});
  if (method == "item/permissions/requestApproval") {
    const auto* asked = params.if_contains("permissions");
    return json::value(json::object{{"permissions", all && asked != nullptr ? *asked : json::object{}},
                                    {"scope", "turn"}});
  }
  if (method == "mcpServer/elicitation/request") {  // Tether's own tools are always allowed
    const bool yes = all || str(params, "serverName") == "tether";
    return json::value(json::object{{"action", yes ? "accept" : "decline"}, {"content", yes ? json::value(json::object{}) : nullptr}});
  }
  return tether::error(std::make_error_code(std::errc::function_not_supported), "Tether does not serve " + std::string(method));
}

asio::awaitable<result<json::value>> answer(agent_permissions p, std::string method, json::value params) {
  static const json::object none;
  co_return decide(p, method, params.is_object() ? params.as_object() : none);
}

struct tokens {
  std::int64_t input = 0;
  std::int64_t cached = 0;
  std::int64_t output = 0;
};
tokens read_tokens(const json::object* o) {
  if (o == nullptr) return {};
  return {model::token_count(*o, "inputTokens"), model::token_count(*o, "cachedInputTokens"),
          model::token_count(*o, "outputTokens") + model::token_count(*o, "reasoningOutputTokens")};
}

// What the notifications of one thread mean, shared with the RPC's handlers
// (which may outlive a connection destroyed without close()).
struct thread_state {
  explicit thread_state(const asio::any_io_executor& ex) : wake(ex) {}

  asio::steady_timer wake;  // cancelled when events arrive or the output ends
  std::deque<agent_event> events;
  std::string thread;
  std::string turn;      // the running turn's id, once turn/start answered
  bool running = false;  // turn/start sent, turn/completed not yet seen
  bool cancel_wanted = false;
  std::optional<tokens> total;  // the thread's, as codex last reported
  std::optional<tokens> base;   // the total before the running turn
  bool resumed = false;         // thread/resume opened the thread
  bool reported = false;        // a usage report has arrived
  std::set<std::string> started;
  std::string last_error;

  void push(agent_event e) {
    events.push_back(std::move(e));
    wake.cancel();
  }
  void begin_turn() {
    running = true;
    cancel_wanted = false;
    turn.clear();
    base = total;
    started.clear();
    last_error.clear();
  }
  void notified(std::string_view method, const json::object& params);
  void item(const json::object& it, bool completed);
  void usage(const json::object& params);
  void completed(const json::object& params);
};

void thread_state::notified(std::string_view method, const json::object& params) {
  if (thread.empty() || str(params, "threadId") != thread) return;  // another thread (a sub-agent's)
  if (method == "thread/tokenUsage/updated") return usage(params);
  if (!running) return;
  if (method == "item/started" || method == "item/completed") {
    if (const auto* it = object_at(params, "item")) item(*it, method == "item/completed");
  } else if (method == "item/agentMessage/delta") {
    if (auto d = str(params, "delta"); !d.empty()) push(text_piece{std::move(d)});
  } else if (method == "error") {
    if (const auto* w = params.if_contains("willRetry"); w != nullptr && w->is_bool() && w->as_bool()) return;
    if (const auto* e = object_at(params, "error")) last_error = str(*e, "message");
  } else if (method == "turn/completed") {
    completed(params);
  }
}

void thread_state::item(const json::object& it, bool completed) {
  const auto kind = str(it, "type");
  const auto id = str(it, "id");
  const bool first = !completed || !started.contains(id);
  if (kind == "agentMessage") {
    if (completed) push(agent_message{str(it, "text")});
  } else if (kind == "commandExecution") {
    if (first) push(tool_start{id, "exec_command", json::object{{"command", str(it, "command")}}});
    if (completed) {
      const auto status = str(it, "status");
      const auto code = integer(it, "exitCode");
      const bool ok = status == "completed" && code == 0;
      std::string output = str(it, "aggregatedOutput");
      if (status == "declined")
        output = "declined";
      else if (!ok)
        output = "exit code " + std::to_string(code) + (output.empty() ? "" : ": " + output);
      push(tool_end{id, ok, std::move(output)});
    }
  } else if (kind == "fileChange") {
    if (first) {
      const auto* changes = it.if_contains("changes");
      push(tool_start{id, "apply_patch", json::object{{"changes", changes != nullptr ? *changes : json::value()}}});
    }
    if (completed) push(tool_end{id, str(it, "status") == "completed", str(it, "status")});
  } else if (kind == "mcpToolCall") {
    const auto tool = str(it, "server") + "." + str(it, "tool");
    if (dialect::is_tether_tool(tool)) return;  // recorded through the bridge
    if (first) {
      const auto* args = it.if_contains("arguments");
      push(tool_start{id, tool, args != nullptr ? *args : json::value(json::object{})});
    }
    if (completed) {
      const auto* res = it.if_contains("result");
      const auto* err = object_at(it, "error");
      const bool ok = str(it, "status") == "completed" && err == nullptr;
      push(tool_end{id, ok,
                    ok ? (res != nullptr && !res->is_null() ? json::serialize(*res) : std::string())
                       : (err != nullptr ? str(*err, "message") : str(it, "status"))});
    }
  } else {
    return;
  }
  started.insert(id);
}

void thread_state::usage(const json::object& params) {
  const auto* u = object_at(params, "tokenUsage");
  if (u == nullptr) return;
  const auto now = read_tokens(object_at(*u, "total"));
  if (!std::exchange(reported, true) && resumed) {
    // A resumed thread's first report restates its total so far (before
    // thread/resume's answer, or after it, even after turn/start): the
    // baseline. A resumed thread that had no usage yet restates nothing, and
    // its first request is then taken as the baseline (counted as zero).
    total = now;
    if (running) base = now;
    return;
  }
  if (running && !base) {  // the first report this process saw: the total before its request
    const auto last = read_tokens(object_at(*u, "last"));
    base = tokens{now.input - last.input, now.cached - last.cached, now.output - last.output};
  }
  total = now;
}

void thread_state::completed(const json::object& params) {
  turn_usage u;
  if (total) {
    // A total below the baseline (a thread's count that went down) is no use, not a negative use.
    const auto before = base.value_or(tokens{});
    u.usage.input_tokens = std::max<std::int64_t>(0, total->input - before.input);
    u.usage.cached_input_tokens = std::max<std::int64_t>(0, total->cached - before.cached);
    u.usage.output_tokens = std::max<std::int64_t>(0, total->output - before.output);
  }
  push(std::move(u));
  const auto* t = object_at(params, "turn");
  const auto status = t != nullptr ? str(*t, "status") : std::string();
  if (status == "completed") {
    push(turn_done{});
  } else {
    std::string message;
    if (const auto* e = t != nullptr ? object_at(*t, "error") : nullptr) message = str(*e, "message");
    if (message.empty()) message = last_error;
    if (message.empty()) message = "codex ended the turn " + (status.empty() ? std::string("without a status") : status);
    push(turn_failed{std::move(message)});
  }
  running = false;
  turn.clear();
}

class codex_connection final : public agent_connection {
 public:
  codex_connection(asio::any_io_executor strand, process::child& proc, connect_options o)
      : o_(std::move(o)), st_(std::make_shared<thread_state>(strand)) {
    rpc_handlers h;
    h.notification = [st = st_](std::string method, json::value params) {
      if (params.is_object()) st->notified(method, params.as_object());
    };
    const auto perms = o_.settings != nullptr ? o_.settings->permissions : agent_permissions::deny_all;
    h.request = [perms](std::string method, json::value params) {
      return answer(perms, std::move(method), std::move(params));
    };
    h.closed = [st = st_](const tether::error&) { st->wake.cancel(); };
    rpc_ = json_rpc::make(std::move(strand), proc, {.jsonrpc_member = false, .max_line_bytes = o_.max_line_bytes},
                          std::move(h));
  }

  task<result<std::string>> open(session_open s) override {
    if (!initialized_) {
      rpc_->start();
      auto r = co_await rpc_->call(std::string("initialize"), initialize_params());
      if (!r) co_return r.error();
      TETHER_CO_TRY(co_await rpc_->notify(std::string("initialized"), json::object()));
      initialized_ = true;
    }
    // A resumed thread's restated usage may come before the answer.
    st_->resumed = s.resume.has_value();
    st_->reported = false;
    if (s.resume) st_->thread = *s.resume;
    auto r = co_await rpc_->call(std::string(s.resume ? "thread/resume" : "thread/start"), thread_params(o_, s.resume));
    if (!r) {
      if (s.resume && r.error() == agent_errc::rpc_failed)
        co_return tether::error(agent_errc::resume_refused, "codex cannot resume " + *s.resume + ": " + r.error().message);
      co_return r.error();
    }
    const auto* thread = r->is_object() ? object_at(r->as_object(), "thread") : nullptr;
    auto id = thread != nullptr ? str(*thread, "id") : std::string();
    if (id.empty()) co_return tether::error(agent_errc::protocol, "codex opened a thread without an id");
    st_->thread = id;
    st_->push(agent_session{id});
    co_return id;
  }

  task<result<void>> start_turn(std::string prompt) override {
    if (st_->thread.empty()) co_return tether::error(agent_errc::rpc_failed, "no codex thread is open");
    st_->begin_turn();
    auto r = co_await rpc_->call(std::string("turn/start"), turn_params(st_->thread, std::move(prompt)));
    if (!r) {
      st_->running = false;
      co_return r.error();
    }
    const auto* turn = r->is_object() ? object_at(r->as_object(), "turn") : nullptr;
    if (st_->running && turn != nullptr) {
      st_->turn = str(*turn, "id");
      if (st_->cancel_wanted) co_await cancel();
    }
    co_return ok();
  }

  task<result<std::vector<agent_event>>> next() override {
    for (;;) {
      if (!st_->events.empty()) {
        std::vector<agent_event> out(std::make_move_iterator(st_->events.begin()),
                                     std::make_move_iterator(st_->events.end()));
        st_->events.clear();
        co_return out;
      }
      if (const auto& ended = rpc_->ended()) co_return *ended;
      if (closing_) co_return tether::error(agent_errc::rpc_closed, "the connection to codex is closing");
      st_->wake.expires_at(std::chrono::steady_clock::time_point::max());
      co_await st_->wake.async_wait(use_tuple);
    }
  }

  task<result<bool>> steer(std::string text) override {
    if (!st_->running || st_->turn.empty()) co_return false;
    auto r = co_await rpc_->call(std::string("turn/steer"), steer_params(st_->thread, st_->turn, std::move(text)));
    if (!r) {
      if (r.error() == agent_errc::rpc_failed) co_return false;  // the turn ended meanwhile
      co_return r.error();
    }
    co_return true;
  }

  task<void> cancel() override {
    if (!st_->running) co_return;
    if (st_->turn.empty()) {  // turn/start not answered yet: start_turn interrupts
      st_->cancel_wanted = true;
      co_return;
    }
    // An error means the turn already ended (or codex did): next() ends it either way.
    (void)co_await rpc_->call(std::string("turn/interrupt"), interrupt_params(st_->thread, st_->turn));
  }

  task<void> close() override {
    closing_ = true;
    st_->wake.cancel();
    co_await rpc_->close();
  }

 private:
  connect_options o_;
  std::shared_ptr<thread_state> st_;
  std::shared_ptr<json_rpc> rpc_;
  bool initialized_ = false;
  bool closing_ = false;
};

class codex_app_server final : public warm_dialect {
 public:
  [[nodiscard]] std::string_view program() const override { return "codex"; }
  [[nodiscard]] std::string_view key_variable() const override { return "TETHER_MODEL_KEY"; }
  [[nodiscard]] std::string scripted_base_url(std::string_view root) const override {
    return std::string(root) + "/v1";
  }
  [[nodiscard]] bool can_steer() const override { return true; }

  result<launch> prepare(const launch_input& in) const override {
    auto codex_home = write_codex_home(in, config_approval(in.settings->permissions));
    if (!codex_home) return codex_home.error();
    launch l;
    l.env["CODEX_HOME"] = codex_home->string();
    l.argv = {in.program.string(), "app-server", "--disable", "plugins"};
    for (const auto& a : in.settings->args) l.argv.push_back(a);
    return l;
  }

  [[nodiscard]] std::unique_ptr<agent_connection> connect(asio::any_io_executor strand, process::child& proc,
                                                          connect_options o) const override {
    return std::make_unique<codex_connection>(std::move(strand), proc, std::move(o));
  }
};

}  // namespace

std::unique_ptr<warm_dialect> make_codex_app_server() { return std::make_unique<codex_app_server>(); }

}  // namespace tether::runtime::agent
