// claude -p --input-format stream-json --output-format stream-json: one
// Claude Code process per session, a turn per user line (warm_dialect.h).
//
// Launch (claude_cli.h, plus): --replay-user-messages (every user line is
// echoed back, `isReplay: true`, when the agent takes it), --permission-
// prompt-tool stdio (permission checks arrive as control requests), and the
// session: `--resume ID`, or `--session-id UUID` chosen here. Claude prints
// its session id only once a turn starts (system/init), so open() reads the
// id back from the process's own command line (/proc/PID/cmdline; under
// bubblewrap that is bwrap's, which carries the same argv after `--`).
//
// The protocol, one JSON object per line:
//   → {"type":"control_request","request_id","request":{"subtype":"initialize"}}
//   ← {"type":"control_response","response":{"subtype":"success","request_id",…}}
//     With --resume of a session it does not know, claude prints instead
//     (before reading stdin) a result {is_error, num_turns: 0, errors:["No
//     conversation found with session ID: …"]} and exits 1: resume_refused.
//   → {"type":"user","message":{"role":"user","content":[{"type":"text","text"}]}}
//   ← user {isReplay: true} (taken), system/init, assistant, user
//     (tool_result), stream_event, … result {usage, total_cost_usd (the
//     process's running total), is_error, subtype}.
//   ← {"type":"control_request","request_id","request":{"subtype":"can_use_tool","tool_name","input"}}
//   → {"type":"control_response","response":{"subtype":"success","request_id",
//      "response":{"behavior":"allow","updatedInput":INPUT} | {"behavior":"deny","message"}}}
//   → {"type":"control_request","request_id","request":{"subtype":"interrupt"}}: the
//     running turn ends with a result {subtype: error_during_execution}.
//
// Steering: a user line written while a turn runs either joins that turn
// (claude puts it in the next model request as a system entry "The user sent
// a new message while you were working: …") or, when the turn ends first,
// becomes a queued turn of its own with its own result. Either way it is
// echoed when taken, so a Tether turn ends at the first result after every
// line written in it was echoed; the results before are part of it (their
// usage counts, the last one's outcome is the turn's).
#include <algorithm>
#include <array>
#include <fstream>
#include <iterator>
#include <random>

#include <fmt/format.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>

#include "process/child.h"
#include "runtime/agent/claude/cli.h"
#include "runtime/agent/errors.h"
#include "runtime/agent/json_lines.h"
#include "runtime/agent/warm_dialect.h"

namespace tether::runtime::agent {

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);
constexpr std::string_view init_request = "tether-initialize";

std::string new_uuid() {
  std::random_device rd;
  std::array<unsigned char, 16> b{};
  for (auto& c : b) c = static_cast<unsigned char>(rd());
  b[6] = static_cast<unsigned char>((b[6] & 0x0FU) | 0x40U);  // version 4
  b[8] = static_cast<unsigned char>((b[8] & 0x3FU) | 0x80U);  // RFC 4122 variant
  std::string out;
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += fmt::format("{:02x}", b[i]);
  }
  return out;
}

// The value after --session-id or --resume in the command line it was given.
std::optional<std::string> session_in_argv(const std::vector<std::string>& args) {
  for (std::size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "--session-id" || args[i] == "--resume") return args[i + 1];
  return std::nullopt;
}

std::string user_line(std::string text) {
  json::object content{{"type", "text"}, {"text", std::move(text)}};
  json::object message{{"role", "user"}, {"content", json::array{std::move(content)}}};
  return json::serialize(json::object{{"type", "user"}, {"message", std::move(message)}});
}

std::string control_response(const json::value& id, json::object response) {
  json::object r{{"subtype", "success"}, {"request_id", id}, {"response", std::move(response)}};
  return json::serialize(json::object{{"type", "control_response"}, {"response", std::move(r)}});
}

// A failed result's reason: `result`, else the subtype and `errors`.
std::string failure(const json::object& result) {
  auto message = str(result, "result");
  if (!message.empty()) return message;
  message = "claude: " + str(result, "subtype");
  if (const auto* errors = result.if_contains("errors"); errors != nullptr && errors->is_array())
    for (const auto& e : errors->as_array())
      if (e.is_string()) message += ": " + std::string(e.as_string());
  return message;
}

bool is_true(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_bool() && v->as_bool();
}

// The answer to a control request of claude's: a permission check decided
// by `policy`, anything else an error (Tether serves no other request).
std::string answer_line(const json::object& msg, agent_permissions policy) {
  const json::value id = msg.contains("request_id") ? msg.at("request_id") : json::value(nullptr);
  const auto* req = object_at(msg, "request");
  const auto subtype = req != nullptr ? str(*req, "subtype") : std::string();
  if (subtype != "can_use_tool") {
    json::object r{{"subtype", "error"}, {"request_id", id}, {"error", "Tether does not serve " + subtype}};
    return json::serialize(json::object{{"type", "control_response"}, {"response", std::move(r)}});
  }
  const auto tool = str(*req, "tool_name");
  const bool allow = dialect::is_tether_tool(tool) || policy == agent_permissions::approve_all ||
                     (policy == agent_permissions::approve_reads && claude_tool_listed(claude_read_tools, tool));
  json::object decision;
  if (allow) {
    decision["behavior"] = "allow";
    decision["updatedInput"] = req->contains("input") ? req->at("input") : json::value(json::object{});
  } else {
    decision["behavior"] = "deny";
    decision["message"] =
        fmt::format("Tether's profile does not allow {} (permissions = {})", tool, to_string(policy));
  }
  return control_response(id, std::move(decision));
}

std::string control_request(std::string_view id, std::string_view subtype) {
  return json::serialize(json::object{
      {"type", "control_request"}, {"request_id", id}, {"request", json::object{{"subtype", subtype}}}});
}

class claude_connection final : public agent_connection {
 public:
  claude_connection(asio::any_io_executor strand, process::child& proc, connect_options o)
      : proc_(proc),
        o_(std::move(o)),
        write_wait_(strand, std::chrono::steady_clock::time_point::max()),
        mapper_(make_claude_mapper()) {}

  task<result<std::string>> open(session_open o) override;
  task<result<void>> start_turn(std::string prompt) override;
  task<result<std::vector<agent_event>>> next() override;
  task<result<bool>> steer(std::string text) override;
  task<void> cancel() override;
  task<void> close() override;

 private:
  // The next non-empty line; rpc_closed at EOF, protocol when over the limit.
  task<result<std::string>> read();
  // One line to claude's stdin, after the lines already being written.
  task<result<void>> send(std::string line);
  // Answers a control request of claude's (a permission check, or one Tether does not serve).
  task<result<void>> answer(json::object msg);
  // The events of a result line; ends the turn when every line written was taken.
  std::vector<agent_event> finish(const json::object& result);
  // Waits (a few seconds at most) until claude's session file holds the
  // turn's last message: claude writes it in batches, and a turn reported
  // done before it is on disk would be lost to a SIGKILL of Tether.
  task<void> written_down();

  process::child& proc_;
  connect_options o_;
  asio::steady_timer write_wait_;  // a condition: cancelled when a write ends (several may wait)
  bool writing_ = false;
  bool closed_ = false;
  bool opened_ = false;
  std::string session_;
  std::unique_ptr<line_mapper> mapper_;
  bool running_ = false;     // a turn was started and has not ended
  bool cancelled_ = false;   // its interrupt was sent: the next result ends it
  int written_ = 0;          // user lines written in this turn (prompt and steers)
  int taken_ = 0;            // of them, echoed back by claude
  double cost_seen_ = 0;     // total_cost_usd of the last result (the process's running total)
  std::int64_t next_request_ = 1;
  std::string last_uuid_;    // of the last message claude printed (its session file names it)
};

task<void> claude_connection::written_down() {
  const auto it = o_.env.find("CLAUDE_CONFIG_DIR");
  if (!o_.home_here || it == o_.env.end() || last_uuid_.empty() || session_.empty()) co_return;
  co_await claude_session_written(it->second, session_, last_uuid_);
}

task<result<std::string>> claude_connection::read() {
  for (;;) {
    auto line = co_await proc_.read_line(process::stream::out, {o_.max_line_bytes, process::overlong_line::fail});
    if (!line) {
      if (closed_) co_return make_error(agent_errc::rpc_closed, "the connection to claude was closed");
      co_return make_error(agent_errc::protocol, "a line of output over the limit: " + line.error().message);
    }
    if (!*line) co_return make_error(agent_errc::rpc_closed, "claude closed its output (it exited)");
    if ((**line).find_first_not_of(" \t\r") == std::string::npos) continue;
    co_return std::move(**line);
  }
}

task<result<void>> claude_connection::send(std::string line) {
  while (writing_) co_await write_wait_.async_wait(use_tuple);  // never expires: woken by cancel()
  if (closed_) co_return make_error(agent_errc::rpc_closed, "the connection to claude is closing");
  writing_ = true;
  line += '\n';
  auto w = co_await proc_.write(std::move(line));
  writing_ = false;
  write_wait_.cancel();
  if (!w) co_return make_error(agent_errc::rpc_closed, "cannot write to claude: " + w.error().message);
  co_return ok();
}

task<result<void>> claude_connection::answer(json::object msg) {
  const auto policy = o_.settings != nullptr ? o_.settings->permissions : agent_permissions::deny_all;
  co_return co_await send(answer_line(msg, policy));
}

task<result<std::string>> claude_connection::open(session_open o) {
  if (opened_) co_return session_;
  if (o.resume) {
    session_ = *o.resume;
  } else if (auto id = session_in_argv(o_.argv)) {
    session_ = std::move(*id);
  } else {
    co_return make_error(agent_errc::protocol, "claude was started without --session-id (see prepare())");
  }
  TETHER_CO_TRY(co_await send(control_request(init_request, "initialize")));
  for (;;) {
    auto line = co_await read();
    // Exiting at once with "No conversation found with session ID" on stderr
    // is how claude also says it has no such session (one it never wrote
    // down: claude writes its session file in batches, a SIGKILL can beat it).
    if (!line && o.resume && line.error() == agent_errc::rpc_closed && !closed_)
      co_return make_error(agent_errc::resume_refused, "claude exited while resuming " + *o.resume);
    if (!line) co_return line.error();
    auto msg = parse_object(*line);
    if (!msg) co_return msg.error();
    const auto type = str(*msg, "type");
    if (type == "control_response") {
      const auto* r = object_at(*msg, "response");
      if (r == nullptr || str(*r, "request_id") != init_request) continue;
      if (str(*r, "subtype") != "success")
        co_return make_error(agent_errc::rpc_failed, "claude refused to initialize: " + str(*r, "error"));
      opened_ = true;
      co_return session_;
    }
    if (type == "result" && is_true(*msg, "is_error")) {
      // Printed before stdin is read when --resume names no session it has.
      if (o.resume) co_return make_error(agent_errc::resume_refused, failure(*msg));
      co_return make_error(agent_errc::rpc_failed, failure(*msg));
    }
    if (type == "control_request") TETHER_CO_TRY(co_await answer(*msg));
  }
}

task<result<void>> claude_connection::start_turn(std::string prompt) {
  if (!opened_) co_return make_error(agent_errc::protocol, "start_turn() before open()");
  running_ = true;
  cancelled_ = false;
  written_ = 1;
  taken_ = 0;
  co_return co_await send(user_line(std::move(prompt)));
}

std::vector<agent_event> claude_connection::finish(const json::object& result) {
  std::vector<agent_event> out;
  auto u = claude_result_usage(result);
  if (u.agent_cost_usd) {  // a running total over the process: this result's share
    const double total = *u.agent_cost_usd;
    u.agent_cost_usd = std::max(0.0, total - cost_seen_);
    cost_seen_ = total;
  }
  out.emplace_back(std::move(u));
  // A steer not yet taken is queued as a turn of its own: it is this turn's too.
  if (written_ > 1 && taken_ < written_ && !cancelled_) return out;
  running_ = false;
  if (is_true(result, "is_error"))
    out.emplace_back(turn_failed{failure(result)});
  else
    out.emplace_back(turn_done{});
  return out;
}

task<result<std::vector<agent_event>>> claude_connection::next() {
  if (!running_) co_return make_error(agent_errc::protocol, "next() without a running turn");
  for (;;) {
    auto line = co_await read();
    if (!line) co_return line.error();
    auto msg = parse_object(*line);
    if (!msg) co_return msg.error();
    const auto type = str(*msg, "type");
    if (type == "control_request") {
      TETHER_CO_TRY(co_await answer(*msg));
      continue;
    }
    if (type == "control_response" || type == "control_cancel_request") continue;
    if (type == "user" && is_true(*msg, "isReplay")) {
      ++taken_;
      continue;
    }
    if (type == "result") {
      auto evs = finish(*msg);
      if (std::any_of(evs.begin(), evs.end(), [](const auto& e) { return std::holds_alternative<turn_done>(e); }))
        co_await written_down();
      co_return evs;
    }
    if (type == "assistant" || type == "user")
      if (auto id = str(*msg, "uuid"); !id.empty()) last_uuid_ = std::move(id);
    auto evs = mapper_->feed(*line);
    if (!evs) co_return evs.error();
    if (!evs->empty()) co_return std::move(*evs);
  }
}

task<result<bool>> claude_connection::steer(std::string text) {
  if (!running_ || cancelled_) co_return false;
  ++written_;
  auto w = co_await send(user_line(std::move(text)));
  if (!w) {
    --written_;
    co_return w.error();
  }
  co_return true;
}

task<void> claude_connection::cancel() {
  if (!running_ || cancelled_) co_return;
  cancelled_ = true;
  (void)co_await send(control_request("tether-interrupt-" + std::to_string(next_request_++), "interrupt"));
}

task<void> claude_connection::close() {
  // Nothing to wait for: the connection runs no coroutine of its own, and
  // claude ends its session and exits at EOF (the runtime stops it if not).
  closed_ = true;
  proc_.close_stdin();
  co_return;
}

class claude_stream final : public warm_dialect {
 public:
  [[nodiscard]] std::string_view program() const override { return "claude"; }
  [[nodiscard]] std::string_view key_variable() const override { return "ANTHROPIC_API_KEY"; }
  [[nodiscard]] std::string scripted_base_url(std::string_view root) const override { return std::string(root); }
  [[nodiscard]] bool can_steer() const override { return true; }
  // claude writes its session file in batches: a SIGKILL of Tether soon after
  // a turn may cut its end. A question's turn closes it (it flushes at EOF).
  [[nodiscard]] bool close_while_waiting() const override { return true; }

  result<launch> prepare(const launch_input& in) const override {
    auto l = claude_launch(in, {"--input-format", "stream-json", "--output-format", "stream-json",
                                "--replay-user-messages", "--permission-prompt-tool", "stdio"});
    if (!l) return l.error();
    if (in.resume)
      l->argv.insert(l->argv.end(), {"--resume", *in.resume});
    else
      l->argv.insert(l->argv.end(), {"--session-id", new_uuid()});
    // Permissions are answered per tool (answer()); but reads inside the
    // workspace never ask, so deny_all takes them away up front. Claude's
    // own AskUserQuestion (offered with stream-json input) would ask no one:
    // questions go through Tether's ask_user.
    std::string denied = "AskUserQuestion";
    if (in.settings->permissions == agent_permissions::deny_all) denied += " " + std::string(claude_read_tools);
    l->argv.insert(l->argv.end(), {"--disallowedTools", denied});
    for (const auto& a : in.settings->args) l->argv.push_back(a);
    return l;
  }

  [[nodiscard]] std::unique_ptr<agent_connection> connect(asio::any_io_executor strand, process::child& proc,
                                                          connect_options o) const override {
    return std::make_unique<claude_connection>(std::move(strand), proc, std::move(o));
  }
};

}  // namespace

std::unique_ptr<warm_dialect> make_claude_stream() { return std::make_unique<claude_stream>(); }

}  // namespace tether::runtime::agent
