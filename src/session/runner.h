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
//   finish     interrupted: fail unsettled calls and the open step; then
//              execution.finished (fence: lease). Lease lost or shutdown: no
//              terminal event at all. A store that cannot write (full disk:
//              write_failed, storage_unavailable) does not leave the
//              execution running: the terminal event is retried with backoff
//              (storage_retry_ms doubling to storage_retry_max_ms) until the
//              store writes again, as long as the lease is surely still ours;
//              past that, or at shutdown, the drain ends abandoned and
//              recovery finishes the execution once the lease has expired.
//   heartbeat  renews the lease every lease_renew_ms while the execution runs;
//              a failed renewal stops the execution (reason lease_lost), except
//              a storage failure while the lease would still hold until the
//              next renewal: that one is tried again then.
//   lease lost the execution now belongs to another node: the runtime
//              forgets the session (runtime::forget) before the drain ends.
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
  enum class step_state { as_stored, closed };  // closed: held events end the open step

  // What a boundary did, and the events still held for the execution's next
  // write (all of `held` and `before` when nothing was promoted; none once
  // they were written, or refused).
  struct promotion {
    result<boundary_result> done;
    std::vector<model::payload> held;
  };
  // Promotes at a boundary, writing `held` and `before` first in the same
  // commit; with nothing to promote they stay held for the next write.
  boost::asio::awaitable<promotion> promote(session_id s, execution_id e, std::shared_ptr<drain_control> control,
                                            model::delivery upto, std::vector<model::payload> held,
                                            std::vector<model::payload> before);
  // `first_inputs`: promoted by the commit that started the execution (they
  // are the first turn's); empty when that commit promoted nothing.
  boost::asio::awaitable<execution_end> run_execution(session_id s, execution_id e, turn_start start,
                                                      std::vector<promoted_input> first_inputs,
                                                      std::shared_ptr<drain_control> control,
                                                      std::optional<store::session_row> first);
  // `held_until`: when the lease expires unless renewed (updated by each renewal).
  boost::asio::awaitable<void> heartbeat(session_id s, std::shared_ptr<drain_control> control,
                                         std::shared_ptr<time_ms> held_until);
  // Appends the terminal `events` (fence: the lease, released in the same
  // commit), retrying storage failures while the lease holds (see finish).
  boost::asio::awaitable<result<store::append_result>> append_terminal(session_id s, std::vector<model::payload> events,
                                                                       std::shared_ptr<drain_control> control,
                                                                       time_ms held_until);
  // Fails unsettled calls and the open step of an execution (events only).
  boost::asio::awaitable<result<std::vector<model::payload>>> settle_leftovers(session_id s, execution_id e,
                                                                               std::string why, step_state step);
  store::fence lease_fence() const;
  store::fence terminal_fence() const;  // lease_fence() that also releases the lease

  store::event_store& store_;
  runtime& runtime_;
  const tether::clock& clock_;
  node_identity node_;
  session_options options_;
};

}  // namespace tether::session
