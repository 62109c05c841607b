// bash: one shell command in its own process group, driven asynchronously
// through the process layer (process/child.h).
//
// All of a run's state lives on one strand: the coroutine that waits, the
// reader that drains the pipe, the exit watcher and the stop notification
// (posted there from the interrupting thread). The main coroutine checks the
// flags and then waits on `wake`, whose cancellation is the signal; since
// nothing else runs on the strand between the check and the wait, no
// notification is lost.
//
// A stop is ctx.stop or an Asio cancellation of the coroutine awaiting run().
//
// Ending, whatever the reason: SIGTERM to the whole group, wait until the
// shell has exited and the pipe has closed (at most bash_kill_grace), SIGKILL
// to the group, stop reading if something outside the group still holds the
// pipe, then reap the shell. The shell stays an unreaped zombie until that
// last step, so its pid (the group id) cannot be reused while we signal it.
//
// Without a sandbox the shell does not die with the server: a restart finds
// it through its process record and kills its whole group (a shell killed
// with the server would leave its background jobs out of that cleanup's
// reach). In a sandbox bubblewrap ties the tree to the server.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <vector>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/cancellation_state.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "process/child.h"
#include "runtime/native/tools/args.h"
#include "runtime/native/tools/local_tools.h"
#include "process/records.h"
#include "runtime/common/sandbox.h"
#include "process/spawn.h"
#include "util/errors.h"

extern char** environ;  // NOLINT: POSIX

namespace tether::runtime::native::tool_detail {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using std::chrono::steady_clock;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

struct run_state {
  run_state(const asio::any_io_executor& ex, process::spawned spawned, std::size_t output_cap)
      : proc(ex, std::move(spawned)), wake(ex), cap(output_cap) {}

  void notify() { wake.cancel(); }

  process::child proc;
  std::shared_ptr<command_place> place;  // the command runs there (its relay here)
  asio::steady_timer wake;
  std::size_t cap;
  std::string output;
  std::size_t dropped = 0;
  bool exited = false;
  bool reader_done = false;
  bool watcher_done = false;
  bool stop_requested = false;
};

enum class condition { exited_or_stopped, exited_and_drained, drained, exited, watcher_done };

bool holds(const run_state& st, condition c) {
  switch (c) {
    case condition::exited_or_stopped: return st.exited || st.stop_requested;
    case condition::exited_and_drained: return st.exited && st.reader_done;
    case condition::drained: return st.reader_done;
    case condition::exited: return st.exited;
    case condition::watcher_done: return st.watcher_done;
  }
  return true;
}

// Waits until `c` holds (true) or `deadline` passes (false). Asio
// cancellation of the run (emitted on the strand by co_spawn) is a stop.
awaitable<bool> wait_for(std::shared_ptr<run_state> st, condition c, steady_clock::time_point deadline) {
  for (;;) {
    const auto cancellation = co_await asio::this_coro::cancellation_state;
    if (cancellation.cancelled() != asio::cancellation_type::none) st->stop_requested = true;
    if (holds(*st, c)) co_return true;
    if (steady_clock::now() >= deadline) co_return false;
    st->wake.expires_at(deadline);
    co_await st->wake.async_wait(use_tuple);
  }
}

awaitable<void> read_output(std::shared_ptr<run_state> st) {
  std::vector<char> buf(64 * 1024);
  for (;;) {
    auto n = co_await st->proc.read_some(process::stream::out, asio::buffer(buf));
    if (!n || *n == 0) break;
    const std::size_t keep = std::min(*n, st->cap - std::min(st->cap, st->output.size()));
    st->output.append(buf.data(), keep);
    st->dropped += *n - keep;  // drained all the same, so the writer never blocks
  }
}

awaitable<void> watch_exit(std::shared_ptr<run_state> st) {
  // Ends at the exit, or when the run cancels the child's waits.
  const bool exited = co_await st->proc.wait_exit();
  if (exited) st->exited = true;
}

// Completion of the reader and the watcher: they are owned by the run, which
// waits for both flags before it returns.
struct mark_done {
  std::shared_ptr<run_state> st;
  bool run_state::*flag;
  void operator()(const std::exception_ptr&) const {
    st.get()->*flag = true;
    st->notify();
  }
};

struct stop_notifier {
  std::shared_ptr<run_state> st;
  asio::any_io_executor ex;
  void operator()() const {
    asio::post(ex, [s = st] {
      s->stop_requested = true;
      s->notify();
    });
  }
};

// `sig` to the command's process group. In an environment the command there
// gets it (the local child is only its relay, which ends when it does);
// SIGKILL goes to the relay too, so a call never waits on an environment
// that stopped answering.
void signal_command(run_state& st, int sig) {
  if (st.place) {
    st.place->signal(st.proc.pid(), sig);
    if (sig != SIGKILL) return;
  }
  st.proc.signal(sig);
}

awaitable<void> kill_group(std::shared_ptr<run_state> st, std::chrono::milliseconds grace) {
  signal_command(*st, SIGTERM);
  co_await wait_for(st, condition::exited_and_drained, steady_clock::now() + grace);
  signal_command(*st, SIGKILL);
  // Something that left the group (setsid) may still hold the pipe open.
  const bool drained = co_await wait_for(st, condition::drained, steady_clock::now() + grace);
  if (!drained) {
    st->proc.close_output(process::stream::out);
    co_await wait_for(st, condition::drained, steady_clock::time_point::max());
    st->output += "\n(stopped reading: a process outside the command's process group still holds its output open)";
  }
  co_await wait_for(st, condition::exited, steady_clock::time_point::max());
}

std::string render_output(const run_state& st) {
  std::string out = sanitize_utf8(st.output);
  if (out.empty()) out = "(no output)";
  if (!out.ends_with('\n')) out += '\n';
  if (st.dropped > 0)
    out += "(" + std::to_string(st.dropped) + " more bytes of output were dropped: only the first " +
           std::to_string(st.cap) + " bytes are kept)\n";
  return out;
}

// The command line in an environment: bash from its PATH, in its workspace,
// with the allow-listed environment but for what is this machine's.
process::spawn_options placed_command_line(const std::string& command, const tool_context& ctx) {
  process::spawn_options o;
  o.argv = {"bash", "-c", command};
  o.env = tool_environment(ctx.sandbox, ctx.place->workspace(), environ);
  std::erase_if(o.env, [](const std::string& kv) {
    return kv.rfind("PATH=", 0) == 0 || kv.rfind("USER=", 0) == 0 || kv.rfind("LOGNAME=", 0) == 0;
  });
  o.cwd = ctx.place->workspace();
  o.stdout_mode = process::output::pipe;
  o.stderr_mode = process::output::stdout_pipe;
  o.umask = 022;
  o.grace = ctx.limits.bash_kill_grace;
  return o;
}

// The command line: the shell alone (sandbox off) or inside bubblewrap.
result<process::spawn_options> command_line(const std::string& command, const tool_context& ctx) {
  if (ctx.place) return placed_command_line(command, ctx);
  process::spawn_options o;
  o.argv = {"/bin/bash", "-c", command};
  o.env = tool_environment(ctx.sandbox, ctx.workspace, environ);
  o.cwd = ctx.workspace;
  o.stdout_mode = process::output::pipe;
  o.stderr_mode = process::output::stdout_pipe;
  o.gate = process::start_gate::gated;
  // The server runs with umask 077 so that its data directory stays private;
  // a command gets the usual 022, so that what it creates in a user's own
  // repository is as readable as what the user creates there.
  o.umask = 022;
  o.grace = ctx.limits.bash_kill_grace;
  if (ctx.sandbox.mode == sandbox_mode::off) {
    o.death = process::parent_death::ignore;  // see the top of this file
    return o;
  }
  const auto bwrap = find_bwrap(ctx.sandbox.bwrap);
  if (!bwrap)
    return make_error(util_errc::invalid_argument,
                      "the sandbox cannot run: bubblewrap (" + ctx.sandbox.bwrap.string() +
                          ") is not installed; install the Debian package bubblewrap, or set the profile's sandbox "
                          "= \"off\"");
  o.sandbox = sandbox_for(ctx.sandbox, *bwrap, ctx.workspace);
  return o;
}

// The spawned child travels through a holder the caller owns, not as a
// co_await result: g++ 12 corrupted the awaiting frame when a value owning a
// process came back through co_spawn (and once, through a conditional
// co_await, left a descriptor closed under Asio).
using spawn_holder = std::shared_ptr<std::optional<result<process::spawned>>>;

awaitable<void> start_recorded_into(spawn_holder out, process::spawn_options o, std::filesystem::path records) {
  out->emplace(process::spawn_recorded(o, records));
  co_return;
}

// In an environment: through its spawner; the relay is not recorded here
// (what an earlier Tether left running there is found in the environment's
// journal and stopped before the session's next turn).
awaitable<void> start_placed_into(spawn_holder out, process::spawn_options o,
                                  std::shared_ptr<command_place> place) {
  out->emplace(place->spawner().spawn(o));
  co_return;
}

std::string where(const tool_context& ctx) { return "environment " + ctx.place->environment(); }

awaitable<tool_outcome> run_command(std::string command, std::chrono::milliseconds timeout, tool_context ctx) {
  // Asio cancellation forwarded from the awaiting coroutine counts as a stop
  // (wait_for sees it); it must never throw out of the cleanup below.
  co_await asio::this_coro::throw_if_cancelled(false);
  const auto ex = co_await asio::this_coro::executor;  // the run's strand
  auto line = command_line(command, ctx);
  if (!line) co_return failed(line.error());
  if (ctx.place) {
    result<void> sent = co_await ctx.place->send_workspace(false);
    if (!sent)
      co_return failed("the workspace could not be sent to " + where(ctx) +
                       ", so the command did not run: " + sent.error().message);
  }
  auto started = std::make_shared<std::optional<result<process::spawned>>>();
  if (ctx.place && ctx.blocking) {
    co_await asio::co_spawn(ctx.blocking, start_placed_into(started, std::move(line).value(), ctx.place),
                            asio::use_awaitable);
  } else if (ctx.place) {
    started->emplace(ctx.place->spawner().spawn(line.value()));
  } else if (ctx.blocking) {
    co_await asio::co_spawn(ctx.blocking, start_recorded_into(started, std::move(line).value(), ctx.sandbox.records),
                            asio::use_awaitable);
  } else {
    started->emplace(process::spawn_recorded(line.value(), ctx.sandbox.records));
  }
  if (!started->has_value()) co_return failed("internal error: the command was not started");
  if (!**started) co_return failed((**started).error());

  auto st = std::make_shared<run_state>(ex, std::move(**started).value(), ctx.limits.bash_output_cap);
  st->place = ctx.place;
  asio::co_spawn(ex, watch_exit(st), mark_done{st, &run_state::watcher_done});
  asio::co_spawn(ex, read_output(st), mark_done{st, &run_state::reader_done});

  std::stop_callback<stop_notifier> on_stop(ctx.stop, stop_notifier{st, ex});
  co_await wait_for(st, condition::exited_or_stopped, steady_clock::now() + timeout);
  // A command that finished before the stop or the deadline reports its exit.
  const bool completed = st->exited;
  const bool stopped = !completed && st->stop_requested;
  co_await kill_group(st, ctx.limits.bash_kill_grace);
  st->proc.cancel();
  co_await wait_for(st, condition::watcher_done, steady_clock::time_point::max());
  const std::string ending = st->proc.reap().describe();
  if (!ctx.place) process::forget_process(ctx.sandbox.records, st->proc.pid());

  if (stopped) co_return interrupted();  // the turn's end brings the workspace back
  if (ctx.place) {
    // What the command changed comes back; in a read-only turn nothing may
    // change, so the host copy goes there again instead.
    const bool read_only = ctx.sandbox.mode == sandbox_mode::read_only;
    result<void> synced = ok();
    if (read_only) {
      synced = co_await ctx.place->send_workspace(true);
    } else {
      synced = co_await ctx.place->fetch_workspace();
    }
    if (!synced)
      co_return failed(render_output(*st) + ending + "\nthe workspace could not be " +
                       (read_only ? "restored in " : "brought back from ") + where(ctx) + ": " +
                       synced.error().message);
  }
  if (!completed)
    co_return failed(render_output(*st) + "timed out after " + std::to_string(timeout.count()) +
                     " ms; the command and every process it started were killed");
  co_return succeeded(render_output(*st) + ending);
}

class bash_tool final : public tool {
 public:
  bash_tool();
  [[nodiscard]] const tool_spec& spec() const override { return spec_; }
  awaitable<tool_outcome> run(json::value input, tool_context ctx) const override;

 private:
  tool_spec spec_;
};

bash_tool::bash_tool() {
  json::object props;
  props["command"] = string_property("The command line, run by /bin/bash -c in the workspace root.");
  props["timeout_ms"] = integer_property(
      "Time limit in milliseconds. Default and maximum: 120000 (or the configured limit).", 1);
  spec_.name = "bash";
  spec_.description =
      "Run a shell command in the workspace root with /bin/bash -c. stdin is empty; stdout and stderr are merged. "
      "The output ends with 'exit code N': a non-zero exit is reported there, not as a tool failure. The command "
      "runs in its own process group; when it ends, times out or is interrupted, every process it started "
      "(background jobs included) is killed. Output is capped, and long output is shortened to its head and tail. "
      "Unless the configuration turns it off, the command runs in a sandbox: only the workspace is writable (and "
      "not even it in read-only mode), /tmp is private to the call, and the network is usually unavailable.";
  spec_.parameters = object_schema(std::move(props), {"command"});
}

awaitable<tool_outcome> bash_tool::run(json::value input, tool_context ctx) const {
  co_await asio::this_coro::throw_if_cancelled(false);  // an outcome, never operation_aborted
  auto args = tool_args::parse(input, {"command", "timeout_ms"});
  if (!args) co_return failed(args.error());
  auto command = args->required_string("command");
  if (!command) co_return failed(command.error());
  auto timeout_ms = args->optional_int("timeout_ms");
  if (!timeout_ms) co_return failed(timeout_ms.error());
  if (command->find_first_not_of(" \t\r\n") == std::string::npos) co_return failed("the command is empty");
  if (command->find('\0') != std::string::npos) co_return failed("the command contains a NUL byte");
  if (timeout_ms.value() && *timeout_ms.value() < 1) co_return failed("argument 'timeout_ms' must be 1 or more");
  if (ctx.stop.stop_requested()) co_return interrupted();

  auto timeout = ctx.limits.bash_timeout;
  if (timeout_ms.value()) timeout = std::min(timeout, std::chrono::milliseconds(*timeout_ms.value()));
  auto strand = asio::make_strand(co_await asio::this_coro::executor);
  auto work = run_command(std::move(command.value()), timeout, ctx);
  tool_outcome out;
  try {
    out = co_await asio::co_spawn(strand, std::move(work), asio::use_awaitable);
  } catch (const std::exception& e) {
    out = failed(std::string("internal error: ") + e.what());
  }
  co_return co_await spill_on_blocking(std::move(out), std::move(ctx));
}

}  // namespace

std::unique_ptr<tool> make_bash_tool() { return std::make_unique<bash_tool>(); }

}  // namespace tether::runtime::native::tool_detail
