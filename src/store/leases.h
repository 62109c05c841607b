// The lease rules, for every backend: claim, renew, release, expire, bump
// and quarantine, run by the writer inside a request's transaction over
// write_rows (store/rows.h). Semantics are those documented in
// store/event_store.h (Leases); a lease is "fresh" at `now` when
// expires_at > now, "expired" otherwise. `now` is always write_rows::now()
// of the request: the backend's clock, never a caller's. Owners are
// "<node>/<incarnation>"; claim treats a lease of another incarnation of the
// claimant's node like an expired one (that process is gone).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "store/rows.h"
#include "store/types.h"
#include "util/clock.h"
#include "util/result.h"

namespace tether::store {

result<lease> claim_lease(write_rows& rows, const session_id& s, const std::string& owner, time_ms ttl_ms, time_ms now);
result<lease> renew_lease(write_rows& rows, const session_id& s, const std::string& owner, time_ms ttl_ms, time_ms now);
result<void> release_lease(write_rows& rows, const session_id& s, const std::string& owner, time_ms now);
// Expires every fresh lease of `owner` now; returns how many.
result<std::size_t> expire_owned_leases(write_rows& rows, const std::string& owner, time_ms now);
result<std::int64_t> bump_attempts(write_rows& rows, const session_id& s, const std::string& owner, time_ms now);
result<void> quarantine(write_rows& rows, const session_id& s, const std::string& reason);

}  // namespace tether::store
