#include "store/sqlite/queries.h"

#include <algorithm>
#include <array>

#include "store/codec.h"
#include "store/decoders.h"

namespace tether::store::sqlite {

namespace {

using namespace decode;

#define TETHER_SESSION_COLUMNS                                                                                \
  "SELECT s.id, COALESCE((SELECT seq FROM events e WHERE e.session = s.key ORDER BY seq DESC LIMIT 1), 0), "  \
  "s.generation, s.title, s.workspace, s.profile, s.open_execution, "                                         \
  "s.continuation_pending, s.runtime, s.bound_runtime, s.quarantined, s.quarantine_reason, s.created_at, "    \
  "COALESCE((SELECT time FROM events e WHERE e.session = s.key ORDER BY seq DESC LIMIT 1), s.created_at), "   \
  "l.owner, l.expires_at, l.attempts, s.metadata, s.bound_session_id, s.bound_generation, s.bound_seen_seq, " \
  "s.bound_state, s.forked_from, s.forked_at"
#define TETHER_SESSION_FROM " FROM sessions s LEFT JOIN leases l ON l.session_id = s.id "
#define TETHER_SESSION_SELECT TETHER_SESSION_COLUMNS TETHER_SESSION_FROM

}  // namespace

result<void> require_session(connection& db, const session_id& s) {
  auto q = db.prepare("SELECT 1 FROM sessions WHERE id = ?");
  q.bind(s);
  auto row = q.step();
  if (!row) return row.error();
  if (!*row) return make_error(store_errc::unknown_session, s.str() + " does not exist");
  return ok();
}

result<event_page> read_events(connection& db, const session_id& s, event_seq after, std::size_t limit) {
  const std::int64_t n = sql_limit(limit);
  auto q = db.prepare(
      "SELECT id, seq, type, version, time, data FROM events "
      "WHERE session = (SELECT key FROM sessions WHERE id = ?) AND seq > ? ORDER BY seq LIMIT ?");
  q.bind(s, after, n + 1);
  event_page page;
  for (;;) {
    auto row = q.step();
    if (!row) return row.error();
    if (!*row) break;
    if (static_cast<std::int64_t>(page.events.size()) == n) {
      page.more = true;
      break;
    }
    const std::int64_t seq = q.int64(1);
    auto body = decode_payload(q.text(2), static_cast<int>(q.int64(3)), q.text(5),
                               "event " + s.str() + "/" + std::to_string(seq));
    if (!body) return body.error();
    page.events.push_back(model::event{event_id::trusted(q.text(0)), s, event_seq{seq}, q.int64(4), std::move(*body)});
  }
  if (page.events.empty() && !page.more) TETHER_TRY(require_session(db, s));
  return page;
}

result<session_row> get_session(connection& db, const session_id& s) {
  auto q = db.prepare(TETHER_SESSION_SELECT "WHERE s.id = ?");
  q.bind(s);
  auto r = single<session_row>(q, session_from<query>, s.str());
  if (!r && r.error() == store_errc::not_found)
    return make_error(store_errc::unknown_session, s.str() + " does not exist");
  return r;
}

result<std::vector<session_row>> list_sessions(connection& db, std::size_t limit) {
  // Sorting by a computed updated_at costs one index seek per session: fine
  // for a listing, and it keeps appends from rewriting the sessions row.
  auto q = db.prepare(TETHER_SESSION_SELECT "ORDER BY 14 DESC, s.id LIMIT ?");
  q.bind(sql_limit(limit));
  return collect<session_row>(q, session_from<query>);
}

namespace {
// A session's usage as five columns: tokens summed (input, output, cached),
// the priced cost summed, how many runs with usage were not priced.
// `SESSION` is the session's id in SQL: a parameter or a column.
#define TETHER_USAGE_SUM(FIELD, SESSION) \
  "(SELECT COALESCE(SUM(json_extract(x.usage, '$." FIELD "')), 0) FROM executions x WHERE x.session_id = " SESSION ")"
#define TETHER_USAGE_SUMS(SESSION) \
  TETHER_USAGE_SUM("input_tokens", SESSION) ", " TETHER_USAGE_SUM("output_tokens", SESSION) ", "                  \
  TETHER_USAGE_SUM("cached_input_tokens", SESSION) ", "                                                             \
  "(SELECT SUM(json_extract(x.usage, '$.cost_usd')) FROM executions x WHERE x.session_id = " SESSION "), "         \
  "(SELECT COUNT(*) FROM executions x WHERE x.session_id = " SESSION " AND x.usage IS NOT NULL "                    \
  "  AND json_extract(x.usage, '$.cost_usd') IS NULL)"

model::usage usage_from(const query& q, int col) {
  model::usage u{q.int64(col), q.int64(col + 1), q.int64(col + 2), std::nullopt, ""};
  if (!q.is_null(col + 3)) u.cost_usd = q.real(col + 3);
  if (q.int64(col + 4) > 0) u.cost_status = u.cost_usd ? "partial" : "unpriced";
  return u;
}
}  // namespace

result<model::usage> session_usage(connection& db, const session_id& s) {
  auto q = db.prepare("SELECT " TETHER_USAGE_SUMS("?1"));
  q.bind(s);
  auto row = q.step();
  if (!row) return row.error();
  return *row ? usage_from(q, 0) : model::usage{};
}

result<std::vector<session_overview>> list_overviews(connection& db, std::size_t limit, const std::string& id_prefix) {
  // The counts come from the partial indexes of pending inputs and pending
  // interactions: one seek per session each, in the same statement.
  auto q = db.prepare(
      TETHER_SESSION_COLUMNS
      ", (SELECT COUNT(*) FROM inputs i WHERE i.session_id = s.id AND i.status = 'pending'), "
      "(SELECT COUNT(*) FROM interactions x WHERE x.session_id = s.id AND x.status = 'pending'), " TETHER_USAGE_SUMS(
          "s.id") TETHER_SESSION_FROM "WHERE s.id >= ? AND s.id < ? ORDER BY 14 DESC, s.id LIMIT ?");
  // Ids are ASCII below 0x7f: the range [prefix, prefix + 0x7f) is every id
  // that starts with the prefix, read from the primary key's index.
  q.bind(id_prefix, id_prefix + '\x7f', sql_limit(limit));
  return collect<session_overview>(q, [](const query& row) -> result<session_overview> {
    auto session = session_from(row);
    if (!session) return session.error();
    return session_overview{std::move(*session), static_cast<std::size_t>(row.int64(session_columns)),
                            static_cast<std::size_t>(row.int64(session_columns + 1)),
                            usage_from(row, session_columns + 2)};
  });
}

result<input_row> get_input(connection& db, const input_id& id) {
  auto q = db.prepare(TETHER_INPUT_SELECT "WHERE id = ?");
  q.bind(id);
  return single<input_row>(q, input_from<query>, id.str());
}

result<std::vector<input_row>> pending_inputs(connection& db, const session_id& s) {
  TETHER_TRY(require_session(db, s));
  auto q = db.prepare(TETHER_INPUT_SELECT "WHERE session_id = ? AND status = 'pending' ORDER BY admitted_seq");
  q.bind(s);
  return collect<input_row>(q, input_from<query>);
}

result<std::vector<input_row>> list_inputs(connection& db, const session_id& s) {
  TETHER_TRY(require_session(db, s));
  auto q = db.prepare(TETHER_INPUT_SELECT "WHERE session_id = ? ORDER BY admitted_seq");
  q.bind(s);
  return collect<input_row>(q, input_from<query>);
}

// Message rows, with the kind of call looked up from the message's tool call.

result<std::vector<message_row>> context(connection& db, const session_id& s) {
  std::int64_t from = 0;
  std::int64_t generation = 0;
  std::optional<std::string> summary;
  {
    auto q = db.prepare("SELECT context_from_seq, generation, context_summary FROM sessions WHERE id = ?");
    q.bind(s);
    auto row = q.step();
    if (!row) return row.error();
    if (!*row) return make_error(store_errc::unknown_session, s.str() + " does not exist");
    from = q.int64(0);
    generation = q.int64(1);
    summary = q.optional_text(2);
  }
  std::vector<message_row> out;
  if (summary) {
    // A compaction's summary stands for everything before `from`.
    message_row m;
    m.seq = event_seq{from};
    m.generation = generation;
    m.role = message_role::summary;
    m.id = "summary";
    m.text = std::move(*summary);
    out.push_back(std::move(m));
  }
  auto q = db.prepare(TETHER_MESSAGE_SELECT "WHERE m.session_id = ? AND m.seq >= ? ORDER BY m.seq");
  q.bind(s, from);
  auto rows = collect<message_row>(q, [&s](const query& row) { return message_from(row, s); });
  if (!rows) return rows.error();
  for (auto& r : *rows) out.push_back(std::move(r));
  return out;
}

result<std::vector<message_row>> transcript(connection& db, const session_id& s) {
  TETHER_TRY(require_session(db, s));
  // Every generation, read through the messages key (session_id, seq).
  auto q = db.prepare(TETHER_MESSAGE_SELECT "WHERE m.session_id = ? ORDER BY m.seq");
  q.bind(s);
  return collect<message_row>(q, [&s](const query& row) { return message_from(row, s); });
}

result<execution_row> get_execution(connection& db, const execution_id& id) {
  auto q = db.prepare(TETHER_EXECUTION_SELECT "WHERE id = ?");
  q.bind(id);
  return single<execution_row>(q, execution_from<query>, id.str());
}

result<std::vector<execution_row>> list_executions(connection& db, const session_id& s) {
  TETHER_TRY(require_session(db, s));
  auto q = db.prepare(TETHER_EXECUTION_SELECT "WHERE session_id = ? ORDER BY started_seq");
  q.bind(s);
  return collect<execution_row>(q, execution_from<query>);
}

result<std::vector<tool_call_row>> unsettled_calls(connection& db, const session_id& s) {
  TETHER_TRY(require_session(db, s));
  auto q = db.prepare(
      "SELECT id, session_id, execution_id, name, input, kind, status, result FROM tool_calls "
      "WHERE session_id = ? AND status = 'running' ORDER BY called_seq");
  q.bind(s);
  return collect<tool_call_row>(q, call_from<query>);
}

result<interaction_row> get_interaction(connection& db, const interaction_id& id) {
  auto q = db.prepare(TETHER_INTERACTION_SELECT "WHERE id = ?");
  q.bind(id);
  return single<interaction_row>(q, interaction_from<query>, id.str());
}

result<std::vector<interaction_row>> pending_interactions(connection& db, const session_id& s) {
  TETHER_TRY(require_session(db, s));
  auto q = db.prepare(TETHER_INTERACTION_SELECT "WHERE session_id = ? AND status = 'pending' ORDER BY requested_seq");
  q.bind(s);
  return collect<interaction_row>(q, interaction_from<query>);
}

result<std::vector<interaction_row>> list_interactions(connection& db, const session_id& s) {
  TETHER_TRY(require_session(db, s));
  auto q = db.prepare(TETHER_INTERACTION_SELECT "WHERE session_id = ? ORDER BY requested_seq");
  q.bind(s);
  return collect<interaction_row>(q, interaction_from<query>);
}

result<std::vector<abandoned_session>> list_abandoned(connection& db, time_ms now, const std::string& node,
                                                      const std::string& current_owner,
                                                      const std::optional<session_id>& after, std::size_t limit) {
  // A previous incarnation of `node` owns leases named "<node>/<anything>".
  auto q = db.prepare(
      "SELECT s.id, s.open_execution, l.owner, l.expires_at, l.attempts "
      "FROM sessions s LEFT JOIN leases l ON l.session_id = s.id "
      "WHERE s.open_execution IS NOT NULL AND s.quarantined = 0 AND s.id > ?1 "
      "AND (l.session_id IS NULL OR l.expires_at <= ?2 "
      "     OR (substr(l.owner, 1, length(?3) + 1) = ?3 || '/' AND instr(substr(l.owner, length(?3) + 2), '/') = 0 "
      "         AND l.owner <> ?4)) "
      "ORDER BY s.id LIMIT ?5");
  q.bind(after ? after->str() : std::string(), now, node, current_owner, sql_limit(limit));
  return collect<abandoned_session>(q, abandoned_from<query>);
}

// Driven by two partial indexes that hold only sessions about to run (or
// stranded): pending inputs that wait for a run, and sessions whose answered
// question waits for its turn to continue.
const char* const list_stranded_sql =
    "SELECT session_id FROM ("
    "SELECT i.session_id AS session_id FROM inputs i INDEXED BY inputs_pending_resume "
    "JOIN sessions s ON s.id = i.session_id "
    "WHERE i.status = 'pending' AND i.resume = 1 AND i.session_id > ?1 "
    "AND s.open_execution IS NULL AND s.quarantined = 0 "
    "AND NOT EXISTS (SELECT 1 FROM interactions x WHERE x.session_id = i.session_id AND x.status = 'pending') "
    "UNION "
    "SELECT s.id FROM sessions s INDEXED BY sessions_continuation_pending "
    "WHERE s.continuation_pending = 1 AND s.id > ?1 AND s.open_execution IS NULL AND s.quarantined = 0 "
    "AND NOT EXISTS (SELECT 1 FROM interactions x WHERE x.session_id = s.id AND x.status = 'pending')"
    ") ORDER BY session_id LIMIT ?2";

result<std::vector<session_id>> list_stranded(connection& db, const std::optional<session_id>& after,
                                              std::size_t limit) {
  auto q = db.prepare(list_stranded_sql);
  q.bind(after ? after->str() : std::string(), sql_limit(limit));
  return collect<session_id>(q,
                             [](const query& row) -> result<session_id> { return session_id::trusted(row.text(0)); });
}

}  // namespace tether::store::sqlite
