// runner: the drain function of one node (internal to the session layer).
//
// drain(session): while the session has work (pending inputs, an answered
// interaction, or an open execution to take over) and no pending
// interaction, it claims the lease, runs one execution to its end, writes
// the terminal event fenced on the lease, and releases the lease.
//
// One execution:
//   start      one commit claims the lease and appends execution.started
//              (fence: no open execution) with the first turn's promotions
//              (a fresh foreign lease: busy, nothing written), or —
//              taking over an open execution — bump attempts; past the budget
//              finish failed(attempt_budget); otherwise fail its in-flight tool
//              calls and open step, append execution.recovered + a synthetic
//              restart notice, and continue it.
//   turn loop  promote (all pending steers; if none, the oldest queued input);
//              nothing promoted and no continuation -> succeeded. Otherwise
//              run one runtime turn on the current context. completed -> loop;
//              waiting/failed/interrupted end the execution.
//   finish     interrupted: fail unsettled calls and the open step; failed
//              because the store could not write or read: give the last
//              turn's unanswered inputs back (see Giving inputs back); then
//              execution.finished (fence: lease). Lease lost or shutdown: no
//              terminal event at all. The terminal event is retried like a
//              turn's write (see Storage failures) but for the whole lease;
//              past that, or at shutdown, the drain ends abandoned and
//              recovery finishes the execution once the lease has expired.
//   heartbeat  renews the lease every lease_renew_ms while the execution runs;
//              a failed renewal stops the execution (reason lease_lost), except
//              a storage failure while the lease would still hold until the
//              next renewal: that one is tried again then.
//   lease lost the execution now belongs to another node: the runtime
//              forgets the session (runtime::forget) before the drain ends.
//
// Storage failures. A store that cannot write for a while (full disk, a
// database restart or a killed connection: write_failed,
// storage_unavailable) or read (read_failed) does not fail a turn at once:
// each write of the execution (record, record_soon, a promotion, the
// terminal event) and each read a turn needs is tried again with backoff
// (storage_retry_ms doubling to storage_retry_max_ms), one code path for
// all, while the lease is surely still ours: a turn's writes and reads
// while it holds storage_end_reserve_ms beyond the wait and no stop is
// requested, the terminal event until it expires or a shutdown. A commit
// that failed may still have landed (the connection was lost during
// COMMIT), so before a write is done again its events are looked for after
// the last seq the execution's writes are known to have reached (this
// runner is the only writer of its execution's events under the lease;
// admissions interleave, so the events themselves are compared: the first
// one's type and payload, the others' types, at consecutive seqs): found,
// the write succeeded; not found, it is done again. A write is thus in the
// log once or not at all, and a runtime sees success when it landed.
// record_soon() writes keep their order: one is queued at once only when
// no earlier write of the turn is unresolved, else after it; one that could
// not be written refuses every later write of the turn.
//
// Giving inputs back. When an execution fails because the store could not
// write or read (a turn's write or read given up, or the runner's own), the
// inputs its last turn promoted that no answer followed (no text.ended after
// their input.promoted, none held for the end) are given back to pending:
// input.returned {input, execution, "storage_failed", returns} in the commit
// of execution.finished. They keep their admission order and wait for a run,
// so this drain's next execution promotes them (and the recovery scan's
// list of stranded sessions has them, should this node stop first). An
// input already given back input_return_limit times is not: it stays
// promoted into the failed execution, whose error names it.
//
// execution.started names the runtime of the session's profile
// (runtime::name). Each turn gets the inputs it promoted and, when the
// session's binding was made in its current generation, that binding.
//
// The turn host a turn gets holds what the turn needs (the events held for
// the execution's next write among them) and gives it back when the turn
// ends; from then on it refuses every call (turn_over), so a runtime that
// keeps it reaches nothing of the runner. It maps the store's errors to
// session_errc (lease_lost, storage_failed, invalid_input, stopped).
#pragma once

#include <functional>
#include <memory>
#include <set>

#include <boost/asio/awaitable.hpp>

#include "session/coordinator.h"
#include "session/runtime.h"
#include "session/types.h"
#include "store/event_store.h"

namespace tether::session {

class runner {
 public:
  runner(store::event_store& store, runtime& rt, const tether::clock& clk, node_identity node, session_options options);

  boost::asio::awaitable<drain_outcome> drain(session_id s, std::shared_ptr<drain_control> control);

  [[nodiscard]] const node_identity& node() const { return node_; }
  [[nodiscard]] const session_options& options() const { return options_; }

 private:
  struct execution_end {
    model::outcome outcome = model::outcome::succeeded;
    std::string reason;
    std::string error;
    model::usage usage;
    std::vector<model::payload> held;  // a final answer not yet written (turn_host::boundary_after)
  };
  class host;
  class retrying;
  enum class step_state { as_stored, closed };  // closed: held events end the open step
  enum class retry_for { turn, end };             // see Storage failures

  // What the writes of one execution share, with its turn hosts.
  struct execution_log {
    session_id session;
    execution_id execution;
    std::shared_ptr<drain_control> control;
    std::shared_ptr<time_ms> held_until;  // when the lease expires unless renewed (the heartbeat renews it)
    // The last seq the execution's writes are known to have reached: a write
    // that failed, if it landed, is after it.
    event_seq written;
    // The last seq of the execution's last completed turn (0: not known
    // here, the execution's start): the current turn's inputs come after.
    event_seq turn_floor;
    // The current turn gave up a write or a read because of the store.
    bool store_failed = false;
    // The write given up last may have landed (its check could not read).
    bool in_doubt = false;
  };
  // The input.returned events of a failed execution (see Giving inputs
  // back), and the inputs that stay failed ("" when none).
  struct given_back {
    std::vector<model::payload> events;
    std::string kept;
  };

  // What a boundary did, and the events still held for the execution's next
  // write (all of `held` and `before` when nothing was promoted; none once
  // they were written, or refused).
  struct promotion {
    result<boundary_result> done;
    std::vector<model::payload> held;
  };
  // Promotes at a boundary, writing `held` and `before` first in the same
  // commit; with nothing to promote they stay held for the next write.
  boost::asio::awaitable<promotion> promote(std::shared_ptr<execution_log> log, model::delivery upto,
                                            std::vector<model::payload> held, std::vector<model::payload> before);
  // `first_inputs`: promoted by the commit that started the execution (they
  // are the first turn's); empty when that commit promoted nothing.
  boost::asio::awaitable<execution_end> run_execution(std::shared_ptr<execution_log> log, turn_start start,
                                                      std::vector<promoted_input> first_inputs,
                                                      std::optional<store::session_row> first);
  // `held_until`: when the lease expires unless renewed (updated by each renewal).
  boost::asio::awaitable<void> heartbeat(session_id s, std::shared_ptr<drain_control> control,
                                         std::shared_ptr<time_ms> held_until);
  // Appends the terminal `events` (fence: the lease, released in the same
  // commit), retrying storage failures while the lease holds (see finish).
  boost::asio::awaitable<result<store::append_result>> append_terminal(std::vector<model::payload> events,
                                                                       std::shared_ptr<execution_log> log);
  // Appends `req` (one of the execution's writes) once, retrying storage
  // failures (see Storage failures). `first`: the failure of an attempt
  // already made (a record_soon() write).
  boost::asio::awaitable<result<store::append_result>> write(store::append_request req,
                                                             std::shared_ptr<execution_log> log, retry_for why,
                                                             std::optional<error> first = std::nullopt);
  // `req`'s events if an append put them in the log after `after`.
  boost::asio::awaitable<result<std::optional<store::append_result>>> landed(store::append_request req,
                                                                             event_seq after);
  // A read the store may fail for a while (read_failed), retried as write()
  // does. (Callers name `op` before the co_await: see runner.cpp on g++ 12.)
  template <class T>
  using store_call = std::function<store::task<result<T>>()>;
  template <class T>
  boost::asio::awaitable<result<T>> read(store_call<T> op, std::shared_ptr<execution_log> log, retry_for why);
  // What to give back of a failed execution's last turn; `answered`: an
  // answer is held for the terminal commit (the turn's inputs had theirs).
  boost::asio::awaitable<result<given_back>> give_back(std::shared_ptr<execution_log> log, bool answered);
  // Fails unsettled calls and the open step of an execution (events only),
  // but for the calls in `waiting`: each waits for a person's answer to its
  // pending interaction, which settles it.
  boost::asio::awaitable<result<std::vector<model::payload>>> settle_leftovers(session_id s, execution_id e,
                                                                               std::string why, step_state step,
                                                                               std::set<call_id> waiting = {});
  store::fence lease_fence() const;
  store::fence terminal_fence() const;  // lease_fence() that also releases the lease

  store::event_store& store_;
  runtime& runtime_;
  const tether::clock& clock_;
  node_identity node_;
  session_options options_;
};

}  // namespace tether::session
