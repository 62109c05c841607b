#include "store/leases.h"

#include <optional>

namespace tether::store {

namespace {

result<void> require_ttl(time_ms ttl_ms) {
  if (ttl_ms <= 0) return make_error(store_errc::rejected, "a lease needs a positive ttl");
  return ok();
}

// Owners are "<node>/<incarnation>". A lease held by another incarnation of
// the claimant's node belongs to a process that is gone (a node runs one
// incarnation at a time), so claim may take it over before it expires.
bool previous_incarnation(const std::string& holder, const std::string& claimant) {
  const auto slash = claimant.rfind('/');
  if (slash == std::string::npos || holder == claimant) return false;
  const std::string_view node(claimant.data(), slash + 1);  // "<node>/"
  return holder.starts_with(node) && holder.find('/', node.size()) == std::string::npos;
}

tether::error held(const session_id& s, const lease& l) {
  return {store_errc::lease_held,
          "the lease of " + s.str() + " is held by " + l.owner + " until " + std::to_string(l.expires_at)};
}

tether::error lost(const session_id& s, const std::string& owner) {
  return {store_errc::lease_lost, owner + " no longer holds the lease of " + s.str()};
}

// Why `owner` may not act on lease `l` at `now`: held by a fresh foreign
// owner, or lost (absent, foreign and expired, or — when `must_be_fresh` —
// ours but expired).
std::optional<tether::error> refuse(const session_id& s, const std::optional<lease>& l, const std::string& owner,
                                    time_ms now, bool must_be_fresh) {
  if (!l) return lost(s, owner);
  if (l->owner != owner) {
    if (l->expires_at > now) return held(s, *l);
    return lost(s, owner);
  }
  if (must_be_fresh && l->expires_at <= now) return lost(s, owner);
  return std::nullopt;
}

}  // namespace

result<lease> claim_lease(write_rows& rows, const session_id& s, const std::string& owner, time_ms ttl_ms,
                          time_ms now) {
  TETHER_TRY(require_ttl(ttl_ms));
  auto known = rows.session_exists(s);
  if (!known) return known.error();
  if (!*known) return make_error(store_errc::unknown_session, s.str() + " does not exist");
  auto current = rows.load_lease(s);
  if (!current) return current.error();
  if (*current && (*current)->owner != owner && (*current)->expires_at > now &&
      !previous_incarnation((*current)->owner, owner))
    return held(s, **current);
  lease out{owner, now + ttl_ms, *current ? (*current)->attempts : 0};
  TETHER_TRY(rows.put_lease(s, out));
  return out;
}

result<lease> renew_lease(write_rows& rows, const session_id& s, const std::string& owner, time_ms ttl_ms,
                          time_ms now) {
  TETHER_TRY(require_ttl(ttl_ms));
  auto current = rows.load_lease(s);
  if (!current) return current.error();
  if (auto why = refuse(s, *current, owner, now, false)) return *why;
  lease out{owner, now + ttl_ms, (*current)->attempts};
  TETHER_TRY(rows.set_lease_expiry(s, out.expires_at));
  return out;
}

result<void> release_lease(write_rows& rows, const session_id& s, const std::string& owner, time_ms now) {
  auto current = rows.load_lease(s);
  if (!current) return current.error();
  if (auto why = refuse(s, *current, owner, now, false)) return *why;
  if ((*current)->expires_at <= now) return ok();  // already expired: released as it is
  return rows.set_lease_expiry(s, now);
}

result<std::size_t> expire_owned_leases(write_rows& rows, const std::string& owner, time_ms now) {
  return rows.expire_leases_of(owner, now);
}

result<std::int64_t> bump_attempts(write_rows& rows, const session_id& s, const std::string& owner, time_ms now) {
  auto current = rows.load_lease(s);
  if (!current) return current.error();
  if (auto why = refuse(s, *current, owner, now, true)) return *why;
  const std::int64_t attempts = (*current)->attempts + 1;
  TETHER_TRY(rows.set_lease_attempts(s, attempts));
  return attempts;
}

result<void> quarantine(write_rows& rows, const session_id& s, const std::string& reason) {
  auto found = rows.quarantine(s, reason);
  if (!found) return found.error();
  if (!*found) return make_error(store_errc::unknown_session, s.str() + " does not exist");
  return ok();
}

}  // namespace tether::store
