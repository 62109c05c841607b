// sqlite: agent state's rows and queries (store/agent_state_store.h):
// agent_chunks holds each chunk once; agent_state_refs says which saved
// state (session key, seq of its agent.state.saved) uses which chunk.
#include "store/codec.h"
#include "store/decoders.h"
#include "store/sqlite/queries.h"
#include "store/sqlite/rows.h"

namespace tether::store::sqlite {

result<bool> sqlite_rows::chunk_exists(std::string_view sha256) {
  return row_exists(*db_, "SELECT 1 FROM agent_chunks WHERE sha256 = ?", sha256);
}

result<bool> sqlite_rows::put_chunk(const state_chunk& c, time_ms at) {
  auto q = db_->prepare(
      "INSERT INTO agent_chunks(sha256, size, data, stored_at) VALUES(?, ?, ?, ?) ON CONFLICT(sha256) DO NOTHING");
  TETHER_TRY(q.bind(c.sha256, c.size, blob{c.data}, at).run());
  return db_->changes() > 0;
}

result<void> sqlite_rows::insert_state(std::int64_t session_key, std::int64_t seq) {
  return db_->prepare("INSERT OR IGNORE INTO agent_states(session, seq) VALUES(?, ?)").bind(session_key, seq).run();
}

result<void> sqlite_rows::insert_state_ref(std::int64_t session_key, std::int64_t seq, std::string_view sha256) {
  auto q = db_->prepare("INSERT OR IGNORE INTO agent_state_refs(session, seq, sha256) VALUES(?, ?, ?)");
  return q.bind(session_key, seq, sha256).run();
}

result<std::vector<state_ref>> sqlite_rows::state_refs(std::int64_t session_key) {
  auto q = db_->prepare(
      "SELECT r.seq, r.sha256, length(c.data) FROM agent_state_refs r JOIN agent_chunks c ON c.sha256 = r.sha256 "
      "WHERE r.session = ? ORDER BY r.seq DESC");
  q.bind(session_key);
  std::vector<state_ref> out;
  for (;;) {
    auto row = q.step();
    if (!row) return row.error();
    if (!*row) return out;
    out.push_back(state_ref{q.int64(0), q.text(1), q.int64(2)});
  }
}

result<std::size_t> sqlite_rows::release_states_before(std::int64_t session_key, std::int64_t seq) {
  auto q = db_->prepare("SELECT COUNT(DISTINCT seq) FROM agent_state_refs WHERE session = ? AND seq < ?");
  q.bind(session_key, seq);
  auto row = q.step();
  if (!row) return row.error();
  const auto n = static_cast<std::size_t>(q.int64(0));
  TETHER_TRY(db_->prepare("DELETE FROM agent_state_refs WHERE session = ? AND seq < ?").bind(session_key, seq).run());
  return n;
}

result<std::pair<std::size_t, std::int64_t>> sqlite_rows::delete_unreferenced_chunks(time_ms before) {
  auto q = db_->prepare(
      "SELECT COUNT(*), COALESCE(SUM(length(data)), 0) FROM agent_chunks c WHERE c.stored_at < ?1 AND NOT EXISTS "
      "(SELECT 1 FROM agent_state_refs r WHERE r.sha256 = c.sha256)");
  q.bind(before);
  auto row = q.step();
  if (!row) return row.error();
  const auto gone = std::pair<std::size_t, std::int64_t>(static_cast<std::size_t>(q.int64(0)), q.int64(1));
  TETHER_TRY(db_->prepare("DELETE FROM agent_chunks WHERE stored_at < ?1 AND NOT EXISTS "
                          "(SELECT 1 FROM agent_state_refs r WHERE r.sha256 = agent_chunks.sha256)")
                 .bind(before)
                 .run());
  return gone;
}

result<std::vector<std::string>> missing_chunks(connection& db, const std::vector<std::string>& sha256s) {
  std::vector<std::string> out;
  for (const auto& s : sha256s) {
    auto held = row_exists(db, "SELECT 1 FROM agent_chunks WHERE sha256 = ?", s);
    if (!held) return held.error();
    if (!*held) out.push_back(s);
  }
  return out;
}

result<std::vector<state_chunk>> get_chunks(connection& db, const std::vector<std::string>& sha256s) {
  std::vector<state_chunk> out;
  out.reserve(sha256s.size());
  for (const auto& s : sha256s) {
    auto q = db.prepare("SELECT size, data FROM agent_chunks WHERE sha256 = ?");
    q.bind(s);
    auto row = q.step();
    if (!row) return row.error();
    if (!*row) return make_error(store_errc::not_found, "no chunk " + s);
    out.push_back(state_chunk{s, q.int64(0), q.bytes(1)});
  }
  return out;
}

result<std::optional<model::event>> latest_agent_state(connection& db, const session_id& s, event_seq at) {
  auto q = db.prepare(
      "SELECT e.id, e.seq, e.type, e.version, e.time, e.data FROM events e WHERE e.session = "
      "(SELECT key FROM sessions WHERE id = ?1) AND e.seq = (SELECT MAX(a.seq) FROM agent_states a "
      "WHERE a.session = e.session AND (?2 = 0 OR a.seq <= ?2))");
  q.bind(s, at);
  auto row = q.step();
  if (!row) return row.error();
  if (!*row) {
    TETHER_TRY(require_session(db, s));
    return std::optional<model::event>();
  }
  const std::int64_t seq = q.int64(1);
  auto body = decode_payload(q.text(2), static_cast<int>(q.int64(3)), q.text(5),
                                     "event " + s.str() + "/" + std::to_string(seq));
  if (!body) return body.error();
  return std::optional<model::event>(
      model::event{event_id::trusted(q.text(0)), s, event_seq{seq}, q.int64(4), std::move(*body)});
}

result<bool> agent_state_held(connection& db, const session_id& s, event_seq seq) {
  auto q = db.prepare(
      "SELECT 1 FROM agent_state_refs WHERE session = (SELECT key FROM sessions WHERE id = ?) AND seq = ? LIMIT 1");
  q.bind(s, seq);
  return q.step();
}

}  // namespace tether::store::sqlite
