// Forking a session whole (session_service::fork): a new session whose log
// starts with the source's transcript up to a turn boundary, whose
// workspace is the source's as it was then (session/snapshots.h), and whose
// agent program resumes the agent's own session saved by then
// (runtime/agent/portable/keeper.h). The source goes on unaffected.
//
//   auto at = fork_point_of(source_log, 12);          // seq 12 must end a turn
//   auto log = fork_log(source_log, *at, {source, fork, snapshot, held});
//   // append session.created, then `log`, to the fork in one request
//
// A turn boundary is an execution.finished event: `at` names one by its seq,
// or is absent for the last one (a turn running now is not part of it).
// Anything else is util_errc::invalid_argument naming `at`.
//
// fork_log() copies the source's events 2..at (session.created is the
// fork's own), so the store projects the same transcript, executions,
// tool calls, interactions, binding and context generation for the fork:
//   - every id is new (inputs, executions, messages, tool calls,
//     interactions: the store keeps them unique across sessions), and each
//     reference to one follows it;
//   - seqs named in payloads (a binding's last_seen_seq, a compaction's
//     kept_from_seq) are mapped onto the fork's seqs;
//   - usage is left out of the copies (steps and executions count zero
//     tokens and no cost): the source spent it, and a budget or a report
//     that sums sessions counts it once;
//   - inputs still pending or cancelled at `at` are left out, so the fork
//     is idle until someone writes to it; a question still waiting at `at`
//     is copied and waits in the fork too;
//   - left out as well: session.updated (the fork has its own title),
//     session.forked (the source's own record of forks), env.* (a lease is
//     the source's), the work layer's task.* and document.* (the fork is a
//     plain session), and every agent.state.* event but the newest, which
//     becomes agent.state.unavailable when the source's budget has
//     released its chunks (`held` false): the fork then starts a new agent
//     session with the transcript, and says why;
//   - last, session.forked {from, fork, at, snapshot}.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/events.h"
#include "util/ids.h"
#include "util/result.h"

namespace tether::session {

struct fork_point {
  std::int64_t seq = 0;     // the execution.finished event's
  execution_id execution;   // the execution it ends
};

// `log` is the source's, in seq order, at least up to `at`.
result<fork_point> fork_point_of(const std::vector<model::event>& log, std::optional<std::int64_t> at);

// The seq of the newest agent.state.* event at or before `p`: its state must
// still be held for fork_log to copy it as saved (0 when there is none).
std::int64_t newest_agent_state(const std::vector<model::event>& log, const fork_point& p);

struct fork_names {
  session_id from;
  session_id fork;
  std::string snapshot;
  bool state_held = true;  // newest_agent_state's chunks are still stored
};

std::vector<model::payload> fork_log(const std::vector<model::event>& log, const fork_point& p,
                                     const fork_names& names);

}  // namespace tether::session
