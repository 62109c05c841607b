// event_store: the durable, ordered event log of every session, with the
// projections that answer "what is the state now" in the same transaction.
//
// Ownership and threads
//   A store is created by a backend (store/sqlite/sqlite_store.h) and shared
//   by reference; it outlives every caller. All calls are thread-safe and may
//   be made from any executor: each awaitable resumes on the caller's
//   executor. Writes (append, lease operations, quarantine) go to one writer
//   that group-commits (store/group_commit.h): requests queued by many
//   sessions are committed in one transaction, and each caller resumes only
//   after that commit is durable.
//   A write is queued when it is called, not when its awaitable is awaited,
//   so writes commit in call order and a caller that need not wait for an
//   outcome may drop the awaitable (the write still happens; its outcome is
//   discarded). Reads run on a small blocking pool and never wait for the writer.
//
// Backends
//   What every backend shares lives beside this header: the projection rules
//   (store/projector.h) and the lease rules (store/leases.h), written against
//   a small row-access interface (store/rows.h), the group-committing writer
//   (store/group_commit.h), the live tail hub (store/tail.h) and the bridge
//   that resumes callers on their executors (store/async.h). A backend
//   implements the row access, "commit this batch" and the reads.
//   tests/store is the conformance suite every backend passes.
//
// Atomicity
//   One append_request is all or nothing: its events get consecutive seqs,
//   the projections are updated, and its fence is checked, inside the commit
//   transaction (each request in its own savepoint, so one rejected request
//   does not affect the others in the same group).
//
// Errors (store_errc)
//   closed             after stop()
//   write_failed       this write's commit failed (full disk, I/O error, a
//                      lost connection): nothing of its batch was written,
//                      except that a database server may have committed a
//                      batch whose COMMIT lost its connection (a caller that
//                      writes again looks first: session/runner.h); the
//                      store is now degraded (see Storage failures)
//   storage_unavailable  the store is degraded: the write was refused at once,
//                      nothing was tried; retry later
//   fence_failed       the fence did not hold; nothing written
//   unknown_session    append to a session that was never created
//   duplicate_input    input.admitted of an exact retry (same id, session,
//                      prompt and delivery); nothing written, get_input()
//                      returns the original
//   input_conflict     input id reused with other content or in a transcript
//   quarantined        input.admitted to a quarantined session
//   rejected           another projection rule (see store/projector.h),
//                      an ephemeral payload, or a payload that would not read
//                      back (missing id, invalid UTF-8, JSON nested > 256)
//   session_exists     session.created for an existing session
//   not_found          a lookup by id (input, execution, interaction), or
//                      interaction.resolved naming no interaction of the session
//   interaction_not_pending   interaction.resolved of a settled interaction
//   lease_held / lease_lost   lease operations, see below; lease_held also
//                      from an append whose fence claims the lease (claim_ttl_ms)
//   corrupt            a stored row is not readable JSON or has an unknown
//                      status/role/delivery (reads; the message names the row)
//   model_errc::undecodable   a stored event's JSON is well formed but the
//                      catalogue rejects it (unknown type or version, missing
//                      or mistyped field); recovery quarantines such sessions
//   read_failed        the database could not be read (I/O, busy); transient
//   lagged             a tail_all() reader fell behind by more than its buffer
//
// Time
//   Lease and fence decisions, expiries and event times use one clock: the
//   backend's (SQLite: sqlite_options::clock, the system clock by default; a
//   database server backend: the database's time). No call takes a caller's
//   "now", so nodes with skewed clocks still agree on who holds a lease.
//
// Leases (owners are "<node>/<incarnation>", see session/types.h)
//   A lease is fresh while expires_at > the store's now, expired after.
//   claim: succeeds when there is no lease, it is expired, it is ours, or it
//          is held by another incarnation of our node (that process is gone:
//          recovery takes it over without waiting for expiry); otherwise
//          lease_held. The attempt count is kept across owners.
//   renew: ours (even if expired and not yet taken) -> extended; a fresh
//          foreign lease -> lease_held; an expired foreign one -> lease_lost.
//   release: ours -> expired now; fresh foreign -> lease_held; else lease_lost.
//   expire_owned: expires every lease of one owner (clean shutdown).
//
// Storage failures
//   A failed commit fails its whole batch (write_failed) and makes the store
//   degraded: health() says so, with the reason and since when, and every
//   write is refused at once with storage_unavailable (writes already queued
//   behind the failed batch too). Meanwhile the backend retries in the
//   background with backoff, each time with a real write; the first that
//   succeeds makes the store ok again, without a restart. Reads keep working
//   throughout. The runner retries its executions' writes (and the terminal
//   event) until the store is ok again, while its lease holds.
//
// Cancellation: calls are not cancellable; an awaited write completes once
// its commit is decided.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "store/errors.h"
#include "store/types.h"
#include "store/work_types.h"
#include "util/result.h"

namespace tether::store {

template <class T>
using task = boost::asio::awaitable<T>;

// An event as seen by a live subscriber: durable events carry their seq;
// ephemeral ones carry the seq of the last durable event of their session
// delivered before them (0 on a tail_all() tail), the publish time and an
// empty id.
struct tail_item {
  model::event event;
  bool durable = true;
};

// A live tail of one session. Created by event_store::tail(); it delivers
// every durable event with seq > `after` exactly once and in order, with no
// gap between history and live events (it subscribes before reading
// history), interleaved with ephemeral events published while it is open.
// A slow reader never blocks the writer: when its bounded buffer overflows
// it drops ephemeral events and re-reads durable ones from the store.
// event_store::tail_all() returns a tail of every session with other rules
// (no history, and an overflow ends it with lagged): see there.
class event_tail {
 public:
  virtual ~event_tail() = default;
  // The next items (at least one), waiting as long as needed. Returns
  // store_errc::closed after close() or the store's stop(), or the error of
  // reading history (e.g. corrupt), or lagged (tail_all() only). One next()
  // at a time per tail.
  virtual task<result<std::vector<tail_item>>> next() = 0;
  // Thread-safe; wakes a pending next().
  virtual void close() = 0;
};

// A session and what it waits for, read in one snapshot.
struct session_snapshot {
  session_row session;
  std::vector<input_row> pending_inputs;              // admission order
  std::vector<interaction_row> pending_interactions;  // request order
  model::usage usage;                                 // of all its executions, as session_overview's
};

// A session with how much waits in it: what a listing of sessions shows.
struct session_overview {
  session_row session;
  std::size_t pending_inputs = 0;
  std::size_t pending_interactions = 0;
  // The usage of all its executions (list_overviews only): tokens summed;
  // cost_usd the sum of the priced ones, absent when none was, with
  // cost_status "partial" when some were not.
  model::usage usage;
};

struct event_page {
  std::vector<model::event> events;
  bool more = false;  // there are events after the last one returned
};

class event_store {
 public:
  virtual ~event_store() = default;

  // ---- writes (group-committed) ----
  // Appends events to an existing session (or creates it: a request whose
  // first event is session.created on an unknown id).
  virtual task<result<append_result>> append(append_request req) = 0;

  // Lease operations (see Leases); a granted lease expires ttl_ms after the
  // store's now.
  virtual task<result<lease>> claim_lease(session_id s, std::string owner, time_ms ttl_ms) = 0;
  virtual task<result<lease>> renew_lease(session_id s, std::string owner, time_ms ttl_ms) = 0;
  virtual task<result<void>> release_lease(session_id s, std::string owner) = 0;
  virtual task<result<std::size_t>> expire_owned_leases(std::string owner) = 0;
  // Adds one to the lease's attempt count; the caller must hold a fresh lease.
  virtual task<result<std::int64_t>> bump_attempts(session_id s, std::string owner) = 0;
  // Marks a session undecodable: recovery skips it until an operator acts.
  virtual task<result<void>> quarantine(session_id s, std::string reason) = 0;

  // ---- live events ----
  // Ephemeral events go to live tails only; nothing is stored.
  virtual void publish(session_id s, model::payload ephemeral) = 0;
  virtual std::unique_ptr<event_tail> tail(session_id s, event_seq after) = 0;
  // A live tail of every session: their durable events after commit, in
  // commit order, interleaved with ephemeral events published while it is
  // open. No history: it starts with what is committed or published after
  // this call. For watching, not resuming: an ephemeral item carries seq 0
  // (there is no one position to carry), a durable one its own seq.
  // It never blocks the writer and never re-reads the store: when more than
  // `buffer` items (0 counts as 1) are waiting unread, they are dropped and
  // next() returns lagged, then and on every later call (the tail is dead:
  // open a new one and catch up by reading). close() and stop() end it with
  // closed.
  virtual std::unique_ptr<event_tail> tail_all(std::size_t buffer) = 0;

  // ---- reads ----
  // Session-scoped reads of an unknown session return unknown_session.
  // Events with seq > after, at most `limit` (capped at 10,000) per page.
  virtual task<result<event_page>> read(session_id s, event_seq after, std::size_t limit) = 0;
  virtual task<result<session_row>> get_session(session_id s) = 0;
  // get_session + pending_inputs + pending_interactions in one read.
  virtual task<result<session_snapshot>> snapshot(session_id s) = 0;
  // Most recently updated first.
  virtual task<result<std::vector<session_row>>> list_sessions(std::size_t limit) = 0;
  // list_sessions with each session's pending inputs and pending
  // interactions counted, in one read (one snapshot, one query where the
  // backend can): a listing costs one read, not one per session. With an
  // id_prefix, only the sessions whose id starts with it (how a shortened
  // id is looked up).
  virtual task<result<std::vector<session_overview>>> list_overviews(std::size_t limit, std::string id_prefix = {}) = 0;
  virtual task<result<input_row>> get_input(input_id id) = 0;
  // Pending inputs of a session in admission order.
  virtual task<result<std::vector<input_row>>> pending_inputs(session_id s) = 0;
  // Every input of a session (pending, promoted, cancelled) in admission order.
  virtual task<result<std::vector<input_row>>> list_inputs(session_id s) = 0;
  // The transcript of the current context generation, in seq order.
  virtual task<result<std::vector<message_row>>> context(session_id s) = 0;
  // Every message of every context generation in seq order: unlike
  // context(), nothing is cut at a reset or compaction and there is no
  // summary row.
  virtual task<result<std::vector<message_row>>> transcript(session_id s) = 0;
  virtual task<result<execution_row>> get_execution(execution_id id) = 0;
  virtual task<result<std::vector<execution_row>>> list_executions(session_id s) = 0;
  virtual task<result<std::vector<tool_call_row>>> unsettled_calls(session_id s) = 0;
  virtual task<result<interaction_row>> get_interaction(interaction_id id) = 0;
  virtual task<result<std::vector<interaction_row>>> pending_interactions(session_id s) = 0;
  // Every interaction of a session (any status) in request order.
  virtual task<result<std::vector<interaction_row>>> list_interactions(session_id s) = 0;
  // Sessions with an open execution whose lease is absent, expired at the
  // store's now, or held by `node` under an owner other than `current_owner`
  // (a previous incarnation: "<node>/<other>"), ordered by session id, after
  // `after`, at most `limit` (capped at 10,000). Quarantined sessions are
  // skipped.
  virtual task<result<std::vector<abandoned_session>>> list_abandoned(std::string node, std::string current_owner,
                                                                      std::optional<session_id> after,
                                                                      std::size_t limit) = 0;
  // Sessions that nobody runs although they should: a pending input admitted
  // with resume (and not held by a stop since), or an answered question whose
  // turn has not continued; no open execution, no pending interaction, not
  // quarantined. Ordered by session id, after `after`, at most `limit`
  // (capped at 10,000). Served by two partial indexes (pending resume inputs,
  // sessions with a continuation pending), not by reading every session. A session that is
  // about to start (woken, execution.started not yet committed) is listed too.
  virtual task<result<std::vector<session_id>>> list_stranded(std::optional<session_id> after, std::size_t limit) = 0;

  // ---- the work layer (docs/architecture.md §6) ----
  // Tasks, comments and document revisions are projections of events in the
  // task's session (model/events.h); projects are rows written here, with
  // store/projector.h's rules (create_project, update_project).
  virtual task<result<project_row>> create_project(project_row p) = 0;
  virtual task<result<project_row>> update_project(project_patch patch) = 0;
  virtual task<result<project_row>> get_project(project_id id) = 0;                     // not_found
  virtual task<result<std::vector<project_row>>> list_projects(std::size_t limit) = 0;  // by name
  virtual task<result<task_row>> get_task(task_id id) = 0;                              // not_found
  // The task whose session this is, if any.
  virtual task<result<std::optional<task_row>>> task_of_session(session_id s) = 0;
  // Most recently updated first.
  virtual task<result<std::vector<task_row>>> list_tasks(task_filter f) = 0;
  // In order; an unknown task has none.
  virtual task<result<std::vector<comment_row>>> list_comments(task_id t) = 0;
  // Every revision of every document of the task, per document by number.
  virtual task<result<std::vector<revision_row>>> list_revisions(task_id t) = 0;
  // What was decided before each of its runs (task.prepared), in order.
  virtual task<result<std::vector<preparation_row>>> list_preparations(task_id t) = 0;

  // ---- several processes on one store (a database server backend) ----
  // What another process sharing this store did: committed events of
  // `session` up to `seq` (`wakes`: among them an event that may give a
  // session work: an input, an answer, a reset), or a control message
  // (`control`, e.g. "interrupt"). A resync (empty session) says changes may
  // have been missed (the backend lost its connection): look again.
  struct foreign_change {
    session_id session;
    event_seq seq;
    bool wakes = false;
    std::string control;
  };
  // `watcher` is called on a thread of the store for every foreign change
  // (it must only post work). Session tails need no watcher: they see
  // foreign events by themselves. A store no other process shares never
  // calls it. One watcher; set it before start, nullptr removes it.
  virtual void watch_foreign(std::function<void(const foreign_change&)> watcher) { (void)watcher; }
  // Sends a control message about `s` to the other processes' watchers
  // (best effort, not durable). No-op when no other process shares the store.
  virtual void signal(session_id s, std::string control) {
    (void)s;
    (void)control;
  }
  // Whether other processes may share this store.
  [[nodiscard]] virtual bool shared() const { return false; }

  // Whether writes are taken now (see Storage failures). Thread-safe and
  // cheap: no I/O. A store that cannot fail this way reports ok.
  [[nodiscard]] virtual store_health health() const { return {}; }

  // Stops taking calls, finishes queued writes, closes tails. Idempotent.
  virtual void stop() = 0;
};

}  // namespace tether::store
