// pg: agent state's rows and queries (store/agent_state_store.h), as
// SQLite's (store/sqlite/agent_state.cpp). Parameters go as text, so a
// chunk's bytes travel as hex (decode(…, 'hex') and encode(…, 'hex')).
#include "store/codec.h"
#include "store/postgres/queries.h"
#include "store/postgres/rows.h"

namespace tether::store::postgres {

namespace {

std::string to_hex(std::string_view bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const unsigned char c : bytes) {
    out.push_back(digits[c >> 4U]);
    out.push_back(digits[c & 15U]);
  }
  return out;
}

int nibble(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

result<std::string> from_hex(std::string_view hex, const std::string& what) {
  if (hex.size() % 2 != 0) return make_error(store_errc::corrupt, what + " is not hex");
  std::string out;
  out.reserve(hex.size() / 2);
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    const int hi = nibble(hex[i]);
    const int lo = nibble(hex[i + 1]);
    if (hi < 0 || lo < 0) return make_error(store_errc::corrupt, what + " is not hex");
    out.push_back(static_cast<char>((hi << 4) | lo));
  }
  return out;
}

}  // namespace

result<bool> pg_rows::chunk_exists(std::string_view sha256) {
  return row_exists(*db_, "SELECT 1 FROM agent_chunks WHERE sha256 = $1::text", sha256);
}

result<bool> pg_rows::put_chunk(const state_chunk& c, time_ms at) {
  auto r = db_->query(
      "INSERT INTO agent_chunks(sha256, size, data, stored_at) VALUES($1::text, $2::bigint, decode($3::text, 'hex'), "
      "$4::bigint) ON CONFLICT(sha256) DO NOTHING",
      c.sha256, c.size, to_hex(c.data), at);
  if (!r) return r.error();
  return r->affected() > 0;
}

result<void> pg_rows::insert_state(std::int64_t session_key, std::int64_t seq) {
  return db_->run("INSERT INTO agent_states(session, seq) VALUES($1::bigint, $2::bigint) ON CONFLICT DO NOTHING",
                  session_key, seq);
}

result<void> pg_rows::insert_state_ref(std::int64_t session_key, std::int64_t seq, std::string_view sha256) {
  return db_->run(
      "INSERT INTO agent_state_refs(session, seq, sha256) VALUES($1::bigint, $2::bigint, $3::text) "
      "ON CONFLICT DO NOTHING",
      session_key, seq, sha256);
}

result<std::vector<state_ref>> pg_rows::state_refs(std::int64_t session_key) {
  auto r = db_->query(
      "SELECT r.seq, r.sha256, octet_length(c.data) FROM agent_state_refs r JOIN agent_chunks c "
      "ON c.sha256 = r.sha256 WHERE r.session = $1::bigint ORDER BY r.seq DESC",
      session_key);
  if (!r) return r.error();
  std::vector<state_ref> out;
  while (r->step()) out.push_back(state_ref{r->int64(0), r->text(1), r->int64(2)});
  return out;
}

result<std::size_t> pg_rows::release_states_before(std::int64_t session_key, std::int64_t seq) {
  auto r = db_->query(
      "WITH gone AS (DELETE FROM agent_state_refs WHERE session = $1::bigint AND seq < $2::bigint RETURNING seq) "
      "SELECT COUNT(DISTINCT seq) FROM gone",
      session_key, seq);
  if (!r) return r.error();
  r->step();
  return static_cast<std::size_t>(r->int64(0));
}

result<std::pair<std::size_t, std::int64_t>> pg_rows::delete_unreferenced_chunks(time_ms before) {
  auto r = db_->query(
      "WITH gone AS (DELETE FROM agent_chunks c WHERE c.stored_at < $1::bigint AND NOT EXISTS "
      "(SELECT 1 FROM agent_state_refs r WHERE r.sha256 = c.sha256) RETURNING octet_length(c.data) AS n) "
      "SELECT COUNT(*), COALESCE(SUM(n), 0) FROM gone",
      before);
  if (!r) return r.error();
  r->step();
  return std::pair<std::size_t, std::int64_t>(static_cast<std::size_t>(r->int64(0)), r->int64(1));
}

result<std::vector<std::string>> missing_chunks(connection& db, const std::vector<std::string>& sha256s) {
  std::vector<std::string> out;
  for (const auto& s : sha256s) {
    auto held = row_exists(db, "SELECT 1 FROM agent_chunks WHERE sha256 = $1::text", s);
    if (!held) return held.error();
    if (!*held) out.push_back(s);
  }
  return out;
}

result<std::vector<state_chunk>> get_chunks(connection& db, const std::vector<std::string>& sha256s) {
  std::vector<state_chunk> out;
  out.reserve(sha256s.size());
  for (const auto& s : sha256s) {
    auto r = db.query("SELECT size, encode(data, 'hex') FROM agent_chunks WHERE sha256 = $1::text", s);
    if (!r) return r.error();
    if (!r->step()) return make_error(store_errc::not_found, "no chunk " + s);
    auto data = from_hex(r->view(1), "chunk " + s);
    if (!data) return data.error();
    out.push_back(state_chunk{s, r->int64(0), std::move(*data)});
  }
  return out;
}

result<std::optional<model::event>> latest_agent_state(connection& db, const session_id& s, event_seq at) {
  auto r = db.query(
      "SELECT e.id, e.seq, e.type, e.version, e.time, e.data FROM events e WHERE e.session = "
      "(SELECT key FROM sessions WHERE id = $1::text) AND e.seq = (SELECT MAX(a.seq) FROM agent_states a "
      "WHERE a.session = e.session AND ($2::bigint = 0 OR a.seq <= $2::bigint))",
      s, at);
  if (!r) return r.error();
  if (!r->step()) {
    TETHER_TRY(require_session(db, s));
    return std::optional<model::event>();
  }
  const std::int64_t seq = r->int64(1);
  auto body = decode_payload(r->view(2), static_cast<int>(r->int64(3)), r->view(5),
                             "event " + s.str() + "/" + std::to_string(seq));
  if (!body) return body.error();
  return std::optional<model::event>(
      model::event{event_id::trusted(r->text(0)), s, event_seq{seq}, r->int64(4), std::move(*body)});
}

result<bool> agent_state_held(connection& db, const session_id& s, event_seq seq) {
  auto r = db.query(
      "SELECT 1 FROM agent_state_refs WHERE session = (SELECT key FROM sessions WHERE id = $1::text) "
      "AND seq = $2::bigint LIMIT 1",
      s, seq);
  if (!r) return r.error();
  return r->step();
}

}  // namespace tether::store::postgres
