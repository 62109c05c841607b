// session_service: the session layer's front door (docs/architecture.md §4). The API and
// the CLI call this; it owns the coordinator, the runner and recovery.
//
// Lifecycle: construct, co_await start() (starts the runtime, runs one
// recovery scan and starts the periodic scan; a runtime that fails to start
// fails it), use, co_await stop() (stops drains without terminal events,
// stops the runtime once they have ended, expires this node's leases: the
// next start recovers them). stop() stops the runtime even when start() was
// never called.
//
// Admission (admit):
//   - validates: id format, prompt non-empty, valid UTF-8, at most
//     max_prompt_bytes; the session must exist and not be quarantined;
//   - the input is durable (committed) before admit() returns;
//   - an exact retry (same id, session, prompt, delivery) returns the original
//     with admit_status::existing and writes nothing; if that input is still
//     pending and the retry asks to resume, the session is woken;
//   - the same id with other content, in another session, or naming a
//     transcript message is session_errc::input_conflict;
//   - start_mode::resume wakes the session (returns without waiting for the
//     execution); record_only just records.
//
// Creation (create): the session is durable before create() returns. An
// exact retry of an id (same title, workspace, profile and metadata)
// returns the existing session with create_status::existing and writes
// nothing; the same id with other attributes is session_conflict.
//
// Reads (describe, list): a session's status and what waits in it, by the
// rule of session/queries.h. list() costs one store read however many
// sessions it returns.
//
// Answers (submit_answer): a client's answer to an interaction is checked
// against its question (model/questions.h) before anything is written;
// answer() resolves with what it is given. Either wakes the session unless
// the interaction's payload says {"continuation": "never"} (the answer is
// recorded and the agent hears it on its next turn).
//
// Cancellation of an input (cancel_input): a pending input becomes cancelled
// (input.cancelled, reason "user") and is never promoted. The store decides
// inside its transaction, so a cancel that races with the input's promotion
// either wins (the input is never promoted) or fails with input_not_pending.
//
// Errors: session_errc for caller mistakes; util_errc for malformed values
// (invalid_argument: an answer that does not fit its question);
// store_errc for storage failures (write_failed, closed).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>

#include "session/queries.h"
#include "session/runtime.h"
#include "session/types.h"
#include "store/event_store.h"
#include "util/clock.h"
#include "util/result.h"

namespace tether::session {

class session_service {
 public:
  // `store`, `rt` and `clk` must outlive the service.
  session_service(boost::asio::any_io_executor executor, store::event_store& store, runtime& rt,
                  const tether::clock& clk, node_identity node, session_options options = {});
  ~session_service();
  session_service(const session_service&) = delete;
  session_service& operator=(const session_service&) = delete;

  task<result<recovery_report>> start();
  task<void> stop();

  struct creation {
    session_summary session;
    create_status status = create_status::created;
  };
  // Errors: util_errc (malformed id, text too large or not UTF-8),
  // session_conflict, store errors.
  task<result<creation>> create(create_request req);
  // A create that must make the session: an id already taken (retry or
  // not) is store_errc::session_exists. For embedded callers that need
  // only the row.
  task<result<store::session_row>> create_session(create_request req);
  // Errors: unknown_session.
  task<result<session_summary>> describe(session_id s);
  // Forks `source` whole at a turn boundary (session/fork.h): the new
  // session's workspace from the snapshot of that turn (the options'
  // snapshots), its log copied up to that turn and session.forked recorded
  // in both logs. The fork is idle until written to; the source is not
  // touched but for its record. Errors: unknown_session, quarantined;
  // util_errc::invalid_argument naming `at` (not the end of a turn, none
  // yet); cannot_fork (no snapshot of that turn on this node, no snapshots
  // kept here); store_errc::session_exists (the fork's id is taken); util_errc
  // for a malformed id or title.
  task<result<session_summary>> fork(session_id source, fork_request req);
  // The most recently updated sessions first, at most `limit`; with an
  // id_prefix, only those whose id starts with it.
  task<result<std::vector<session_summary>>> list(std::size_t limit, std::string id_prefix = {});
  task<result<admission>> admit(session_id s, input_request req);
  // Cancels a pending input of the session; returns its row, now cancelled.
  // Errors: unknown_session; unknown_input (no such input, or one of another
  // session); input_not_pending (already promoted or cancelled, including a
  // promotion that commits first). Does not wake or interrupt the session.
  task<result<store::input_row>> cancel_input(session_id s, input_id id);
  // Starts a drain (or joins the running one) and waits for it to finish.
  task<result<drain_outcome>> resume(session_id s);
  void wake(session_id s);
  // Wakes the session when it has work it can do now (a pending input, an
  // answered question to continue from, or an execution left open) and no
  // question waits for a human; does not wait for the drain. Errors:
  // unknown_session.
  task<result<wake_status>> resume_if_work(session_id s);
  // Acknowledged at once; the execution finishes interrupted(user) shortly
  // after. Pending inputs are kept. Idle session: was_active = false.
  task<result<interrupt_ack>> interrupt(session_id s);
  // Appends session.reset: history stays, the next turn's context is empty
  // and has no runtime binding; then the runtime forgets the session
  // (runtime::forget).
  task<result<void>> reset(session_id s);
  // Resolves a pending interaction, settles its waiting tool call with the
  // answer and wakes the session, all durably. The answer's JSON text is
  // held to max_prompt_bytes and must be valid UTF-8.
  task<result<void>> answer(interaction_id id, boost::json::value answer);
  // A client's answer ({"answers":[…]}): refused with invalid_argument,
  // naming the field, unless it answers the interaction's question (see
  // model/questions.h), then resolved as answer() does. Returns the
  // interaction, now answered. Errors: unknown_interaction,
  // interaction_closed, util_errc::invalid_argument, too_large, invalid_utf8.
  task<result<store::interaction_row>> submit_answer(interaction_id id, boost::json::value body);
  // What resolving an interaction writes, for callers that decide it
  // themselves (the work layer's plan decisions): interaction.resolved with
  // `answer`, its waiting tool call settled with `call_result`, then `then`,
  // all in one commit. A session.reset among `then` makes the runtime forget
  // the session (as reset() does); `wake` wakes it after.
  struct resolution {
    boost::json::value answer;
    std::string call_result;
    std::vector<model::payload> then;
    bool wake = true;
  };
  // Errors: unknown_interaction, interaction_closed, the store's (a
  // projection refusing one of `then` writes nothing).
  task<result<void>> resolve_with(interaction_id id, resolution r);
  // One recovery scan now (start() and the periodic timer call this).
  task<result<recovery_report>> recover();
  // Waits until the session has no drain running or pending (tests, CLI).
  task<void> idle(session_id s);

  // Whether a drain of the session is running or about to (woken, not yet idle).
  [[nodiscard]] bool active(const session_id& s) const;
  [[nodiscard]] const node_identity& node() const;
  [[nodiscard]] std::uint64_t drains_started() const;
  // resume() calls currently waiting on the session (tests, metrics).
  [[nodiscard]] std::size_t resume_waiters(const session_id& s) const;

 private:
  // What another node sharing the store did (event_store::watch_foreign),
  // on the node's executor.
  void on_foreign(const store::cluster_signals::foreign_change& c);

  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace tether::session
