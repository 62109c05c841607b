// The read side of the PostgreSQL backend. Each function runs on a reader
// connection inside a read transaction opened by the caller (REPEATABLE READ
// READ ONLY), so multi-query reads see one snapshot, whatever writers on
// other connections commit meanwhile; nothing here locks. Session-scoped
// reads of an unknown session return unknown_session; lookups by id return
// not_found. A stored row that cannot be read back returns corrupt (bad
// JSON, unknown status) or model_errc::undecodable (an event payload the
// catalogue rejects). After a failed query the transaction is aborted: every
// function returns at its first error, and the caller rolls back.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "store/event_store.h"
#include "store/postgres/pq.h"
#include "store/types.h"
#include "store/work_types.h"

namespace tether::store::postgres {

// At most this many events per page, whatever the caller asks for.
inline constexpr std::size_t max_page = 10'000;

inline std::int64_t sql_limit(std::size_t limit) { return static_cast<std::int64_t>(std::min(limit, max_page)); }

// Decodes every row of a query's result with `from`.
template <class Row, class From>
result<std::vector<Row>> collect(result<rows> q, From from) {
  if (!q) return q.error();
  std::vector<Row> out;
  out.reserve(static_cast<std::size_t>(q->count()));
  while (q->step()) {
    auto r = from(*q);
    if (!r) return r.error();
    out.push_back(std::move(*r));
  }
  return out;
}

// Decodes the first row of a query expected to return at most one (not_found
// naming `missing` when there is none).
template <class Row, class From>
result<Row> single(result<rows> q, From from, std::string_view missing) {
  if (!q) return q.error();
  if (!q->step()) return make_error(store_errc::not_found, std::string(missing) + " does not exist");
  return from(*q);
}

// unknown_session unless the session exists (also used by the writer).
result<void> require_session(connection& db, const session_id& s);

result<event_page> read_events(connection& db, const session_id& s, event_seq after, std::size_t limit);
result<session_row> get_session(connection& db, const session_id& s);
// Most recently updated first.
result<std::vector<session_row>> list_sessions(connection& db, std::size_t limit);
// The usage of all the session's executions (store::session_overview::usage).
result<model::usage> session_usage(connection& db, const session_id& s);
// list_sessions with the pending inputs and interactions of each counted, and
// the usage of each, in one statement. With a non-empty id_prefix, only the
// sessions whose id starts with it.
result<std::vector<session_overview>> list_overviews(connection& db, std::size_t limit, const std::string& id_prefix);
result<input_row> get_input(connection& db, const input_id& id);
result<std::vector<input_row>> pending_inputs(connection& db, const session_id& s);
// Every input of the session (any status), in admission order.
result<std::vector<input_row>> list_inputs(connection& db, const session_id& s);
result<std::vector<message_row>> context(connection& db, const session_id& s);
// Every message of every context generation, in seq order (no summary row).
result<std::vector<message_row>> transcript(connection& db, const session_id& s);
result<execution_row> get_execution(connection& db, const execution_id& id);
result<std::vector<execution_row>> list_executions(connection& db, const session_id& s);
result<std::vector<tool_call_row>> unsettled_calls(connection& db, const session_id& s);
result<interaction_row> get_interaction(connection& db, const interaction_id& id);
result<std::vector<interaction_row>> pending_interactions(connection& db, const session_id& s);
// Every interaction of the session (any status), in request order.
result<std::vector<interaction_row>> list_interactions(connection& db, const session_id& s);
// `now` is the database's time, read by the caller (event_store.h, Time).
result<std::vector<abandoned_session>> list_abandoned(connection& db, time_ms now, const std::string& node,
                                                      const std::string& current_owner,
                                                      const std::optional<session_id>& after, std::size_t limit);
// Sessions nobody runs although they should run: a pending input admitted
// with resume, or an answered question whose turn has not continued; no
// open execution, no pending interaction, not quarantined. In id order.
result<std::vector<session_id>> list_stranded(connection& db, const std::optional<session_id>& after,
                                              std::size_t limit);
// Its statement ($1: after, "" for the start; $2: limit), for the query-plan test.
extern const char* const list_stranded_sql;

// ---- the work layer (queries_work.cpp) ----
result<project_row> get_project(connection& db, const project_id& id);
// By name.
result<std::vector<project_row>> list_projects(connection& db, std::size_t limit);
result<task_row> get_task(connection& db, const task_id& id);
result<std::optional<task_row>> task_of_session(connection& db, const session_id& s);
// Most recently updated first.
result<std::vector<task_row>> list_tasks(connection& db, const task_filter& f);
result<std::vector<comment_row>> list_comments(connection& db, const task_id& t);
// Per document, by number.
result<std::vector<revision_row>> list_revisions(connection& db, const task_id& t);
// In seq order.
result<std::vector<preparation_row>> list_preparations(connection& db, const task_id& t);

// Agent state (store/agent_state_store.h).
result<std::vector<std::string>> missing_chunks(connection& db, const std::vector<std::string>& sha256s);
result<std::vector<state_chunk>> get_chunks(connection& db, const std::vector<std::string>& sha256s);
result<std::optional<model::event>> latest_agent_state(connection& db, const session_id& s, event_seq at);
result<bool> agent_state_held(connection& db, const session_id& s, event_seq seq);

}  // namespace tether::store::postgres
