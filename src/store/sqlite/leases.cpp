#include "store/sqlite/leases.h"

#include "store/sqlite/queries.h"

#include <optional>

namespace tether::store::sqlite {

namespace {

result<std::optional<lease>> load_lease(connection& db, const session_id& s) {
  auto q = db.prepare("SELECT owner, expires_at, attempts FROM leases WHERE session_id = ?");
  q.bind(s);
  auto row = q.step();
  if (!row) return row.error();
  if (!*row) return std::optional<lease>();
  return std::optional<lease>(lease{q.text(0), q.int64(1), q.int64(2)});
}

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

result<lease> claim_lease(connection& db, const session_id& s, const std::string& owner, time_ms now, time_ms ttl_ms) {
  TETHER_TRY(require_ttl(ttl_ms));
  TETHER_TRY(require_session(db, s));
  auto current = load_lease(db, s);
  if (!current) return current.error();
  if (*current && (*current)->owner != owner && (*current)->expires_at > now &&
      !previous_incarnation((*current)->owner, owner))
    return held(s, **current);
  lease out{owner, now + ttl_ms, *current ? (*current)->attempts : 0};
  auto q = db.prepare(
      "INSERT INTO leases(session_id, owner, expires_at, attempts) VALUES(?, ?, ?, ?) "
      "ON CONFLICT(session_id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at");
  TETHER_TRY(q.bind(s, out.owner, out.expires_at, out.attempts).run());
  return out;
}

result<lease> renew_lease(connection& db, const session_id& s, const std::string& owner, time_ms now, time_ms ttl_ms) {
  TETHER_TRY(require_ttl(ttl_ms));
  auto current = load_lease(db, s);
  if (!current) return current.error();
  if (auto why = refuse(s, *current, owner, now, false)) return *why;
  lease out{owner, now + ttl_ms, (*current)->attempts};
  auto q = db.prepare("UPDATE leases SET expires_at = ? WHERE session_id = ?");
  TETHER_TRY(q.bind(out.expires_at, s).run());
  return out;
}

result<void> release_lease(connection& db, const session_id& s, const std::string& owner, time_ms now) {
  auto current = load_lease(db, s);
  if (!current) return current.error();
  if (auto why = refuse(s, *current, owner, now, false)) return *why;
  auto q = db.prepare("UPDATE leases SET expires_at = min(expires_at, ?) WHERE session_id = ?");
  return q.bind(now, s).run();
}

result<std::size_t> expire_owned_leases(connection& db, const std::string& owner, time_ms now) {
  auto q = db.prepare("UPDATE leases SET expires_at = ? WHERE owner = ? AND expires_at > ?");
  TETHER_TRY(q.bind(now, owner, now).run());
  return static_cast<std::size_t>(db.changes());
}

result<std::int64_t> bump_attempts(connection& db, const session_id& s, const std::string& owner, time_ms now) {
  auto current = load_lease(db, s);
  if (!current) return current.error();
  if (auto why = refuse(s, *current, owner, now, true)) return *why;
  auto q = db.prepare("UPDATE leases SET attempts = attempts + 1 WHERE session_id = ?");
  TETHER_TRY(q.bind(s).run());
  return (*current)->attempts + 1;
}

result<void> quarantine(connection& db, const session_id& s, const std::string& reason) {
  auto q = db.prepare("UPDATE sessions SET quarantined = 1, quarantine_reason = ? WHERE id = ?");
  TETHER_TRY(q.bind(reason, s).run());
  if (db.changes() == 0) return make_error(store_errc::unknown_session, s.str() + " does not exist");
  return ok();
}

}  // namespace tether::store::sqlite
