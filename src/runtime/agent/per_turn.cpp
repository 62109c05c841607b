// The per-turn agent runtime (agent_runtime.h): one agent process per turn.
#include <signal.h>

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
#include "runtime/agent/relay/model_relay.h"
#include "runtime/agent/agent_env.h"
#include "runtime/agent/agent_runtime.h"
#include "runtime/agent/placed.h"
#include "runtime/agent/portable/keeper.h"
#include "runtime/agent/prompt.h"
#include "runtime/agent/bridge/tool_bridge.h"
#include "runtime/agent/turn_recorder.h"
#include "work/agent_tools.h"

namespace tether::runtime::agent {

namespace asio = boost::asio;
namespace json = boost::json;
using session::turn_result;
using session::turn_status;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);
constexpr auto stderr_drain = std::chrono::seconds(1);
constexpr auto garbage_grace = std::chrono::seconds(2);

// What one turn shares between its coroutines (all on the turn's executor).
struct turn_state {
  turn_state(const asio::any_io_executor& ex, std::shared_ptr<turn_recorder> r)
      : executor(ex), rec(std::move(r)), watchdog(ex), err(ex) {}

  asio::any_io_executor executor;
  std::shared_ptr<turn_recorder> rec;
  std::unique_ptr<process::child> proc;
  std::shared_ptr<session::turn_place> place;  // set when the agent runs in an environment
  std::chrono::milliseconds idle{600'000};
  std::chrono::steady_clock::time_point last_output = std::chrono::steady_clock::now();
  asio::steady_timer watchdog;
  bool timed_out = false;
  bool interrupted = false;
  bool finished = false;  // run_turn is returning
  stderr_tail err;
};
using state_ptr = std::shared_ptr<turn_state>;

// `sig` to the agent. In an environment the program there gets it (the
// local child is only its relay, which ends when it does); SIGKILL goes to
// the relay too, so a turn never waits on an environment that stopped
// answering.
void signal_agent(turn_state& st, int sig) {
  if (st.place) {
    st.place->signal(st.proc->pid(), sig);
    if (sig != SIGKILL) return;
  }
  st.proc->signal(sig);
}

// What is left of the turn after its agent was killed: a descendant that
// escaped the group (and any sandbox) may still hold the output pipes open,
// so the reads would never see their end. After `patience` they are
// cancelled and the turn ends with what it has.
constexpr std::chrono::milliseconds after_kill{3000};

void end_reads_later(state_ptr st) {
  asio::co_spawn(
      st->executor,
      [st]() -> asio::awaitable<void> {
        asio::steady_timer t(st->executor);
        t.expires_after(after_kill);
        co_await t.async_wait(use_tuple);
        if (!st->finished && st->proc) {
          spdlog::warn("agent: pid {} was killed but its output stays open after {} ms: no longer read",
                       st->proc->pid(), after_kill.count());
          st->proc->cancel();
        }
      },
      asio::detached);
}

// Kills the agent when it prints nothing for `idle`.
asio::awaitable<void> watch_idle(state_ptr st) {
  while (!st->finished) {
    st->watchdog.expires_at(st->last_output + st->idle);
    co_await st->watchdog.async_wait(use_tuple);  // cancelled when the turn ends
    if (st->finished) break;
    if (std::chrono::steady_clock::now() - st->last_output >= st->idle) {
      st->timed_out = true;
      signal_agent(*st, SIGKILL);
      end_reads_later(st);
      break;
    }
  }
}

// SIGTERM to the agent's group, SIGKILL after the grace.
asio::awaitable<void> interrupt(state_ptr st, std::chrono::milliseconds grace) {
  if (st->finished || !st->proc) co_return;
  st->interrupted = true;
  signal_agent(*st, SIGTERM);
  asio::steady_timer t(st->executor);
  t.expires_after(grace);
  co_await t.async_wait(use_tuple);
  if (st->finished) co_return;
  signal_agent(*st, SIGKILL);
  end_reads_later(st);
}

class per_turn_runtime final : public session::runtime {
 public:
  per_turn_runtime(std::unique_ptr<dialect> d, agent_options o) : dialect_(std::move(d)), o_(std::move(o)) {
    o_.endpoint.key_variable = std::string(dialect_->key_variable());
  }

  [[nodiscard]] std::string name(std::string_view profile) const override {
    (void)profile;
    return o_.kind;
  }

  session::task<turn_result> run_turn(session::turn_context ctx, std::shared_ptr<session::turn_host> host) override;
  session::task<void> forget(session_id s) override {
    if (o_.states != nullptr) o_.states->forget(s);
    co_return;
  }

 private:
  std::unique_ptr<dialect> dialect_;
  agent_options o_;
};

session::task<turn_result> per_turn_runtime::run_turn(session::turn_context ctx,
                                                      std::shared_ptr<session::turn_host> host) {
  const auto ex = co_await asio::this_coro::executor;
  const std::string& kind = o_.kind;
  turn_facts facts{kind, std::string(dialect_->program()), o_.api_key, o_.endpoint.model, &o_.prices,
                   last_seq(ctx).value, {}};
  auto rec = std::make_shared<turn_recorder>(ex, host, std::move(facts));
  auto st = std::make_shared<turn_state>(ex, rec);
  st->idle = std::chrono::milliseconds(o_.settings.idle_timeout_ms);
  if (host->stop_token().stop_requested()) co_return rec->interrupted();

  // In an environment: its workspace and the session's home there.
  const std::shared_ptr<session::turn_place> place = ctx.place;
  st->place = place;
  auto dirs = place ? result<agent_dirs>(agent_dirs{place->home(), place->workspace()})
                    : prepare_dirs(o_.data_dir, ctx.session, ctx.workspace);
  if (!dirs) co_return co_await rec->fail(dirs.error().message, {});
  if (o_.work != nullptr) {
    auto t = co_await o_.work->task_of(ctx.session);
    if (!t) co_return co_await rec->fail("reading the session's task: " + t.error().message, {});
    rec->set_task(o_.work, std::move(*t));
  }

  run_ticket ticket;
  launch_input in;
  in.program = o_.program;
  in.home = dirs->home;
  in.workspace = dirs->workspace;
  // Another node may have run the agent session last: its state comes first.
  if (!place && o_.states != nullptr && can_resume(ctx, kind)) {
    const bool here = co_await o_.states->prepare(ctx.session, kind, *ctx.binding, dirs->home, dirs->workspace, host);
    if (!here) ctx.binding.reset();  // a new agent session, with the whole transcript
  }
  in.prompt = render_prompt(ctx, kind);
  if (can_resume(ctx, kind)) in.resume = ctx.binding->external_session_id;
  in.endpoint = o_.endpoint;
  auto relay = open_relay(o_, in);  // the turn's grant: its token dies with the turn
  rec->meter(relay);
  if (place) {
    auto reached = co_await reach_relay(place, &o_, relay.open(), &in);
    if (!reached) co_return co_await rec->fail(reached.error().message, {});
  }
  const auto settings = rec->settings_for(o_.settings);  // lives until the turn returns
  in.settings = &settings;
  if (o_.bridge != nullptr) {
    std::weak_ptr<turn_recorder> weak = rec;
    ticket = o_.bridge->open(ex, rec->tool_specs(),
                             [weak](std::string tool, json::value args) -> asio::awaitable<tool_reply> {
                               auto r = weak.lock();
                               if (!r) co_return tool_reply{"this turn is over", true};
                               co_return co_await r->call(std::move(tool), std::move(args));
                             });
    if (place) {
      std::string who = kind + " turn of " + ctx.session.str();
      std::string token = ticket.token();
      in.mcp = co_await placed_tools(place, &o_, std::move(token), std::move(who));
    } else {
      in.mcp = mcp_server{o_.tether_program,
                          {{"TETHER_TOOLS_SOCKET", o_.bridge->socket_path().string()},
                           {"TETHER_RUN_TOKEN", ticket.token()}}};
    }
  }
  std::vector<std::pair<std::string, std::string>> home_files;
  if (place) in.home_files = &home_files;
  auto launched = dialect_->prepare(in);
  if (!launched) co_return co_await rec->fail(launched.error().message, {});
  std::string prompt_file;
  if (place) {
    home_files.emplace_back("prompt-" + ctx.execution.str() + ".txt", in.prompt);
    prompt_file = (dirs->home / home_files.back().first).string();
    const std::filesystem::path home = dirs->home;
    auto put = co_await put_home_files(place, home, std::move(home_files));
    if (!put) co_return co_await rec->fail(put.error().message, {});
  }
  {
    auto proc = place ? spawn_placed_agent(ex, o_, *place, *dirs, *launched, relay, prompt_file)
                      : spawn_agent(ex, o_, *dirs, *launched, relay);
    if (!proc) co_return co_await rec->fail(proc.error().message, {});
    st->proc = std::move(proc).value();
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
  asio::co_spawn(ex, [st]() -> asio::awaitable<void> { co_await st->err.read(*st->proc); }, asio::detached);
  asio::co_spawn(ex, watch_idle(st), asio::detached);
  if (!place) {  // in an environment it reads its prompt from prompt_file
    if (auto w = co_await st->proc->write(in.prompt); !w)
      spdlog::debug("agent: {} did not take its prompt: {}", kind, w.error().message);
    st->proc->close_stdin();
  }

  auto mapper = dialect_->mapper();
  std::optional<std::string> broken;  // output that is not the protocol
  bool record_failed = false;
  while (!broken && !record_failed) {
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
    if (auto r = co_await rec->take(std::move(*evs)); !r) record_failed = true;
  }
  // Garbage: it may be dying (a crash prints its reason to stderr as it
  // goes), so it gets a moment to exit on its own before it is stopped.
  if (broken) co_await st->proc->wait_exit(std::chrono::steady_clock::now() + garbage_grace);
  if (record_failed) signal_agent(*st, SIGKILL);
  const auto exit = co_await st->proc->stop();
  if (!place) forget_agent(o_, pid);
  st->finished = true;
  rec->finish();
  st->watchdog.cancel();
  co_await st->err.drain(*st->proc, stderr_drain);  // what it said last, before the pipe closed
  const auto turned_away = ticket.refused();
  ticket.close();
  const auto tail = st->err.tail();
  if (!place && o_.states != nullptr && !record_failed) {
    std::string agent_session = !rec->bound().empty() ? rec->bound() : in.resume.value_or(std::string());
    co_await o_.states->save(ctx.session, kind, std::move(agent_session), ctx.generation, dirs->home,
                             dirs->workspace, host);
  }

  if (st->interrupted || host->stop_token().stop_requested()) co_return rec->interrupted();
  if (record_failed) co_return rec->failed_recording();
  if (broken) co_return co_await rec->fail("printed something that is not its JSON output (" + *broken + ")", tail);
  if (st->timed_out)
    co_return co_await rec->fail(fmt::format("printed nothing for {} ms (idle_timeout_ms): stopped", st->idle.count()),
                                 tail);
  if (rec->agent_error()) co_return co_await rec->fail(*rec->agent_error(), tail);
  if (!exit.success()) co_return co_await rec->fail("exited with " + exit.describe(), tail);
  if (!rec->done()) co_return co_await rec->fail("ended without completing the turn (" + exit.describe() + ")", tail);
  if (turned_away > 0) co_return co_await rec->fail(unreachable_tools(turned_away), tail);
  co_return co_await rec->complete();
}

}  // namespace

std::unique_ptr<session::runtime> make_per_turn_runtime(std::unique_ptr<dialect> d, agent_options o) {
  return std::make_unique<per_turn_runtime>(std::move(d), std::move(o));
}

}  // namespace tether::runtime::agent
