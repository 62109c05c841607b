// The Runtime seam: what executes the turns of a session.
//
// A runtime is a long-lived component of the node: Tether's own agent loop
// (runtime/native) or an adapter around an external agent program (codex,
// claude, opencode, an ACP agent), which may keep a child process per
// session across turns. The node builds one per profile (runtime/registry.h)
// and hands the session service a runtime that routes each turn to the
// runtime of the session's profile.
//
// Lifecycle (called by session_service, on its executor):
//   start()           once, before the first turn (session_service::start);
//                     an error fails the service's start.
//   run_turn()        one turn of one session, on the session's strand.
//                     Turns of different sessions run concurrently.
//   forget(session)   the session's agent state is no longer this node's:
//                     after a reset (the next turn starts a fresh context),
//                     or when its execution moved to another node (the
//                     lease was lost). Drop what is kept for it (an agent
//                     process, a cached session id). It may come while a
//                     turn of that session is still unwinding; the next
//                     turn, if any, gets a binding-free context after a
//                     reset.
//   stop()            once, at clean shutdown, after every turn ended and
//                     before the node's threads end: end child processes,
//                     wait for them, free state. Also when start() was never
//                     called (a service that never started).
//
// One turn. The runner calls run_turn() with the transcript of the current
// context generation; the inputs promoted for this turn are at its end and
// also named in `promoted`. The runtime reports through the turn_host, which
// is valid for this turn only (see turn_host):
//
//   boundary()  — call right before every model request after the first:
//                 promotes the steers admitted up to this moment (all of them,
//                 in admission order) and returns them as user messages to
//                 append to the request. Queued inputs are never promoted here.
//   boundary_after(events) — at the end of a step whose answer is final:
//                 records `events` (the answer) and promotes the steers
//                 admitted up to now, in one commit; the runtime goes on with
//                 them. When no steer is pending the events are held and
//                 written with the execution's next write (its end, or the
//                 next queued input's promotion), so a turn that ends with an
//                 answer costs no commit of its own. `recorded` is empty then.
//   record()    — appends durable events (step.*, text.ended, tool.*,
//                 interaction.requested, runtime.bound, …) fenced on the
//                 session's lease. runtime.bound without a generation gets
//                 the turn's (a binding is only handed back to turns of the
//                 generation it was made in).
//   record_soon() — like record() but without waiting for the commit: the
//                 events are written before anything recorded later (sent
//                 at once, or after an earlier write still unsettled), and a
//                 failure (a lost lease) fails the next record(). For events
//                 whose loss in a crash is harmless (step.started), so the
//                 model request need not wait for a disk flush.
//   publish()   — ephemeral events (text.delta, …) for live subscribers.
//   wake()      — rings the session's doorbell: one more drain after this one.
//   on_wake(listener) — `listener` runs (on any thread; it should only post
//                 to the runtime's executor) whenever the session is woken
//                 while this turn runs, e.g. a steer was admitted: a runtime
//                 that can put input into a running agent turn then calls
//                 boundary() to promote it. Ends with the turn.
//   stop_token()— requested on interrupt, lease loss or shutdown. Register a
//                 std::stop_callback that cancels the model stream and kills
//                 tool processes (post to your own executor: the callback runs
//                 on the interrupting thread), then return interrupted.
//
// Errors from the host are session_errc values, never the store's:
//   lease_lost       the session's lease is gone (another node may own it
//                    now): nothing was written; return turn_status::interrupted
//                    promptly (the stop token is requested too)
//   storage_failed   the store could not write (or read) for as long as the
//                    turn may wait for it (the host retries while the lease
//                    holds: session/runner.h, Storage failures): nothing was
//                    written, unless the store could not tell whether its
//                    last commit landed (then it is in the log once, or not
//                    at all). Return failed: the runner gives the turn's
//                    unanswered inputs back to pending.
//   turn_over        the call came after run_turn() returned
//   invalid_input    events the store refuses (e.g. a runtime.bound state over
//                    model::runtime_bound::max_state_bytes)
//
// Tool calls: a call the runtime executes itself through Tether's tools is
// kind local; one the model provider ran, hosted (record it with its result);
// one an external agent program runs, agent. Local and agent calls left
// unsettled when the turn is stopped or the node dies are settled failed by
// the runner ("interrupted", "interrupted by restart").
//
// A question for a human: record tool.called and interaction.requested (with
// the call id) and return turn_status::waiting. The answer settles the call
// and wakes the session; the next turn sees the tool result in its transcript.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "model/events.h"
#include "store/types.h"
#include "util/result.h"

namespace tether::process {
class spawner;
}

namespace tether::session {

template <class T>
using task = boost::asio::awaitable<T>;

// One input promoted for this turn (its user message is in the transcript).
struct promoted_input {
  input_id id;
  event_seq seq;  // the seq of its input.promoted (its message's seq)
  std::string text;
};

enum class turn_start {
  inputs,        // the turn runs the inputs in `promoted`
  continuation,  // no new input: continue after a restart or an answer
};

// Where a turn's programs run when it is not this machine: a lease of an
// environment (env/, given by the node for a profile that names one). A
// runtime that can run there spawns its programs through spawner() — argv
// found on the environment's PATH, cwd and paths as they are there, the
// environment given whole (PATH left out: the environment's own) — in
// workspace(), keeps its per-session state under home() there, writes its
// files there with put_file(), and lets what runs there reach this
// machine's services through reach_port() and reach_socket(). A runtime
// that cannot run there fails such a turn with the reason.
//
// What takes a round trip to the environment is an awaitable that runs it
// off the I/O threads; spawner()'s spawn only starts a local relay, and
// signal() never blocks.
class turn_place {
 public:
  virtual ~turn_place() = default;
  [[nodiscard]] virtual const std::string& environment() const = 0;  // [environments.NAME]
  virtual process::spawner& spawner() = 0;
  [[nodiscard]] virtual const std::string& workspace() const = 0;
  // A directory there for the session's agent state, kept with the lease.
  [[nodiscard]] virtual const std::string& home() const = 0;
  // `content` as the whole file at `path` there (its directories made).
  virtual task<result<void>> put_file(std::string path, std::string content, unsigned mode) = 0;
  // "HOST:PORT" there that reaches `host`:`port` here.
  virtual task<result<std::string>> reach_port(std::string host, int port) = 0;
  // A Unix socket path there that reaches `local` here.
  virtual task<result<std::string>> reach_socket(std::string local) = 0;
  // "HOST:PORT" here that reaches 127.0.0.1:`port` there (an agent's own
  // server there); an error where the environment cannot forward it.
  virtual task<result<std::string>> reach_there(int port) = 0;
  // `sig` to the program whose local relay is `relay` (a child the spawner
  // started), where it runs: sent in the background, never waited for.
  virtual void signal(int relay, int sig) = 0;
  // For a runtime whose tools work on the host copy of the workspace (the
  // turn's workspace here) and run commands there: send_workspace() makes
  // the workspace there the host copy's tree; fetch_workspace() makes the
  // host copy the workspace there, whole or not at all (env/tree.h). Each
  // transfers nothing when a stamp (env/tree.h stamp_tree, lease::stamp)
  // says its side is unchanged since the last of these syncs — unless
  // `even_unchanged`: a read-only turn sends the host copy after each
  // command, so that nothing a command changed there stays. One at a time:
  // the caller keeps its file tools off the host copy meanwhile.
  virtual task<result<void>> send_workspace(bool even_unchanged) = 0;
  virtual task<result<void>> fetch_workspace() = 0;
};

struct turn_context {
  session_id session;
  execution_id execution;
  std::int64_t generation = 0;                 // the session's context generation
  std::vector<store::message_row> transcript;  // since the last reset, in order
  std::vector<promoted_input> promoted;        // this turn's inputs, in promotion order
  std::string workspace;
  std::string profile;
  // What this runtime recorded last time (runtime.bound) in this generation:
  // absent after a reset, and never one of another generation.
  std::optional<store::runtime_binding> binding;
  turn_start start = turn_start::inputs;
  // Where its programs run: null for this machine.
  std::shared_ptr<turn_place> place;
};

struct boundary_result {
  std::vector<model::event> recorded;        // the events given, as written (empty when held)
  std::vector<store::message_row> promoted;  // the steers promoted, as user messages
};

// Valid for one turn: once run_turn() has returned, record(), record_soon(),
// boundary() and boundary_after() fail with session_errc::turn_over (or, for
// record_soon, do nothing) and publish() and wake() do nothing, however long
// the runtime keeps the pointer. Call it on the turn's executor, one call at
// a time.
class turn_host {
 public:
  virtual ~turn_host() = default;
  virtual task<result<std::vector<store::message_row>>> boundary() = 0;
  virtual task<result<boundary_result>> boundary_after(std::vector<model::payload> events) = 0;
  virtual task<result<std::vector<model::event>>> record(std::vector<model::payload> events) = 0;
  virtual void record_soon(std::vector<model::payload> events) = 0;
  virtual void publish(model::payload ephemeral) = 0;
  virtual void wake() = 0;
  virtual void on_wake(std::function<void()> listener) { (void)listener; }
  [[nodiscard]] virtual std::stop_token stop_token() const = 0;
};

enum class turn_status { completed, waiting, failed, interrupted };

struct turn_result {
  turn_status status = turn_status::completed;
  std::string error;   // for failed
  model::usage usage;  // added to the execution's usage
};

class runtime {
 public:
  virtual ~runtime() = default;

  // The name of the runtime that runs the turns of sessions with this
  // profile ("native", "codex", …), recorded on execution.started; "" when
  // no runtime here runs that profile (its turns fail).
  [[nodiscard]] virtual std::string name(std::string_view profile) const = 0;
  // Which model answers those turns, recorded with it: "scripted" for the
  // built-in scripted model, else the model's name and where it is served
  // ("gpt-4o at https://api.openai.com/v1"); "" when unknown.
  [[nodiscard]] virtual std::string model(std::string_view profile) const {
    (void)profile;
    return {};
  }

  // The lifecycle (see the top of this file). These defaults do nothing:
  // right for a runtime that keeps no state between turns.
  virtual task<result<void>> start() { co_return ok(); }
  virtual task<void> stop() { co_return; }
  virtual task<void> forget(session_id s) {
    (void)s;
    co_return;
  }
  virtual task<turn_result> run_turn(turn_context ctx, std::shared_ptr<turn_host> host) = 0;
};

}  // namespace tether::session
