// event_store: the durable, ordered event log of every session, with the
// projections that answer "what is the state now" in the same transaction.
// Its calls are split by concern, each an interface of its own that a caller
// needing one concern takes alone:
//   event_log        appends, ephemeral events, tails, pages  store/event_log.h
//   lease_store      leases, quarantine, what recovery finds  store/lease_store.h
//   session_reads    sessions, inputs, transcripts, calls     store/session_reads.h
//   work_store       projects, tasks, comments, revisions     store/work_store.h
//   cluster_signals  other processes sharing the store        store/cluster_signals.h
//   agent_state_store  chunks of agents' saved session state   store/agent_state_store.h
// event_store is all of them with a lifecycle (stop); this header says what
// holds for every call. store/forwarding_store.h forwards each call to
// another store, for tests that change one or two.
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
//   that resumes callers on their executors (store/async.h), the write side
//   (store/committed_store.h) and the read side (store/reading_store.h: each
//   read once, over the backend's queries of the same name). A backend
//   implements the row access, "commit this batch" and its queries.
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
//   lease_held / lease_lost   lease operations (store/lease_store.h); lease_held also
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
// Leases: see store/lease_store.h.
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

#include "store/agent_state_store.h"
#include "store/cluster_signals.h"
#include "store/errors.h"
#include "store/event_log.h"
#include "store/lease_store.h"
#include "store/session_reads.h"
#include "store/task.h"
#include "store/types.h"
#include "store/work_store.h"
#include "util/result.h"

namespace tether::store {

class event_store : public event_log,
                    public lease_store,
                    public session_reads,
                    public work_store,
                    public agent_state_store,
                    public cluster_signals {
 public:
  ~event_store() override = default;

  // Stops taking calls, finishes queued writes, closes tails. Idempotent.
  virtual void stop() = 0;
};

}  // namespace tether::store
