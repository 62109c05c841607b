// Lease operations and quarantine, run by the writer inside a request's
// savepoint. Semantics are those documented in store/event_store.h; a lease
// is "fresh" at `now` when expires_at > now, "expired" otherwise. Owners are
// "<node>/<incarnation>"; claim treats a lease of another incarnation of the
// claimant's node like an expired one (that process is gone).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "store/sqlite/db.h"
#include "store/types.h"
#include "util/clock.h"
#include "util/result.h"

namespace tether::store::sqlite {

result<lease> claim_lease(connection& db, const session_id& s, const std::string& owner, time_ms now, time_ms ttl_ms);
result<lease> renew_lease(connection& db, const session_id& s, const std::string& owner, time_ms now, time_ms ttl_ms);
result<void> release_lease(connection& db, const session_id& s, const std::string& owner, time_ms now);
// Sets expires_at = now on every fresh lease of `owner`; returns how many.
result<std::size_t> expire_owned_leases(connection& db, const std::string& owner, time_ms now);
result<std::int64_t> bump_attempts(connection& db, const session_id& s, const std::string& owner, time_ms now);
result<void> quarantine(connection& db, const session_id& s, const std::string& reason);

}  // namespace tether::store::sqlite
