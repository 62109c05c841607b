// lease_store: who runs a session, and what recovery looks for. Writes are
// group-committed like appends; times are the store's (event_store.h, Time).
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
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/task.h"
#include "store/types.h"
#include "util/result.h"

namespace tether::store {

class lease_store {
 public:
  virtual ~lease_store() = default;

  // A granted lease expires ttl_ms after the store's now.
  virtual task<result<lease>> claim_lease(session_id s, std::string owner, time_ms ttl_ms) = 0;
  virtual task<result<lease>> renew_lease(session_id s, std::string owner, time_ms ttl_ms) = 0;
  virtual task<result<void>> release_lease(session_id s, std::string owner) = 0;
  virtual task<result<std::size_t>> expire_owned_leases(std::string owner) = 0;
  // Adds one to the lease's attempt count; the caller must hold a fresh lease.
  virtual task<result<std::int64_t>> bump_attempts(session_id s, std::string owner) = 0;
  // Marks a session undecodable: recovery skips it until an operator acts.
  virtual task<result<void>> quarantine(session_id s, std::string reason) = 0;

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
  // sessions with a continuation pending), not by reading every session. A
  // session that is about to start (woken, execution.started not yet
  // committed) is listed too.
  virtual task<result<std::vector<session_id>>> list_stranded(std::optional<session_id> after, std::size_t limit) = 0;
};

}  // namespace tether::store
