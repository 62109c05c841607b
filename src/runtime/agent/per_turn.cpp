// The per-turn agent runtime (agent_runtime.h): one agent process per turn.
#include <signal.h>

#include <deque>
#include <map>
#include <stop_token>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "process/child.h"
#include "runtime/agent/agent_env.h"
#include "runtime/agent/agent_runtime.h"
#include "runtime/agent/prompt.h"
#include "runtime/agent/tool_bridge.h"
#include "runtime/native/tools/ask_user.h"
#include "runtime/native/tools/process_records.h"
#include "session/errors.h"

namespace tether::runtime::agent {

namespace asio = boost::asio;
namespace json = boost::json;
using session::turn_result;
using session::turn_status;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);
constexpr std::size_t stderr_tail_lines = 20;
constexpr std::size_t stderr_line_bytes = 500;
constexpr std::size_t max_tool_output_bytes = 64U * 1024U;
constexpr auto stderr_drain = std::chrono::seconds(1);
constexpr auto garbage_grace = std::chrono::seconds(2);

// What the agent's ask_user call returns: no answer yet (JSON, so a model
// reading it cannot take the message for the answer).
constexpr std::string_view asked_reply =
    R"({"status":"waiting_for_user","message":"The question was sent to the user. End your turn now: do not call )"
    R"(more tools and do not keep working. The user's answer will arrive as your next message."})";

std::string capped(std::string s, std::size_t limit) {
  if (s.size() <= limit) return s;
  s.resize(limit);
  return s + "\n… (cut at " + std::to_string(limit) + " bytes)";
}

// What one turn shares between its coroutines (all on the turn's executor).
struct turn_state {
  turn_state(const asio::any_io_executor& ex, std::shared_ptr<session::turn_host> h)
      : executor(ex), host(std::move(h)), host_wait(ex), watchdog(ex), stderr_wait(ex) {}

  asio::any_io_executor executor;
  std::shared_ptr<session::turn_host> host;
  std::unique_ptr<process::child> proc;
  std::string secret;  // the model key, redacted from what is recorded

  // Host calls one at a time: the output loop and the question tool both record.
  bool host_busy = false;
  asio::steady_timer host_wait;

  std::chrono::milliseconds idle{600'000};
  std::chrono::steady_clock::time_point last_output = std::chrono::steady_clock::now();
  asio::steady_timer watchdog;
  bool timed_out = false;
  bool interrupted = false;
  bool asked = false;     // a question was recorded: the turn ends waiting
  bool finished = false;  // run_turn is returning: the question tool refuses

  std::deque<std::string> stderr_tail;
  bool stderr_done = false;
  asio::steady_timer stderr_wait;

  [[nodiscard]] std::string redacted(std::string s) const {
    if (secret.empty()) return s;
    for (auto at = s.find(secret); at != std::string::npos; at = s.find(secret, at))
      s.replace(at, secret.size(), "[redacted]");
    return s;
  }
  [[nodiscard]] std::string tail() const {
    std::string out;
    for (const auto& l : stderr_tail) out += (out.empty() ? "" : "\n") + l;
    return redacted(out);
  }
};
using state_ptr = std::shared_ptr<turn_state>;

asio::awaitable<result<std::vector<model::event>>> record(state_ptr st, std::vector<model::payload> events) {
  while (st->host_busy) {
    st->host_wait.expires_at(std::chrono::steady_clock::time_point::max());
    co_await st->host_wait.async_wait(use_tuple);
  }
  st->host_busy = true;
  auto r = co_await st->host->record(std::move(events));
  st->host_busy = false;
  st->host_wait.cancel();
  co_return r;
}

// Tether's ask_user, called by the agent through `tether mcp` and the bridge.
asio::awaitable<tool_reply> ask_user(std::weak_ptr<turn_state> weak, std::string tool, json::value args) {
  auto st = weak.lock();
  if (!st || st->finished) co_return tool_reply{"this turn is over", true};
  if (tool != "ask_user") co_return tool_reply{"unknown tool " + tool, true};
  auto payload = native::ask_user_question(args);
  if (!payload) co_return tool_reply{"invalid question: " + payload.error().message, true};
  if (st->asked) co_return tool_reply{"a question already waits for the user's answer; end your turn now", true};
  const auto call = call_id::generate();
  std::vector<model::payload> events;
  events.emplace_back(model::tool_called{call, "ask_user", std::move(args), model::tool_kind::agent});
  events.emplace_back(
      model::interaction_requested{interaction_id::generate(), call, "question", model::to_json(*payload)});
  auto r = co_await record(st, std::move(events));
  if (!r) co_return tool_reply{"Tether could not record the question: " + r.error().message, true};
  st->asked = true;
  co_return tool_reply{std::string(asked_reply), false};
}

tool_spec ask_user_spec() {
  return tool_spec{"ask_user", std::string(native::ask_user_description()), native::ask_user_parameters()};
}

asio::awaitable<void> read_stderr(state_ptr st) {
  for (;;) {
    auto line = co_await st->proc->read_line(process::stream::err, {stderr_line_bytes, process::overlong_line::split});
    if (!line || !*line) break;
    if ((**line).empty()) continue;
    st->stderr_tail.push_back(std::move(**line));
    if (st->stderr_tail.size() > stderr_tail_lines) st->stderr_tail.pop_front();
  }
  st->stderr_done = true;
  st->stderr_wait.cancel();
}

// Kills the agent when it prints nothing for `idle`.
asio::awaitable<void> watch_idle(state_ptr st) {
  while (!st->finished) {
    st->watchdog.expires_at(st->last_output + st->idle);
    co_await st->watchdog.async_wait(use_tuple);  // cancelled when the turn ends
    if (st->finished) break;
    if (std::chrono::steady_clock::now() - st->last_output >= st->idle) {
      st->timed_out = true;
      st->proc->signal(SIGKILL);
      break;
    }
  }
}

// SIGTERM to the agent's group, SIGKILL after the grace.
asio::awaitable<void> interrupt(state_ptr st, std::chrono::milliseconds grace) {
  if (st->finished || !st->proc) co_return;
  st->interrupted = true;
  st->proc->signal(SIGTERM);
  asio::steady_timer t(st->executor);
  t.expires_after(grace);
  co_await t.async_wait(use_tuple);
  if (!st->finished) st->proc->signal(SIGKILL);
}

class per_turn_runtime final : public session::runtime {
 public:
  per_turn_runtime(std::unique_ptr<dialect> d, agent_options o) : dialect_(std::move(d)), o_(std::move(o)) {
    o_.endpoint.key_variable = std::string(dialect_->key_variable());
  }

  [[nodiscard]] std::string name(std::string_view profile) const override {
    (void)profile;
    return std::string(dialect_->kind());
  }

  session::task<turn_result> run_turn(session::turn_context ctx, std::shared_ptr<session::turn_host> host) override;

 private:
  // Settles the turn as failed: step.failed with the reason (and the stderr tail).
  asio::awaitable<turn_result> fail(state_ptr st, std::string why, model::usage usage) const;

  std::unique_ptr<dialect> dialect_;
  agent_options o_;
};

asio::awaitable<turn_result> per_turn_runtime::fail(state_ptr st, std::string why, model::usage usage) const {
  auto message = std::string(dialect_->program()) + ": " + st->redacted(std::move(why));
  if (const auto tail = st->tail(); !tail.empty()) message += "\nstderr (last lines):\n" + tail;
  std::vector<model::payload> events;
  events.emplace_back(model::step_failed{message});
  (void)co_await record(st, std::move(events));
  co_return turn_result{turn_status::failed, std::move(message), usage};
}

session::task<turn_result> per_turn_runtime::run_turn(session::turn_context ctx,
                                                      std::shared_ptr<session::turn_host> host) {
  const auto ex = co_await asio::this_coro::executor;
  auto st = std::make_shared<turn_state>(ex, host);
  st->secret = o_.api_key;
  st->idle = std::chrono::milliseconds(o_.settings.idle_timeout_ms);
  const std::string kind(dialect_->kind());
  if (host->stop_token().stop_requested()) co_return turn_result{turn_status::interrupted, {}, {}};

  auto dirs = prepare_dirs(o_.data_dir, ctx.session, ctx.workspace);
  if (!dirs) co_return co_await fail(st, dirs.error().message, {});

  run_ticket ticket;
  launch_input in;
  in.program = o_.program;
  in.home = dirs->home;
  in.workspace = dirs->workspace;
  in.prompt = render_prompt(ctx, kind);
  if (can_resume(ctx, kind)) in.resume = ctx.binding->external_session_id;
  in.endpoint = o_.endpoint;
  in.settings = &o_.settings;
  if (o_.bridge != nullptr) {
    std::weak_ptr<turn_state> weak = st;
    ticket = o_.bridge->open(ex, {ask_user_spec()}, [weak](std::string tool, json::value args) {
      return ask_user(weak, std::move(tool), std::move(args));
    });
    in.mcp =
        mcp_server{o_.tether_program,
                   {{"TETHER_TOOLS_SOCKET", o_.bridge->socket_path().string()}, {"TETHER_RUN_TOKEN", ticket.token()}}};
  }
  auto launched = dialect_->prepare(in);
  if (!launched) co_return co_await fail(st, launched.error().message, {});

  process::spawn_options so;
  so.argv = std::move(launched->argv);
  so.env = agent_environment(o_, *dirs, launched->env);
  so.cwd = dirs->workspace;
  so.stdin_mode = process::input::pipe;
  so.grace = o_.grace;
  so.gate = process::start_gate::gated;
  if (o_.bwrap) {
    std::error_code ec;
    process::sandbox box;
    box.mode = process::sandbox_mode::contain;
    box.bwrap = *o_.bwrap;
    box.root = dirs->workspace;
    box.hidden = std::filesystem::weakly_canonical(o_.data_dir, ec);
    box.exposed = {dirs->home, dirs->workspace};
    if (o_.bridge != nullptr) box.exposed.push_back(o_.bridge->socket_path());
    so.sandbox = std::move(box);
  }
  const auto records = o_.data_dir / "run" / "procs";
  {
    auto spawned = native::spawn_recorded(so, records);
    if (!spawned)
      co_return co_await fail(st, "cannot start " + o_.program.string() + ": " + spawned.error().message, {});
    st->proc = std::make_unique<process::child>(ex, std::move(spawned).value());
  }
  const pid_t pid = st->proc->pid();
  spdlog::debug("agent: {} turn of {} runs as pid {}{}", kind, ctx.session.str(), pid,
                in.resume ? " (resuming " + *in.resume + ")" : std::string());

  std::vector<model::payload> started;
  started.emplace_back(model::step_started{ctx.execution, 1});
  host->record_soon(std::move(started));

  const auto grace = o_.grace;
  std::stop_callback on_stop(host->stop_token(), [st, grace] {
    asio::post(st->executor, [st, grace] { asio::co_spawn(st->executor, interrupt(st, grace), asio::detached); });
  });
  asio::co_spawn(ex, read_stderr(st), asio::detached);
  asio::co_spawn(ex, watch_idle(st), asio::detached);
  if (auto w = co_await st->proc->write(in.prompt); !w)
    spdlog::debug("agent: {} did not take its prompt: {}", kind, w.error().message);
  st->proc->close_stdin();

  auto mapper = dialect_->mapper();
  std::map<std::string, call_id> calls;  // the agent's call ids → Tether's
  model::usage usage;
  std::optional<double> agent_cost;
  std::optional<std::string> agent_error;
  std::optional<std::string> broken;  // output that is not the protocol
  std::optional<std::string> record_error;
  bool lease_lost = false;
  bool done = false;
  std::string bound;
  while (!broken && !record_error) {
    auto line = co_await st->proc->read_line(process::stream::out, {o_.max_line_bytes, process::overlong_line::fail});
    if (!line) {
      if (!st->interrupted && !st->timed_out) broken = "a line of output over the limit: " + line.error().message;
      break;
    }
    if (!*line) break;  // EOF
    st->last_output = std::chrono::steady_clock::now();
    if ((**line).empty()) continue;
    auto evs = mapper->feed(**line);
    if (!evs) {
      broken = evs.error().message;
      break;
    }
    std::vector<model::payload> events;
    for (auto& e : *evs) {
      if (auto* s = std::get_if<agent_session>(&e)) {
        if (s->id.empty() || s->id == bound) continue;
        bound = s->id;
        events.emplace_back(model::runtime_bound{kind, s->id, std::nullopt, last_seq(ctx).value, {}});
      } else if (auto* t = std::get_if<text_piece>(&e)) {
        host->publish(model::text_delta{std::move(t->text)});
      } else if (auto* m = std::get_if<agent_message>(&e)) {
        events.emplace_back(model::text_ended{message_id::generate(), st->redacted(std::move(m->text))});
      } else if (auto* ts = std::get_if<tool_start>(&e)) {
        const auto call = call_id::generate();
        calls.emplace(ts->id, call);
        events.emplace_back(model::tool_called{call, ts->tool, std::move(ts->input), model::tool_kind::agent});
      } else if (auto* te = std::get_if<tool_end>(&e)) {
        const auto it = calls.find(te->id);
        if (it == calls.end()) continue;
        auto text = st->redacted(capped(std::move(te->output), max_tool_output_bytes));
        if (te->ok)
          events.emplace_back(model::tool_succeeded{it->second, std::move(text), {}});
        else
          events.emplace_back(model::tool_failed{it->second, text.empty() ? std::string("failed") : std::move(text)});
        calls.erase(it);
      } else if (auto* u = std::get_if<turn_usage>(&e)) {
        usage.input_tokens += u->usage.input_tokens;
        usage.output_tokens += u->usage.output_tokens;
        usage.cached_input_tokens += u->usage.cached_input_tokens;
        if (u->agent_cost_usd) agent_cost = agent_cost.value_or(0) + *u->agent_cost_usd;
      } else if (auto* f = std::get_if<turn_failed>(&e)) {
        agent_error = std::move(f->message);
      } else if (std::holds_alternative<turn_done>(e)) {
        done = true;
      }
    }
    if (events.empty()) continue;
    auto r = co_await record(st, std::move(events));
    if (!r) {
      lease_lost = r.error() == session::session_errc::lease_lost;
      record_error = r.error().message;
    }
  }
  // Garbage: it may be dying (a crash prints its reason to stderr as it
  // goes), so it gets a moment to exit on its own before it is stopped.
  if (broken) co_await st->proc->wait_exit(std::chrono::steady_clock::now() + garbage_grace);
  if (record_error) st->proc->signal(SIGKILL);
  const auto exit = co_await st->proc->stop();
  native::forget_process(records, pid);
  st->finished = true;
  st->watchdog.cancel();
  if (!st->stderr_done) {  // what it said last, before the pipe closed
    st->stderr_wait.expires_after(stderr_drain);
    co_await st->stderr_wait.async_wait(use_tuple);
    st->proc->close_output(process::stream::err);
  }
  ticket.close();

  if (lease_lost || st->interrupted || host->stop_token().stop_requested())
    co_return turn_result{turn_status::interrupted, {}, usage};
  if (record_error) co_return turn_result{turn_status::failed, *record_error, usage};
  if (broken) co_return co_await fail(st, "printed something that is not its JSON output (" + *broken + ")", usage);
  if (st->timed_out)
    co_return co_await fail(st, fmt::format("printed nothing for {} ms (idle_timeout_ms): stopped", st->idle.count()),
                            usage);
  if (agent_error) co_return co_await fail(st, *agent_error, usage);
  if (!exit.success()) co_return co_await fail(st, "exited with " + exit.describe(), usage);
  if (!done) co_return co_await fail(st, "ended without completing the turn (" + exit.describe() + ")", usage);

  const auto cost = native::price_usage(o_.prices, o_.endpoint.model, usage, std::nullopt);
  usage.cost_usd = cost.usd;
  usage.cost_status = std::string(native::to_string(cost.status));
  std::vector<model::payload> events;
  model::step_ended ended{"stop", usage};
  ended.agent_cost_usd = agent_cost;
  events.emplace_back(std::move(ended));
  if (auto r = co_await record(st, std::move(events)); !r) {
    const bool lost = r.error() == session::session_errc::lease_lost;
    co_return turn_result{lost ? turn_status::interrupted : turn_status::failed, r.error().message, usage};
  }
  co_return turn_result{st->asked ? turn_status::waiting : turn_status::completed, {}, usage};
}

}  // namespace

std::unique_ptr<session::runtime> make_per_turn_runtime(std::unique_ptr<dialect> d, agent_options o) {
  return std::make_unique<per_turn_runtime>(std::move(d), std::move(o));
}

}  // namespace tether::runtime::agent
