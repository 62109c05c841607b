// The projector: one append_request applied inside the writer's
// transaction, for every backend. The rules below read and write rows only
// through write_rows (store/rows.h), so a backend implements that and
// inherits the rules, their order and their error codes. apply_append()
// leaves the request untouched, so the writer can run it a second time (a
// backend may roll a batch back and run it again, each request in its own
// savepoint: see store/group_commit.h).
//
// apply_append():
//   1. every payload must be durable and must read back through the
//      catalogue (encode -> JSON text -> decode), so a stored row is always
//      readable; otherwise `rejected`;
//   2. the session must exist, unless the first event is session.created
//      (then it must not: session_exists); otherwise unknown_session;
//   3. the fence is checked (fence_failed), at write_rows::now(); a fence
//      with claim_ttl_ms first claims the lease (store/leases.h);
//   4. each event gets the next seq, a fresh event id and the request's time
//      (write_rows::now() when 0), its projection rule runs, and the row is
//      inserted (the session's last seq is the last of its events).
//
// Projection rules (errors in parentheses; any error fails the request):
//   session.created      inserts the session row (session_exists)
//   session.updated      title
//   session.forked       in the fork's log: the row's forked_from and
//                        forked_at; in the source's: stored only (rejected
//                        when the session is neither, or both)
//   session.reset        generation + 1, written into the stored payload;
//                        drops the runtime binding; the context starts
//                        after it
//   compaction.ended     the context becomes the summary followed by the
//                        messages from kept_from_seq (rejected unless
//                        1 <= kept_from_seq <= its own seq)
//   input.admitted       inserts a pending input (duplicate_input for an
//                        exact retry; input_conflict for the id reused with
//                        another prompt, delivery or session, or naming a
//                        transcript message); no transcript message yet
//   input.promoted       pending input of this session -> promoted, with
//                        its execution and promoted_seq (this event's seq);
//                        user message with the input's id and prompt (rejected)
//   input.cancelled      pending input of this session -> cancelled (rejected)
//   input.returned       input of this session promoted into the open
//                        execution it names -> pending again, in its
//                        admission place, waiting for a run; its user message
//                        leaves the transcript (a promotion writes it again);
//                        `returns` must be the input's count of returns + 1,
//                        which the row keeps (rejected)
//   execution.started    opens the execution (started_at: the event time)
//                        with its runtime, which becomes the session's;
//                        clears continuation_pending (rejected while
//                        another execution is open)
//   execution.recovered  must name the open execution (rejected)
//   execution.finished   must name the open execution (rejected); records
//                        outcome, reason, error, usage and finished_at (the
//                        event time); closes it; resets the lease's attempt
//                        count
//   step.started         must name the open execution (rejected); open_step
//   step.ended/failed    clears open_step of the open execution, if any
//   text.ended           assistant message; its id must not name another
//                        message or an input (rejected)
//   tool.called          running call of its kind in the open execution (or
//                        none) and a tool_call message (rejected for a
//                        reused call id)
//   tool.succeeded/failed  running call of this session -> settled; a
//                        tool_result message (rejected)
//   interaction.requested  pending interaction (rejected for a reused id)
//   interaction.resolved   not_found, or interaction_not_pending unless it
//                        is pending; status must be answered or cancelled
//                        (rejected); sets continuation_pending
//   runtime.bound        the session's binding, when made in its current
//                        generation; one of an earlier generation (a reset
//                        came between) is stored but changes nothing
//                        (rejected without a generation, or for one ahead
//                        of the session's)
//   synthetic            notice message (id = the event id)
//   agent.state.saved    a state of the session, referring to each chunk
//                        of its manifest (rejected when a chunk is not
//                        stored: chunks are put first,
//                        store/agent_state_store.h)
//   agent.state.unavailable  a state of the session (none to restore)
//   step.retry_scheduled, reasoning.ended, compaction.ended, env.lease.*,
//   env.workspace.synced: stored only
//
// The work layer (the session must be a task's, else rejected):
//   task.created         inserts the task (rejected when the session already
//                        has one, for a reused id or a blank title over 500
//                        bytes; not_found for an unknown project or parent)
//   task.updated         the fields it sets (as task.created's checks)
//   task.status_changed  conflict unless `from` is the task's status now;
//                        rejected for a transition model/task.h does not
//                        allow; sets the status and its timestamps
//   task.commented       inserts the comment (rejected: blank, reused id)
//   document.revised     the next revision of the document (conflict unless
//                        its base is the latest revision: none for the
//                        first; rejected: blank content, reused id)
//   task.prepared        the task's preparation record (before a run)
//   document.accepted    the revision of this task's document is accepted
//                        (not_found otherwise); a plan's becomes the task's
//                        accepted plan
#pragma once

#include <string>
#include <vector>

#include "store/rows.h"
#include "store/types.h"
#include "util/result.h"

namespace tether::store {

// Checks and encodes a request's payloads without touching the database, so
// callers do it on their own thread and the writer thread only runs SQL.
result<std::vector<std::string>> encode_append(const append_request& req);
// `data` is encode_append(req)'s value.
result<append_result> apply_append(write_rows& rows, const append_request& req, const std::vector<std::string>& data);

// Projects are rows, not events (a project has no session of its own):
// create_project inserts `p` as revision 1 (rejected: an id in use, a blank
// name or one over 200 bytes, a description over 64 KiB, repositories that
// model::check_repositories refuses; conflict: the name is another
// project's). update_project applies the patch as revision + 1 (not_found;
// conflict: a stale expected_revision or a taken name; rejected as above).
// Both stamp the times with write_rows::now() and return the row as stored.
result<project_row> create_project(write_rows& rows, project_row p);
result<project_row> update_project(write_rows& rows, const project_patch& patch);

}  // namespace tether::store
