// The agent-program runtimes that start one process per turn: codex-exec,
// claude-print, opencode-run (dialect.h says what differs between them).
//
//   agent::agent_options o;                 // from the profile (node.cpp)
//   o.program = "/…/codex"; o.endpoint = {base_url, model, ""}; o.api_key = key;
//   auto rt = agent::make_per_turn_runtime(agent::make_codex_exec(), std::move(o));
//
// One turn:
//   1. The session's own home, DATA/agents/<session>/home (0700): HOME,
//      XDG_*, the agent's config dirs all point into it, so sessions never
//      share agent state and nothing touches the real home.
//   2. The prompt (prompt.h) goes to the agent's stdin, then EOF. The agent
//      resumes its own session when the turn carries this runtime's binding.
//   3. The process: argv from the dialect plus the profile's `args`, in the
//      session's workspace, its own process group and (with bubblewrap) its
//      own PID namespace with the rest of the data directory hidden,
//      recorded in DATA/run/procs before it runs (a SIGKILLed server's next
//      start kills it), dying with the server. Its environment is built, not inherited: PATH, LANG, LC_*,
//      TERM, TZ, USER, LOGNAME, the profile's `env` names and `set_env`, the
//      dialect's variables and the model key under the dialect's variable.
//      Tether's own secrets (the API token, every profile's api_key_env) are
//      never among them.
//   4. Its stdout, line by line (at most max_line_bytes each), through the
//      dialect's mapper onto events: step.started; runtime.bound {kind, the
//      agent's session id, generation, last_seen_seq} when the agent names
//      its session; text.ended per assistant message (text.delta where the
//      protocol streams); tool.called (kind agent) and tool.succeeded /
//      tool.failed per tool the agent runs; at the end step.ended with the
//      usage priced with Tether's table (cost_status estimated or unpriced;
//      the agent's own estimate, when it gives one, is kept in
//      step.ended.agent_cost_usd), or step.failed with the reason.
//   5. Its questions: Tether's ask_user reaches the turn through the tool
//      bridge (tool_bridge.h): tool.called + interaction.requested are
//      recorded, the agent is told to end its turn, and the turn returns
//      waiting. The answer is the next turn's prompt, in the same agent
//      session.
//
// Failures, each a step.failed and turn failed, never a hung session:
//   the binary is missing; it exits non-zero or without completing the turn;
//   it prints something that is not its protocol (it is killed); it prints
//   nothing for the profile's idle_timeout_ms (it is killed); the agent
//   reports an error. The message names the program and ends with the last
//   lines of its stderr. The model key is replaced by "[redacted]" in
//   everything recorded.
//
// Stop: the turn's stop token sends SIGTERM to the agent's group, SIGKILL
// after `grace`; the turn returns interrupted, and the binding recorded
// earlier lets the next turn resume the same agent session.
//
// The runtime keeps no process between turns: forget() has nothing to drop
// (a reset is seen through the binding's generation), stop() nothing to end.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>

#include "runtime/agent/dialect.h"
#include "runtime/agent/settings.h"
#include "runtime/common/pricing.h"
#include "session/runtime.h"

namespace tether::http {
class http_client;
}

namespace tether::work {
class agent_tools;
}

namespace tether::runtime::agent {

class tool_bridge;
class model_relay;
namespace portable {
class state_keeper;
}

struct agent_options {
  std::string kind;  // the profile's runtime kind ("codex-exec"), recorded as the execution's runtime
  std::string profile;
  agent_settings settings;
  std::filesystem::path program;      // the agent's binary (programs.h finds it)
  model_endpoint endpoint;            // key_variable is the dialect's
  std::string api_key;                // the value; "" for the scripted model (a placeholder is sent)
  std::vector<std::string> pass_env;  // names of Tether's variables the agent gets
  std::vector<std::string> withheld;  // never passed, whatever pass_env says (secrets)
  std::filesystem::path data_dir;
  runtime::price_table prices = runtime::price_table::defaults();
  tool_bridge* bridge = nullptr;  // null: the agent gets no Tether tools
  // The work layer's tools for the agent of a task's session, beside
  // ask_user on the bridge (work/agent_tools.h); null: only ask_user.
  work::agent_tools* work = nullptr;
  std::filesystem::path tether_program;  // `tether mcp` runs this binary
  std::chrono::milliseconds grace{2000};
  std::size_t max_line_bytes = 8U << 20U;
  // bubblewrap, when it runs here: the agent runs in a `contain` sandbox
  // (process/sandbox.h): its whole tree dies with it, the host is
  // read-only, and the data directory is hidden but for the session's home
  // and its workspace (both writable) and the tool bridge's socket. Absent: no sandbox (a warning at start-up), and
  // what the agent starts in another process group outlives a stop.
  std::optional<std::filesystem::path> bwrap;
  // In that sandbox: what the agent must not read (node/masks.h: the
  // server's configuration, PostgreSQL's sockets and password files, the
  // workspace roots that hold other sessions' workspaces), and what is shown
  // again inside them read-only (the agent's program, the `tether` binary).
  std::vector<std::filesystem::path> masked;
  std::vector<std::filesystem::path> visible;
  // The warm runtime's processes run on strands of this executor (the node's).
  boost::asio::any_io_executor io;
  // The model relay (model_relay.h): when set and the endpoint has a base
  // URL, the agent's base URL is the relay's and its key a token of its
  // run (a turn, or a warm process's life); the provider key (api_key)
  // never reaches the agent, and usage is read from every response.
  // `upstream` is the client the relay forwards this profile's requests with.
  model_relay* relay = nullptr;
  std::shared_ptr<http::http_client> upstream;
  // Where the agent's own session state is saved after each turn and
  // restored from on another node (portable/keeper.h); null: it stays in
  // this node's home. Not for turns in an environment.
  portable::state_keeper* states = nullptr;
  // relay-only (config: agent.network): in the contain sandbox the agent
  // has no network but the relay, reached through `tether relay-forward`.
  bool relay_only = true;
};

std::unique_ptr<session::runtime> make_per_turn_runtime(std::unique_ptr<dialect> d, agent_options o);

}  // namespace tether::runtime::agent
