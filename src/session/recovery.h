// Recovery scan (internal to the session layer).
//
// Lists the sessions whose execution started but never finished and whose
// lease is expired, absent, or held by a previous incarnation of this node;
// pages through them in batches of recovery_batch, checks up to
// recovery_concurrency sessions at once. For each, at most once per scan:
//   - a log that cannot be decoded quarantines the session (reported,
//     skipped) without blocking the others;
//   - the lease is claimed (a fresh foreign lease: skipped, untouched);
//   - the session is handed to the coordinator, whose drain takes the open
//     execution over (attempt count, restart notice, budget: see runner.h).
// Then it pages, in batches of recovery_batch, through the stranded sessions
// (event_store::list_stranded: a pending input admitted with resume, or an
// answered question whose turn has not continued; no open execution, no
// pending interaction) and hands each to `wake_stranded`: an input or an
// answer acknowledged just before the process died, whose drain never
// started, runs after the restart. The caller's `wake_stranded` skips the
// sessions it is already draining (the periodic scan sees every admission
// between its commit and its execution.started). On a shared store the scan
// also sees another node's admission in that window: a stranded session
// written to after `written_before` (given only for a shared store: now
// minus one lease) is left to the node that wrote it, and counted as left;
// once it has been quiet for a lease, any node's scan wakes it.
#pragma once

#include <functional>
#include <optional>

#include <boost/asio/awaitable.hpp>

#include "session/types.h"
#include "store/event_store.h"

namespace tether::session {

// `store` must outlive the scan: the session service that awaits it is
// given a store that outlives the service (session/service.h), and waits
// for its scans before it stops.
boost::asio::awaitable<result<recovery_report>> recovery_scan(store::event_store* store, node_identity node,
                                                              session_options options,
                                                              std::function<void(session_id)> wake,
                                                              std::function<void(session_id)> wake_stranded,
                                                              std::optional<time_ms> written_before = std::nullopt);

}  // namespace tether::session
