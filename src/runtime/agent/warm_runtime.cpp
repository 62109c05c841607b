// The warm agent runtime (warm_runtime.h): one agent process per session,
// kept across turns. The turn runs on the session's strand; the process's
// I/O on its own strand, reached through on_process().
#include "runtime/agent/warm_runtime.h"

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
#include "runtime/agent/errors.h"
#include "runtime/agent/placed.h"
#include "runtime/agent/portable/keeper.h"
#include "runtime/agent/prompt.h"
#include "runtime/agent/turn_recorder.h"
#include "work/agent_tools.h"
#include "runtime/agent/warm_registry.h"

namespace tether::runtime::agent {

namespace asio = boost::asio;
namespace json = boost::json;
using session::turn_result;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);
constexpr auto stderr_patience = std::chrono::seconds(1);
constexpr auto park_patience = std::chrono::seconds(5);  // an agent's own exit at the end of its input

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Runs `f(process)` on the process's strand and resumes the caller on its own executor.
// Callers name `f` before the co_await: GCC 12 destroys a temporary
// holding strings or paths in a co_await expression twice.
template <class F>
auto on_process(process_ptr p, F f) -> decltype(f(*p)) {
  auto strand = p->strand;
  auto run = [p = std::move(p), f = std::move(f)]() mutable -> decltype(f(*p)) { co_return co_await f(*p); };
  co_return co_await asio::co_spawn(strand, std::move(run), asio::use_awaitable);
}

// One Tether turn as seen from the process: flags shared by the turn's
// coroutines (on the turn's executor) and its stop callback.
struct turn_link {
  explicit turn_link(const asio::any_io_executor& ex) : executor(ex), watchdog(ex), changed(ex) {}
  asio::any_io_executor executor;
  std::chrono::steady_clock::time_point last_activity = std::chrono::steady_clock::now();
  asio::steady_timer watchdog;
  asio::steady_timer changed;  // a delivery ended
  std::atomic<bool> finished{false};
  std::atomic<bool> interrupted{false};
  std::atomic<bool> timed_out{false};
  // The process is starting (spawned, its session not yet ready): the
  // watchdog allows start_timeout_ms, then idle_timeout_ms from the start's end.
  std::atomic<bool> starting{false};
  std::atomic<bool> timed_out_starting{false};
  // The live watch_idle: each new one (a process replaced during the start)
  // takes the next number, and an older one ends instead of re-arming the
  // shared timer, which would cancel the new one's wait, and so on.
  std::atomic<unsigned> watcher{0};
  int delivering = 0;                    // steers being delivered
  std::vector<std::string> undelivered;  // promoted steers the agent did not take
  // The process's tool-bridge refusals when the turn began, and how many
  // came during it (on the process's strand).
  std::size_t refused_before = 0;
  std::size_t turned_away = 0;
  // A turn here (no environment) whose agent state the node keeps
  // (agent_options::states): saved once the turn's process is retired or released.
  struct saving {
    session_id session;
    std::int64_t generation = 0;
    agent_dirs dirs;
  };
  std::optional<saving> save;
};
using link_ptr = std::shared_ptr<turn_link>;

// SIGKILL to the process, and where it runs in an environment, to the program there.
void kill_now(warm_process& p) {
  if (!p.proc || p.closing) return;
  if (p.place) p.place->signal(p.proc->pid(), SIGKILL);
  p.proc->signal(SIGKILL);
}

asio::awaitable<void> kill(process_ptr p) {
  kill_now(*p);
  co_return;
}

// Kills the process when the agent shows no sign of life for `idle`, or,
// while it starts, for `start`.
asio::awaitable<void> watch_idle(link_ptr l, process_ptr p, std::chrono::milliseconds idle,
                                 std::chrono::milliseconds start, unsigned mine) {
  while (!l->finished && l->watcher == mine) {
    const bool starting = l->starting;
    const auto limit = starting ? start : idle;
    l->watchdog.expires_at(l->last_activity + limit);
    co_await l->watchdog.async_wait(use_tuple);
    if (l->finished || l->watcher != mine) break;
    if (starting != l->starting) continue;  // the start ended: the idle limit from now
    if (std::chrono::steady_clock::now() - l->last_activity >= limit) {
      l->timed_out_starting = starting;
      l->timed_out = true;
      asio::co_spawn(p->strand, kill(p), asio::detached);
      break;
    }
  }
}

// Starts the turn's watchdog for `p`, ending the one watching an earlier process.
void watch(const asio::any_io_executor& ex, const link_ptr& l, process_ptr p, std::chrono::milliseconds idle,
           std::chrono::milliseconds start) {
  const unsigned mine = ++l->watcher;
  l->watchdog.cancel();
  asio::co_spawn(ex, watch_idle(l, std::move(p), idle, start, mine), asio::detached);
}

// Stop: the protocol's cancel, then SIGKILL after the grace.
asio::awaitable<void> cancel_turn(link_ptr l, process_ptr p, std::chrono::milliseconds grace) {
  if (l->finished || !p->conn || p->closing) co_return;
  l->interrupted = true;
  co_await p->conn->cancel();
  asio::steady_timer t(p->strand);
  t.expires_after(grace);
  co_await t.async_wait(use_tuple);
  if (!l->finished && p->proc && !p->closing) {
    spdlog::debug("agent: the turn of {} did not end within the grace: killing pid {}", p->session.str(), p->pid);
    kill_now(*p);
  }
}

class warm_runtime final : public session::runtime {
 public:
  warm_runtime(std::unique_ptr<warm_dialect> d, agent_options o) : dialect_(std::move(d)), o_(std::move(o)) {
    o_.endpoint.key_variable = std::string(dialect_->key_variable());
    registry_ = std::make_shared<warm_registry>(o_, static_cast<std::size_t>(o_.settings.max_processes),
                                                std::chrono::milliseconds(o_.settings.keep_alive_ms));
  }

  [[nodiscard]] std::string name(std::string_view profile) const override {
    (void)profile;
    return o_.kind;
  }
  session::task<void> stop() override { co_await registry_->stop(); }
  session::task<void> forget(session_id s) override {
    registry_->forget(s);
    if (o_.states != nullptr) o_.states->forget(s);
    co_return;
  }
  session::task<turn_result> run_turn(session::turn_context ctx, std::shared_ptr<session::turn_host> host) override;

 private:
  // On the process's strand: spawns it and opens the agent session.
  // `tools`: what the process's `tether mcp` lists for its whole life (the
  // work tools of the session's task by its mode; a plan's acceptance
  // resets the session, which ends the process).
  // In an environment (`place` not null): the relay and the tools forwarded
  // there, the dialect's home files put there, the program started there.
  asio::awaitable<result<void>> start(process_ptr p, agent_dirs dirs, std::optional<std::string> resume,
                                      std::vector<tool_spec> tools, std::shared_ptr<session::turn_place> place);
  asio::awaitable<void> deliver_steers(link_ptr l, std::shared_ptr<turn_recorder> rec, process_ptr p);
  asio::awaitable<turn_result> end(link_ptr l, std::shared_ptr<turn_recorder> rec, process_ptr p,
                                   std::optional<tether::error> broken, bool record_failed);

  std::unique_ptr<warm_dialect> dialect_;
  agent_options o_;
  std::shared_ptr<warm_registry> registry_;
};

asio::awaitable<result<void>> warm_runtime::start(process_ptr p, agent_dirs dirs, std::optional<std::string> resume,
                                                  std::vector<tool_spec> tools,
                                                  std::shared_ptr<session::turn_place> place) {
  launch_input in;
  in.program = o_.program;
  in.home = dirs.home;
  in.workspace = dirs.workspace;
  in.resume = resume;
  in.endpoint = o_.endpoint;
  in.settings = &p->settings;
  p->relay = open_relay(o_, in);  // the process's grant: its token dies with the process
  if (place) {
    auto reached = co_await reach_relay(place, &o_, p->relay.open(), &in);
    if (!reached) co_return reached.error();
  }
  if (o_.bridge != nullptr) {
    std::weak_ptr<warm_process> weak = p;
    p->ticket = o_.bridge->open(p->strand, std::move(tools),
                                [weak](std::string tool, json::value args) -> asio::awaitable<tool_reply> {
                                  auto self = weak.lock();
                                  if (!self || !self->turn) co_return tool_reply{"no turn of this session runs", true};
                                  auto rec = self->turn;
                                  auto ex = self->turn_executor;
                                  // Named before the co_await (GCC 12, see on_process).
                                  auto ask = [rec, tool = std::move(tool), args = std::move(args)]() mutable
                                      -> asio::awaitable<tool_reply> {
                                    co_return co_await rec->call(std::move(tool), std::move(args));
                                  };
                                  co_return co_await asio::co_spawn(ex, std::move(ask), asio::use_awaitable);
                                });
    if (place) {
      std::string who = o_.kind + " process of " + p->session.str();
      std::string token = p->ticket.token();
      in.mcp = co_await placed_tools(place, &o_, std::move(token), std::move(who));
    } else {
      in.mcp = mcp_server{o_.tether_program,
                          {{"TETHER_TOOLS_SOCKET", o_.bridge->socket_path().string()},
                           {"TETHER_RUN_TOKEN", p->ticket.token()}}};
    }
  }
  std::vector<std::pair<std::string, std::string>> home_files;
  if (place) in.home_files = &home_files;
  auto launched = dialect_->prepare(in);
  if (!launched) co_return launched.error();
  if (place) {
    const std::filesystem::path home = dirs.home;
    auto put = co_await put_home_files(place, home, std::move(home_files));
    if (!put) co_return put.error();
  }
  auto proc = place ? spawn_placed_agent(p->strand, o_, *place, dirs, *launched, p->relay, "")
                    : spawn_agent(p->strand, o_, dirs, *launched, p->relay);
  if (!proc) co_return proc.error();
  p->proc = std::move(proc).value();
  p->pid = p->proc->pid();
  p->started_ms = now_ms();
  registry_->watch_stderr(p);
  spdlog::debug("agent: {} process of {} runs as pid {}{}", o_.kind, p->session.str(), p->pid,
                resume ? " (resuming " + *resume + ")" : std::string());
  connect_options co;
  co.settings = &p->settings;
  co.workspace = dirs.workspace;
  co.model = o_.endpoint.model;
  co.mcp = in.mcp;
  co.max_line_bytes = o_.max_line_bytes;
  co.env = launched->env;  // what the connection shares with the process (opencode serve's password)
  co.argv = launched->argv;
  co.home_here = place == nullptr;
  if (place) co.reach_there = [place](int port) { return place->reach_there(port); };
  p->conn = dialect_->connect(p->strand, *p->proc, std::move(co));
  // Named, not a temporary in the co_await: GCC 12 destroys such
  // temporaries twice in a coroutine.
  session_open again{resume};
  auto id = co_await p->conn->open(std::move(again));
  if (!id && resume && id.error() == agent_errc::resume_refused) {
    spdlog::info("agent: {} cannot resume {} ({}): a new agent session gets the whole transcript", o_.kind,
                 *resume, id.error().message);
    p->resume_refused = true;
    session_open fresh;
    auto again_fresh = co_await p->conn->open(std::move(fresh));
    // Where resuming is how the process was started (claude's --resume), a
    // new session needs a new process: the refusal tells run_turn so.
    if (!again_fresh) co_return id.error();
    id = std::move(again_fresh);
  }
  if (!id) co_return id.error();
  p->agent_session = std::move(*id);
  co_return ok();
}

asio::awaitable<void> warm_runtime::deliver_steers(link_ptr l, std::shared_ptr<turn_recorder> rec, process_ptr p) {
  if (l->finished) co_return;
  ++l->delivering;
  auto rows = co_await rec->boundary();
  if (rows) {
    for (auto& row : *rows) {
      // NOLINTNEXTLINE(cppcoreguidelines-avoid-reference-coroutine-parameters): on_process awaits it at once, holding the process
      auto steer = [text = row.text](warm_process& w) -> asio::awaitable<result<bool>> {
        if (!w.conn || w.closing) co_return false;
        co_return co_await w.conn->steer(text);
      };
      auto taken = co_await on_process(p, std::move(steer));
      if (!taken || !*taken) l->undelivered.push_back(row.text);
    }
  }
  --l->delivering;
  l->changed.cancel();
}

session::task<turn_result> warm_runtime::run_turn(session::turn_context ctx, std::shared_ptr<session::turn_host> host) {
  const auto ex = co_await asio::this_coro::executor;
  const std::string& kind = o_.kind;
  auto rec = std::make_shared<turn_recorder>(
      ex, host, turn_facts{kind, std::string(dialect_->program()), o_.api_key, o_.endpoint.model, &o_.prices,
                           last_seq(ctx).value, {}});
  if (host->stop_token().stop_requested()) co_return rec->interrupted();
  // In an environment: its workspace and the session's home there.
  const std::shared_ptr<session::turn_place> place = ctx.place;
  auto dirs = place ? result<agent_dirs>(agent_dirs{place->home(), place->workspace()})
                    : prepare_dirs(o_.data_dir, ctx.session, ctx.workspace);
  if (!dirs) co_return co_await rec->fail(dirs.error().message, {});
  const std::string place_key = place ? place->environment() + ":" + place->workspace() : std::string();
  if (o_.work != nullptr) {
    auto t = co_await o_.work->task_of(ctx.session);
    if (!t) co_return co_await rec->fail("reading the session's task: " + t.error().message, {});
    rec->set_task(o_.work, std::move(*t));
  }

  auto l = std::make_shared<turn_link>(ex);
  if (!place && o_.states != nullptr) l->save = turn_link::saving{ctx.session, ctx.generation, *dirs};
  const auto idle = std::chrono::milliseconds(o_.settings.idle_timeout_ms);
  const auto start_limit = std::chrono::milliseconds(o_.settings.start_timeout_ms);
  auto p = registry_->take(ctx.session, ctx.generation);
  if (p && p->place_key != place_key) {
    // The warm process runs where the session's last turn did: another place (or here) gets a new one.
    registry_->retire(p);
    p = nullptr;
  }
  const bool fresh = !p;
  if (fresh) {
    l->starting = true;
    p = co_await registry_->open(ctx.session, ctx.generation, host->stop_token());
    if (!p) co_return rec->interrupted();
    // Another node may have run the agent session last: its state comes first.
    if (!place && o_.states != nullptr && can_resume(ctx, kind)) {
      const bool here =
          co_await o_.states->prepare(ctx.session, kind, *ctx.binding, dirs->home, dirs->workspace, host);
      if (!here) ctx.binding.reset();  // a new agent session, with the whole transcript
    }
    std::optional<std::string> resume;
    if (can_resume(ctx, kind)) resume = ctx.binding->external_session_id;
    watch(ex, l, p, idle, start_limit);
    p->settings = rec->settings_for(o_.settings);
    p->place_key = place_key;
    p->place = place;
    auto launch = [this, p, d = *dirs, resume, tools = rec->tool_specs(), place](warm_process&) {
      return start(p, d, resume, tools, place);
    };
    auto started = co_await on_process(p, std::move(launch));
    if (!started && resume && started.error() == agent_errc::resume_refused) {
      spdlog::info("agent: {} has no session {} to resume ({}): a new process starts a new one with the whole transcript",
                   kind, *resume, started.error().message);
      registry_->retire(p);
      p = co_await registry_->open(ctx.session, ctx.generation, host->stop_token());
      if (!p) co_return rec->interrupted();
      watch(ex, l, p, idle, start_limit);
      p->settings = rec->settings_for(o_.settings);
      p->place_key = place_key;
      p->place = place;
      auto relaunch = [this, p, d = *dirs, tools = rec->tool_specs(), place](warm_process&) {
        return start(p, d, std::nullopt, tools, place);
      };
      started = co_await on_process(p, std::move(relaunch));
    }
    if (!started) co_return co_await end(l, rec, p, started.error(), false);
    l->last_activity = std::chrono::steady_clock::now();
    l->starting = false;
    l->watchdog.cancel();  // re-armed with the idle limit
  } else {
    // This turn's place: the program's signals go through it while the turn runs.
    // NOLINTNEXTLINE(cppcoreguidelines-avoid-reference-coroutine-parameters): on_process awaits it at once, holding the process
    auto here = [place](warm_process& w) -> asio::awaitable<void> {
      w.place = place;
      co_return;
    };
    co_await on_process(p, std::move(here));
    watch(ex, l, p, idle, start_limit);
  }

  // What the agent has not seen: since the binding, when the agent session is the bound one.
  const bool continues = !p->resume_refused && can_resume(ctx, kind) &&
                         ctx.binding->external_session_id == p->agent_session;
  auto prompt_ctx = ctx;
  if (!continues) prompt_ctx.binding.reset();
  auto prompt = render_prompt(prompt_ctx, kind);

  std::vector<model::payload> started;
  started.emplace_back(model::step_started{ctx.execution, 1});
  host->record_soon(std::move(started));
  rec->bind_soon(p->agent_session, p->identity());

  // NOLINTNEXTLINE(cppcoreguidelines-avoid-reference-coroutine-parameters): on_process awaits it at once, holding the process
  auto attach = [rec, ex, l](warm_process& w) -> asio::awaitable<void> {
    w.turn = rec;
    w.turn_executor = ex;
    l->refused_before = w.ticket.refused();
    co_return;
  };
  co_await on_process(p, std::move(attach));
  rec->meter(p->relay);
  const auto grace = o_.grace;
  std::stop_callback on_stop(host->stop_token(), [l, p, grace] {
    asio::post(p->strand, [l, p, grace] { asio::co_spawn(p->strand, cancel_turn(l, p, grace), asio::detached); });
  });
  if (dialect_->can_steer()) {
    std::weak_ptr<turn_link> weak = l;
    host->on_wake([this, weak, rec, p] {
      auto link = weak.lock();
      if (!link) return;
      asio::post(link->executor, [this, link, rec, p] {
        asio::co_spawn(link->executor, deliver_steers(link, rec, p), asio::detached);
      });
    });
  }

  std::optional<tether::error> broken;
  bool record_failed = false;
  for (;;) {
    auto send = [prompt](warm_process& w) { return w.conn->start_turn(prompt); };
    auto sent = co_await on_process(p, std::move(send));
    l->last_activity = std::chrono::steady_clock::now();
    if (!sent) {
      broken = sent.error();
      break;
    }
    while (!rec->done() && !rec->agent_error()) {
      auto evs = co_await on_process(p, [](warm_process& w) { return w.conn->next(); });
      l->last_activity = std::chrono::steady_clock::now();
      if (!evs) {
        broken = evs.error();
        break;
      }
      if (auto r = co_await rec->take(std::move(*evs)); !r) {
        record_failed = true;
        break;
      }
    }
    if (broken || record_failed || rec->agent_error() || l->interrupted) break;
    // Steers promoted while the agent was finishing: another agent turn.
    while (l->delivering > 0) {
      l->changed.expires_at(std::chrono::steady_clock::time_point::max());
      co_await l->changed.async_wait(use_tuple);
    }
    if (l->undelivered.empty()) break;
    prompt.clear();
    for (const auto& text : l->undelivered) prompt += (prompt.empty() ? "" : "\n\n") + text;
    l->undelivered.clear();
    rec->restart();
  }
  co_return co_await end(l, rec, p, std::move(broken), record_failed);
}

asio::awaitable<turn_result> warm_runtime::end(link_ptr l, std::shared_ptr<turn_recorder> rec, process_ptr p,
                                               std::optional<tether::error> broken, bool record_failed) {
  l->finished = true;
  l->watchdog.cancel();
  rec->host().on_wake(nullptr);
  rec->finish();
  const bool timed_out = l->timed_out;
  const bool replace = broken.has_value() || record_failed || timed_out ||
                       (l->interrupted && dialect_->replace_after_cancel());
  // A turn that ends waiting for an answer closes its process before it
  // reports so, where the dialect says (warm_dialect::close_while_waiting).
  const bool park = !replace && rec->asked() && !l->interrupted && dialect_->close_while_waiting();
  // NOLINTNEXTLINE(cppcoreguidelines-avoid-reference-coroutine-parameters): on_process awaits it at once, holding the process
  auto retire = [replace, park, l](warm_process& w) -> asio::awaitable<std::string> {
    l->turned_away = w.ticket.refused() - l->refused_before;
    w.turn.reset();
    if (park && w.conn && w.proc && !w.closing) {
      co_await w.conn->close();
      (void)co_await w.proc->wait_exit(std::chrono::steady_clock::now() + park_patience);
    }
    if (replace) {
      w.dead = true;  // it is replaced; the next turn resumes the agent session
      // What a dying agent says last (its reason) is in the tail.
      if (w.proc && w.reading_stderr) co_await w.err.drain(*w.proc, stderr_patience);
    }
    co_return w.err.tail();
  };
  auto tail = co_await on_process(p, std::move(retire));
  const std::string agent_session = p->agent_session;
  if (replace || park)
    registry_->retire(p);
  else
    registry_->release(p);
  if (l->save && !record_failed)
    co_await o_.states->save(l->save->session, o_.kind, agent_session, l->save->generation, l->save->dirs.home,
                             l->save->dirs.workspace, rec->host_ptr());

  if (l->interrupted || rec->host().stop_token().stop_requested()) co_return rec->interrupted();
  if (record_failed) co_return rec->failed_recording();
  if (timed_out && l->timed_out_starting)
    co_return co_await rec->fail(
        fmt::format("did not start within {} ms (start_timeout_ms): stopped", o_.settings.start_timeout_ms), tail);
  if (timed_out)
    co_return co_await rec->fail(
        fmt::format("printed nothing for {} ms (idle_timeout_ms): stopped", o_.settings.idle_timeout_ms), tail);
  if (broken) {
    if (*broken == agent_errc::rpc_closed) co_return co_await rec->fail("exited: " + broken->message, tail);
    co_return co_await rec->fail(broken->message, tail);
  }
  if (rec->agent_error()) co_return co_await rec->fail(*rec->agent_error(), tail);
  if (l->turned_away > 0) co_return co_await rec->fail(unreachable_tools(l->turned_away), tail);
  co_return co_await rec->complete();
}

}  // namespace

std::unique_ptr<session::runtime> make_warm_runtime(std::unique_ptr<warm_dialect> d, agent_options o) {
  return std::make_unique<warm_runtime>(std::move(d), std::move(o));
}

}  // namespace tether::runtime::agent
