// The agent-program runtimes that keep one agent process per session across
// turns: codex (codex app-server), claude (claude stream-json), opencode
// (opencode serve), and the ACP agents (acp, acp-codex, acp-claude,
// acp-opencode). warm_dialect.h says what differs between them.
//
//   agent::agent_options o;                 // from the profile (node.cpp), o.io the node's executor
//   auto rt = agent::make_warm_runtime(agent::make_acp(agent::acp_agent::codex), std::move(o));
//
// The registry (one per profile, so per node): a process per session and
// context generation, created by the session's first turn and reused by its
// next ones. It is closed (the protocol's goodbye, then SIGTERM to its group,
// SIGKILL after `grace`):
//   - after the profile's keep_alive_ms without a turn;
//   - on a reset (a turn of a newer generation) and on forget() (a reset, or
//     the session's lease moved to another node);
//   - at stop() (clean shutdown): every process, waited for;
//   - to make room: at most max_processes per profile; a new one closes the
//     least recently used idle one, or waits for one to become idle.
// A process that dies while idle is reaped and replaced by the next turn.
//
// One turn, on the session's strand (the process's own I/O on a strand of
// the process):
//   1. The process: the warm one, else a new one (agent_runtime.h's home,
//      environment, sandbox and process records) whose connection opens the
//      agent session recorded in the binding (runtime.bound) — after a
//      Tether restart, that is how the agent's context comes back — or a new
//      one. An agent that refuses to resume gets a new session and the whole
//      transcript as its prompt.
//   2. step.started and runtime.bound {kind, the agent's session, generation,
//      last_seen_seq, state {"pid","started_ms"}}: the execution records
//      which process served it (the API's execution.agent_process).
//   3. The prompt (prompt.h): what the agent has not seen. Its events map as
//      the per-turn runtime's do (turn_recorder.h); ask_user goes through
//      the tool bridge of the process to the running turn.
//   4. Steering, where the dialect can_steer(): a steer admitted while the
//      turn runs is promoted (boundary()) and put into the running agent
//      turn at once. One the agent does not take (its turn was ending) runs
//      as another agent turn inside this Tether turn. Elsewhere steers wait
//      for the turn's end, as with the per-turn runtime.
//   5. The end: step.ended with the usage priced, or step.failed with the
//      reason and the stderr tail; the process stays warm, except after a
//      crash, a protocol error or a hang (it is replaced by the next turn,
//      which resumes the agent session).
// Stop: the protocol's cancel; SIGKILL to the process after `grace` when the
// turn has not ended by then; the turn returns interrupted.
// Failures fail the turn, never hang it: the process exits (crash), prints
// something that is not its protocol, prints nothing for idle_timeout_ms
// (a new process has start_timeout_ms to be ready first), refuses the turn,
// or reports an error.
#pragma once

#include <memory>

#include "runtime/agent/agent_runtime.h"
#include "runtime/agent/warm_dialect.h"

namespace tether::runtime::agent {

std::unique_ptr<session::runtime> make_warm_runtime(std::unique_ptr<warm_dialect> d, agent_options o);

}  // namespace tether::runtime::agent
