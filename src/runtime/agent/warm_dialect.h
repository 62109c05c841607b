// warm_dialect — what differs between agent programs kept running across
// turns (codex app-server, claude stream-json, opencode serve, any ACP
// agent): how to launch the process, and how to speak its protocol. The
// warm runtime (warm_runtime.h) does everything else: the registry of
// processes, the agent's home and environment, the sandbox, the events, the
// binding, stop, steering.
//
//   auto d = make_acp(acp_agent::codex);
//   auto l = d->prepare(in);                     // config files under in.home; argv, env
//   ... the runtime spawns the process (stdin a pipe) ...
//   auto c = d->connect(strand, proc, opts);     // owns proc's stdin and stdout
//   auto id = co_await c->open({.resume = "thread-1"});   // the agent session: new or resumed
//   co_await c->start_turn("prompt");
//   for (;;) { auto evs = co_await c->next(); … until turn_done or turn_failed }
//   co_await c->steer("more");                   // into the running turn, where can_steer()
//   co_await c->cancel();                        // the running turn ends soon (turn_failed or turn_done)
//   co_await c->close();                         // the process may be stopped now
//
// Threads: a connection lives on the strand given to connect(), and every
// member is called there (the runtime hops onto it). One call at a time but
// for steer() and cancel(), which may come while next() is waiting.
// Destroying a connection whose close() has completed is safe at once;
// close() returns only after every coroutine the connection started ended.
//
// The child process: the connection reads its stdout and writes its stdin;
// the runtime reads its stderr (for the failure message), watches its exit
// and stops it. A connection never stops the process itself.
//
// Errors from a connection are values: agent_errc::rpc_closed (the process
// ended its output: it died), agent_errc::rpc_failed (the agent answered a
// request with an error, the message says which), agent_errc::protocol (it
// printed something that is not its protocol), agent_errc::resume_refused
// (open() with a resume: the agent does not know that session; the runtime
// opens a new one and sends the whole transcript).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "runtime/agent/settings.h"
#include "runtime/agent/dialect.h"
#include "util/result.h"

namespace tether::process {
class child;
}

namespace tether::runtime::agent {

template <class T>
using task = boost::asio::awaitable<T>;

struct session_open {
  std::optional<std::string> resume;  // the agent session to continue (runtime.bound's external id)
};

// What the connection needs beyond the process.
struct connect_options {
  const agent_settings* settings = nullptr;  // permissions; lives as long as the runtime
  std::filesystem::path workspace;                   // fs/* requests are confined to it (canonical)
  std::string model;                                 // the profile's model
  std::optional<mcp_server> mcp;                     // Tether's tools, for protocols that take them per session
  // What prepare() set in the process's environment (launch::env): a secret
  // the connection shares with the process (opencode serve's password).
  std::map<std::string, std::string> env;
  // The command line prepare() gave it (launch::argv): what the process was
  // told to open (claude's --session-id), also when it runs in an
  // environment, where this machine's process is only its local relay.
  std::vector<std::string> argv;
  // Its home is on this machine (false in an environment: its files are
  // there, and what Tether reads of them here, claude's session file before
  // a turn is reported done, is not waited for).
  bool home_here = true;
  // In an environment: "HOST:PORT" here for a port there (opencode serve's
  // server, which listens on the loopback where it runs). Unset here.
  std::function<task<result<std::string>>(int port)> reach_there;
  std::size_t max_line_bytes = 8U << 20U;
};

class agent_connection {
 public:
  virtual ~agent_connection() = default;
  // The handshake (first call only) and the agent's session: resumed when
  // `o.resume` is set, else new. Returns the agent's session id.
  virtual task<result<std::string>> open(session_open o) = 0;
  // Sends the turn's prompt; returns once the agent took it.
  virtual task<result<void>> start_turn(std::string prompt) = 0;
  // The next events of the running turn (never an empty vector but at the
  // end of output, which is an error: rpc_closed). The turn is over after an
  // event turn_done or turn_failed.
  virtual task<result<std::vector<agent_event>>> next() = 0;
  // Delivers a follow-up into the running turn. true: the agent took it
  // (the model sees it inside this turn); false: it could not (no turn
  // runs, or the protocol has no way): the caller runs it as a turn later.
  virtual task<result<bool>> steer(std::string text) = 0;
  // Asks the agent to stop the running turn; next() then ends it.
  virtual task<void> cancel() = 0;
  // Ends the conversation politely (closes stdin, ends the agent session);
  // returns once the connection's own coroutines ended.
  virtual task<void> close() = 0;
};

class warm_dialect {
 public:
  virtual ~warm_dialect() = default;
  // The binary's kind in programs.h ("codex", "codex-acp"); a profile's
  // `command` overrides where it is.
  [[nodiscard]] virtual std::string_view program() const = 0;
  // The variable of the agent's environment that carries the model key.
  [[nodiscard]] virtual std::string_view key_variable() const = 0;
  // Base URL of the built-in scripted model for this program, given the
  // scripted model's root ("http://127.0.0.1:P").
  [[nodiscard]] virtual std::string scripted_base_url(std::string_view root) const = 0;
  // Whether steer() can deliver into a running turn (the README's table).
  [[nodiscard]] virtual bool can_steer() const = 0;
  // Whether a process whose turn was cancelled is replaced (the next turn
  // resumes the agent session in a new one) instead of kept: for an agent
  // whose next prompt after a cancel is answered wrongly.
  [[nodiscard]] virtual bool replace_after_cancel() const { return false; }
  // Whether a process whose turn ends waiting for an answer is closed (its
  // input ended, then its own exit awaited) before the turn reports so: for
  // an agent that writes its session down lazily, which a SIGKILL of Tether
  // during the wait would cut short. The answer's turn resumes the session.
  [[nodiscard]] virtual bool close_while_waiting() const { return false; }
  // Writes the agent's configuration under in.home; the command line.
  // in.prompt is empty; in.resume is the session the process will open.
  virtual result<launch> prepare(const launch_input& in) const = 0;
  // Speaks the protocol over `proc` (already started), on `strand`.
  [[nodiscard]] virtual std::unique_ptr<agent_connection> connect(boost::asio::any_io_executor strand,
                                                                  process::child& proc,
                                                                  connect_options o) const = 0;
};

std::unique_ptr<warm_dialect> make_codex_app_server();
std::unique_ptr<warm_dialect> make_claude_stream();
std::unique_ptr<warm_dialect> make_opencode_serve();
// The ACP agents Tether knows how to launch (acp/agents.cpp), or `any`:
// the profile's `command` is the agent.
enum class acp_agent { codex, claude, opencode, any };
std::unique_ptr<warm_dialect> make_acp(acp_agent agent);

}  // namespace tether::runtime::agent
