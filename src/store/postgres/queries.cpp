#include "store/postgres/queries.h"

#include <array>

#include "store/codec.h"
#include "store/decoders.h"

namespace tether::store::postgres {

namespace {

using namespace decode;

// The session row keeps its last seq and the time of its last event (the
// append updates both under the row's lock), so no read looks at the log.
#define TETHER_SESSION_SELECT                                                                                 \
  "SELECT s.id, s.last_seq, s.generation, s.title, s.workspace, s.profile, s.open_execution, "                \
  "s.continuation_pending, s.runtime, s.bound_runtime, s.quarantined, s.quarantine_reason, s.created_at, "    \
  "COALESCE(s.last_time, s.created_at) AS updated_at, "                                                       \
  "l.owner, l.expires_at, l.attempts, s.metadata, s.bound_session_id, s.bound_generation, s.bound_seen_seq, " \
  "s.bound_state, s.forked_from, s.forked_at FROM sessions s LEFT JOIN leases l ON l.session_id = s.id "

// A session's usage as five columns: tokens summed (input, output, cached),
// the priced cost summed, how many runs with usage were not priced.
// `SESSION` is the session's id in SQL: a parameter or a column. A NULL usage
// adds nothing, as in SQLite; SUM(bigint) is numeric, cast back. OFFSET 0 keeps
// the inner query unflattened, so each usage is parsed once, not per column.
// clang-format off
#define TETHER_TOKENS(FIELD) "COALESCE(SUM((x.u ->> '" FIELD "')::bigint), 0)::bigint"
#define TETHER_USAGE_OF(SESSION)                                                                         \
  "SELECT " TETHER_TOKENS("input_tokens") ", " TETHER_TOKENS("output_tokens") ", "                      \
  TETHER_TOKENS("cached_input_tokens") ", SUM((x.u ->> 'cost_usd')::double precision), "                \
  "COUNT(*) FILTER (WHERE x.u IS NOT NULL AND (x.u ->> 'cost_usd') IS NULL) "                           \
  "FROM (SELECT e.usage::jsonb AS u FROM executions e WHERE e.session_id = " SESSION " OFFSET 0) x"
// clang-format on

model::usage usage_from(const rows& q, int col) {
  model::usage u{q.int64(col), q.int64(col + 1), q.int64(col + 2), std::nullopt, ""};
  if (!q.is_null(col + 3)) u.cost_usd = q.real(col + 3);
  if (q.int64(col + 4) > 0) u.cost_status = u.cost_usd ? "partial" : "unpriced";
  return u;
}

// The usage sums cast every stored usage: a data error (class 22: not JSON,
// a number out of range) is a stored row that does not read back.
tether::error usage_failure(const connection& db, tether::error e) {
  if (db.last_sqlstate().starts_with("22")) return corrupt("a stored execution usage does not read back: " + e.message);
  return e;
}

// Ids are ASCII below 0x7f (util/ids.h): a prefix with another byte names none.
bool id_like(const std::string& prefix) {
  return std::all_of(prefix.begin(), prefix.end(), [](char c) { return c > 0 && c < 0x7f; });
}

}  // namespace

result<void> require_session(connection& db, const session_id& s) {
  auto q = db.query("SELECT 1 FROM sessions WHERE id = $1::text", s);
  if (!q) return q.error();
  if (!q->step()) return make_error(store_errc::unknown_session, s.str() + " does not exist");
  return ok();
}

result<event_page> read_events(connection& db, const session_id& s, event_seq after, std::size_t limit) {
  const std::int64_t n = sql_limit(limit);
  auto q = db.query(
      "SELECT id, seq, type, version, time, data FROM events "
      "WHERE session = (SELECT key FROM sessions WHERE id = $1::text) AND seq > $2::bigint "
      "ORDER BY seq LIMIT $3::bigint",
      s, after, n + 1);
  if (!q) return q.error();
  event_page page;
  page.more = q->count() > n;
  while (static_cast<std::int64_t>(page.events.size()) < n && q->step()) {
    const std::int64_t seq = q->int64(1);
    auto body = decode_payload(q->view(2), static_cast<int>(q->int64(3)), q->view(5),
                               "event " + s.str() + "/" + std::to_string(seq));
    if (!body) return body.error();
    page.events.push_back(
        model::event{event_id::trusted(q->text(0)), s, event_seq{seq}, q->int64(4), std::move(*body)});
  }
  if (page.events.empty() && !page.more) TETHER_TRY(require_session(db, s));
  return page;
}

result<session_row> get_session(connection& db, const session_id& s) {
  auto r = single<session_row>(db.query(TETHER_SESSION_SELECT "WHERE s.id = $1::text", s), session_from<rows>, s.str());
  if (!r && r.error() == store_errc::not_found)
    return make_error(store_errc::unknown_session, s.str() + " does not exist");
  return r;
}

result<std::vector<session_row>> list_sessions(connection& db, std::size_t limit) {
  return collect<session_row>(
      db.query(TETHER_SESSION_SELECT "ORDER BY updated_at DESC, s.id LIMIT $1::bigint", sql_limit(limit)),
      session_from<rows>);
}

result<model::usage> session_usage(connection& db, const session_id& s) {
  auto q = db.query(TETHER_USAGE_OF("$1::text"), s);
  if (!q) return usage_failure(db, q.error());
  return q->step() ? usage_from(*q, 0) : model::usage{};
}

result<std::vector<session_overview>> list_overviews(connection& db, std::size_t limit, const std::string& id_prefix) {
  if (!id_like(id_prefix)) return std::vector<session_overview>();
  // The page is chosen first, then only its sessions are counted (partial
  // indexes of pending inputs and interactions) and their usage summed. The
  // range [prefix, prefix + 0x7f) holds every id with the prefix ("C": bytewise).
  auto q = db.query(
      "SELECT o.*, "
      "(SELECT COUNT(*) FROM inputs i WHERE i.session_id = o.id AND i.status = 'pending'), "
      "(SELECT COUNT(*) FROM interactions n WHERE n.session_id = o.id AND n.status = 'pending'), u.* "
      "FROM (" TETHER_SESSION_SELECT
      "WHERE s.id >= $1::text AND s.id < $2::text ORDER BY updated_at DESC, s.id LIMIT $3::bigint) o "
      "CROSS JOIN LATERAL (" TETHER_USAGE_OF("o.id") ") u "
      "ORDER BY o.updated_at DESC, o.id",
      id_prefix, id_prefix + '\x7f', sql_limit(limit));
  if (!q) return usage_failure(db, q.error());
  return collect<session_overview>(std::move(q), [](const rows& row) -> result<session_overview> {
    auto session = session_from(row);
    if (!session) return session.error();
    return session_overview{std::move(*session), static_cast<std::size_t>(row.int64(session_columns)),
                            static_cast<std::size_t>(row.int64(session_columns + 1)),
                            usage_from(row, session_columns + 2)};
  });
}

result<input_row> get_input(connection& db, const input_id& id) {
  return single<input_row>(db.query(TETHER_INPUT_SELECT "WHERE id = $1::text", id), input_from<rows>, id.str());
}

result<std::vector<input_row>> pending_inputs(connection& db, const session_id& s) {
  TETHER_TRY(require_session(db, s));
  return collect<input_row>(
      db.query(TETHER_INPUT_SELECT "WHERE session_id = $1::text AND status = 'pending' ORDER BY admitted_seq", s),
      input_from<rows>);
}

result<std::vector<input_row>> list_inputs(connection& db, const session_id& s) {
  TETHER_TRY(require_session(db, s));
  return collect<input_row>(db.query(TETHER_INPUT_SELECT "WHERE session_id = $1::text ORDER BY admitted_seq", s),
                            input_from<rows>);
}

// Message rows, with the kind of call looked up from the message's tool call.

result<std::vector<message_row>> context(connection& db, const session_id& s) {
  auto head = db.query("SELECT context_from_seq, generation, context_summary FROM sessions WHERE id = $1::text", s);
  if (!head) return head.error();
  if (!head->step()) return make_error(store_errc::unknown_session, s.str() + " does not exist");
  const std::int64_t from = head->int64(0);
  std::vector<message_row> out;
  if (!head->is_null(2)) {
    // A compaction's summary stands for everything before `from`.
    message_row m;
    m.seq = event_seq{from};
    m.generation = head->int64(1);
    m.role = message_role::summary;
    m.id = "summary";
    m.text = head->text(2);
    out.push_back(std::move(m));
  }
  auto messages = collect<message_row>(
      db.query(TETHER_MESSAGE_SELECT "WHERE m.session_id = $1::text AND m.seq >= $2::bigint ORDER BY m.seq", s, from),
      [&s](const rows& row) { return message_from(row, s); });
  if (!messages) return messages.error();
  for (auto& r : *messages) out.push_back(std::move(r));
  return out;
}

result<std::vector<message_row>> transcript(connection& db, const session_id& s) {
  TETHER_TRY(require_session(db, s));
  // Every generation, read through the messages key (session_id, seq).
  return collect<message_row>(db.query(TETHER_MESSAGE_SELECT "WHERE m.session_id = $1::text ORDER BY m.seq", s),
                              [&s](const rows& row) { return message_from(row, s); });
}

result<execution_row> get_execution(connection& db, const execution_id& id) {
  return single<execution_row>(db.query(TETHER_EXECUTION_SELECT "WHERE id = $1::text", id), execution_from<rows>,
                               id.str());
}

result<std::vector<execution_row>> list_executions(connection& db, const session_id& s) {
  TETHER_TRY(require_session(db, s));
  return collect<execution_row>(db.query(TETHER_EXECUTION_SELECT "WHERE session_id = $1::text ORDER BY started_seq", s),
                                execution_from<rows>);
}

result<std::vector<tool_call_row>> unsettled_calls(connection& db, const session_id& s) {
  TETHER_TRY(require_session(db, s));
  return collect<tool_call_row>(
      db.query("SELECT id, session_id, execution_id, name, input, kind, status, result FROM tool_calls "
               "WHERE session_id = $1::text AND status = 'running' ORDER BY called_seq",
               s),
      call_from<rows>);
}

result<interaction_row> get_interaction(connection& db, const interaction_id& id) {
  return single<interaction_row>(db.query(TETHER_INTERACTION_SELECT "WHERE id = $1::text", id), interaction_from<rows>,
                                 id.str());
}

result<std::vector<interaction_row>> pending_interactions(connection& db, const session_id& s) {
  TETHER_TRY(require_session(db, s));
  return collect<interaction_row>(
      db.query(TETHER_INTERACTION_SELECT "WHERE session_id = $1::text AND status = 'pending' ORDER BY requested_seq",
               s),
      interaction_from<rows>);
}

result<std::vector<interaction_row>> list_interactions(connection& db, const session_id& s) {
  TETHER_TRY(require_session(db, s));
  return collect<interaction_row>(
      db.query(TETHER_INTERACTION_SELECT "WHERE session_id = $1::text ORDER BY requested_seq", s),
      interaction_from<rows>);
}

result<std::vector<abandoned_session>> list_abandoned(connection& db, time_ms now, const std::string& node,
                                                      const std::string& current_owner,
                                                      const std::optional<session_id>& after, std::size_t limit) {
  // A previous incarnation of `node` owns leases named "<node>/<anything>"; "" is before every id.
  auto q = db.query(
      "SELECT s.id, s.open_execution, l.owner, l.expires_at, l.attempts "
      "FROM sessions s LEFT JOIN leases l ON l.session_id = s.id "
      "WHERE s.open_execution IS NOT NULL AND s.quarantined = 0 AND s.id > $1::text "
      "AND (l.session_id IS NULL OR l.expires_at <= $2::bigint "
      "     OR (substr(l.owner, 1, length($3::text) + 1) = $3::text || '/' "
      "         AND strpos(substr(l.owner, length($3::text) + 2), '/') = 0 AND l.owner <> $4::text)) "
      "ORDER BY s.id LIMIT $5::bigint",
      after ? after->str() : std::string(), now, node, current_owner, sql_limit(limit));
  return collect<abandoned_session>(std::move(q), abandoned_from<rows>);
}

// Driven by two partial indexes that hold only sessions about to run (or
// stranded): pending inputs that wait for a run (inputs_pending_resume), and
// sessions whose answered question waits for its turn to continue
// (sessions_continuation_pending); each branch repeats its index's predicate.
const char* const list_stranded_sql =
    "SELECT session_id FROM ("
    "SELECT i.session_id AS session_id FROM inputs i "
    "JOIN sessions s ON s.id = i.session_id "
    "WHERE i.status = 'pending' AND i.resume = 1 AND i.session_id > $1::text "
    "AND s.open_execution IS NULL AND s.quarantined = 0 "
    "AND NOT EXISTS (SELECT 1 FROM interactions x WHERE x.session_id = i.session_id AND x.status = 'pending') "
    "UNION "
    "SELECT s.id FROM sessions s "
    "WHERE s.continuation_pending = 1 AND s.id > $1::text AND s.open_execution IS NULL AND s.quarantined = 0 "
    "AND NOT EXISTS (SELECT 1 FROM interactions x WHERE x.session_id = s.id AND x.status = 'pending')"
    ") AS stranded ORDER BY session_id LIMIT $2::bigint";

result<std::vector<session_id>> list_stranded(connection& db, const std::optional<session_id>& after,
                                              std::size_t limit) {
  return collect<session_id>(db.query(list_stranded_sql, after ? after->str() : std::string(), sql_limit(limit)),
                             [](const rows& row) -> result<session_id> { return session_id::trusted(row.text(0)); });
}

}  // namespace tether::store::postgres
