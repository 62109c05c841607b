#include "store/sqlite/rows.h"

#include <boost/json/serialize.hpp>

#include "store/codec.h"

namespace tether::store::sqlite {

result<bool> row_exists(connection& db, std::string_view sql, std::string_view id) {
  auto q = db.prepare(sql);
  q.bind(id);
  return q.step();
}

namespace {

// The owner and status of a call or an interaction looked up by id (`sql`
// selects session_id and status).
result<std::optional<owned_status>> status_of(connection& db, std::string_view sql, std::string_view id) {
  auto q = db.prepare(sql);
  q.bind(id);
  auto row = q.step();
  if (!row) return row.error();
  if (!*row) return std::optional<owned_status>();
  return std::optional<owned_status>(owned_status{q.text(0), q.text(1), {}, {}, 0});
}

}  // namespace

result<std::optional<session_head>> sqlite_rows::load_session(const session_id& s) {
  // The last seq comes from the log itself (the last entry of the session's
  // range of the events key): an append then writes no sessions row, so a
  // group commit does not dirty the sessions table's pages.
  auto q = db_->prepare(
      "SELECT generation, open_execution, quarantined, "
      "(SELECT seq FROM events WHERE session = s.key ORDER BY seq DESC LIMIT 1), key FROM sessions s WHERE id = ?");
  q.bind(s);
  auto row = q.step();
  if (!row) return row.error();
  if (!*row) return std::optional<session_head>();
  session_head st;
  st.generation = q.int64(0);
  st.open_execution = q.optional_text(1);
  st.quarantined = q.int64(2) != 0;
  st.last_seq = q.is_null(3) ? 0 : q.int64(3);
  st.key = q.int64(4);
  return std::optional<session_head>(std::move(st));
}

result<bool> sqlite_rows::session_exists(const session_id& s) {
  return row_exists(*db_, "SELECT 1 FROM sessions WHERE id = ?", s.str());
}

result<std::int64_t> sqlite_rows::insert_session(const session_id& s, const model::session_created& p, time_ms at) {
  auto q = db_->prepare(
      "INSERT INTO sessions(id, title, workspace, profile, created_at, metadata, key) "
      "VALUES(?, ?, ?, ?, ?, ?, (SELECT coalesce(max(key), 0) + 1 FROM sessions)) RETURNING key");
  const std::string metadata = p.metadata.empty() ? std::string() : boost::json::serialize(p.metadata);
  q.bind(s, p.title, p.workspace, p.profile, at, metadata);
  auto row = q.step();
  if (!row) return row.error();
  if (!*row) return make_error(store_errc::rejected, "session.created: no key was assigned");
  return q.int64(0);
}

result<void> sqlite_rows::set_title(const session_id& s, const std::string& title) {
  return db_->prepare("UPDATE sessions SET title = ? WHERE id = ?").bind(title, s).run();
}

result<void> sqlite_rows::set_forked(const session_id& s, const session_id& from, std::int64_t at) {
  return db_->prepare("UPDATE sessions SET forked_from = ?, forked_at = ? WHERE id = ?").bind(from, at, s).run();
}

result<void> sqlite_rows::reset_context(const session_id& s, std::int64_t generation, std::int64_t from_seq) {
  auto q = db_->prepare(
      "UPDATE sessions SET generation = ?, bound_runtime = '', bound_session_id = '', bound_generation = NULL, "
      "bound_seen_seq = 0, bound_state = '', context_from_seq = ?, context_summary = NULL WHERE id = ?");
  return q.bind(generation, from_seq, s).run();
}

result<void> sqlite_rows::compact_context(const session_id& s, std::int64_t from_seq, const std::string& summary) {
  auto q = db_->prepare("UPDATE sessions SET context_from_seq = ?, context_summary = ? WHERE id = ?");
  return q.bind(from_seq, summary, s).run();
}

result<void> sqlite_rows::open_execution(const session_id& s, const execution_id& e, const std::string& runtime) {
  auto q = db_->prepare("UPDATE sessions SET open_execution = ?, runtime = ?, continuation_pending = 0 WHERE id = ?");
  return q.bind(e, runtime, s).run();
}

result<void> sqlite_rows::close_execution(const session_id& s) {
  return db_->prepare("UPDATE sessions SET open_execution = NULL WHERE id = ?").bind(s).run();
}

result<void> sqlite_rows::set_continuation_pending(const session_id& s) {
  return db_->prepare("UPDATE sessions SET continuation_pending = 1 WHERE id = ?").bind(s).run();
}

result<void> sqlite_rows::bind_runtime(const session_id& s, const model::runtime_bound& b) {
  auto q = db_->prepare(
      "UPDATE sessions SET bound_runtime = ?, bound_session_id = ?, bound_generation = ?, bound_seen_seq = ?, "
      "bound_state = ? WHERE id = ?");
  TETHER_TRY(q.bind(b.runtime, b.external_session_id, b.generation, b.last_seen_seq, b.state, s).run());
  if (b.state.empty()) return ok();
  // The running execution keeps the state too: which agent process ran it.
  return db_->prepare("UPDATE executions SET agent_state = ? WHERE session_id = ? AND status = 'running'")
      .bind(b.state, s)
      .run();
}

result<bool> sqlite_rows::quarantine(const session_id& s, const std::string& reason) {
  auto q = db_->prepare("UPDATE sessions SET quarantined = 1, quarantine_reason = ? WHERE id = ?");
  TETHER_TRY(q.bind(reason, s).run());
  return db_->changes() != 0;
}

result<void> sqlite_rows::insert_event(const new_event& e) {
  auto q = db_->prepare("INSERT INTO events(session, seq, id, type, version, time, data) VALUES(?, ?, ?, ?, ?, ?, ?)");
  return q.bind(e.session_key, e.seq, e.id, e.type, e.version, e.time, e.data).run();
}

result<void> sqlite_rows::insert_message(const session_id& s, const new_message& m) {
  auto q = db_->prepare(
      "INSERT INTO messages(session_id, seq, generation, role, id, text, tool, input, is_error) "
      "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)");
  return q.bind(s, m.seq, m.generation, to_string(m.role), m.id, m.text, m.tool, m.input, m.is_error).run();
}

result<bool> sqlite_rows::message_id_used(std::string_view id) {
  return row_exists(*db_, "SELECT 1 FROM messages WHERE id = ? AND role IN ('user', 'assistant')", id);
}

result<std::optional<input_id_use>> sqlite_rows::input_id_in_use(const input_id& id) {
  // One statement for both checks (an admission is the hot path): the input
  // with this id, else a transcript message with it.
  auto q = db_->prepare(
      "SELECT session_id, prompt, delivery FROM inputs WHERE id = ?1 UNION ALL "
      "SELECT NULL, NULL, NULL FROM messages WHERE id = ?1 AND role IN ('user', 'assistant') LIMIT 1");
  q.bind(id);
  auto row = q.step();
  if (!row) return row.error();
  if (!*row) return std::optional<input_id_use>();
  if (q.is_null(0)) return std::optional<input_id_use>(input_id_use{input_id_use::kind::message, {}, {}, {}});
  return std::optional<input_id_use>(input_id_use{input_id_use::kind::input, q.text(0), q.text(1), q.text(2)});
}

result<bool> sqlite_rows::input_exists(std::string_view id) {
  return row_exists(*db_, "SELECT 1 FROM inputs WHERE id = ?", id);
}

result<void> sqlite_rows::insert_input(const session_id& s, const model::input_admitted& p, std::int64_t seq) {
  auto q = db_->prepare(
      "INSERT INTO inputs(id, session_id, prompt, delivery, status, admitted_seq, resume) "
      "VALUES(?, ?, ?, ?, 'pending', ?, ?)");
  return q.bind(p.input, s, p.prompt, model::to_string(p.delivery), seq, std::int64_t{p.resume ? 1 : 0}).run();
}

result<std::optional<owned_status>> sqlite_rows::input_status_of(const input_id& id) {
  auto q = db_->prepare("SELECT session_id, status, prompt, execution_id, returns FROM inputs WHERE id = ?");
  q.bind(id);
  auto row = q.step();
  if (!row) return row.error();
  if (!*row) return std::optional<owned_status>();
  return std::optional<owned_status>(owned_status{q.text(0), q.text(1), q.text(2), q.optional_text(3), q.int64(4)});
}

result<void> sqlite_rows::promote_input(const input_id& id, const execution_id& e, std::int64_t seq) {
  auto q = db_->prepare("UPDATE inputs SET status = 'promoted', execution_id = ?, promoted_seq = ? WHERE id = ?");
  return q.bind(e, seq, id).run();
}

result<void> sqlite_rows::cancel_input(const input_id& id) {
  return db_->prepare("UPDATE inputs SET status = 'cancelled' WHERE id = ?").bind(id).run();
}

result<void> sqlite_rows::return_input(const input_id& id, std::int64_t returns) {
  // Its user message has the seq of its input.promoted (the messages key).
  auto del = db_->prepare(
      "DELETE FROM messages WHERE role = 'user' AND (session_id, seq) IN "
      "(SELECT session_id, promoted_seq FROM inputs WHERE id = ?)");
  TETHER_TRY(del.bind(id).run());
  auto q = db_->prepare(
      "UPDATE inputs SET status = 'pending', execution_id = NULL, promoted_seq = NULL, resume = 1, returns = ? "
      "WHERE id = ?");
  return q.bind(returns, id).run();
}

result<void> sqlite_rows::hold_pending_inputs(const session_id& s) {
  auto q = db_->prepare("UPDATE inputs SET resume = 0 WHERE session_id = ? AND status = 'pending' AND resume = 1");
  return q.bind(s).run();
}

result<void> sqlite_rows::insert_execution(const session_id& s, const model::execution_started& p, std::int64_t seq,
                                           time_ms at) {
  auto q = db_->prepare(
      "INSERT INTO executions(id, session_id, node, runtime, model, status, started_seq, started_at) "
      "VALUES(?, ?, ?, ?, ?, 'running', ?, ?)");
  return q.bind(p.execution, s, p.node, p.runtime, p.model, seq, at).run();
}

result<void> sqlite_rows::finish_execution(const model::execution_finished& p, time_ms at) {
  auto q = db_->prepare(
      "UPDATE executions SET status = 'finished', outcome = ?, reason = ?, error = ?, usage = ?, open_step = NULL, "
      "finished_at = ? WHERE id = ?");
  return q.bind(model::to_string(p.outcome), p.reason, p.error, usage_text(p.usage), at, p.execution).run();
}

result<void> sqlite_rows::set_open_step(const std::string& execution, std::optional<std::int64_t> step) {
  return db_->prepare("UPDATE executions SET open_step = ? WHERE id = ?").bind(step, execution).run();
}

result<bool> sqlite_rows::call_exists(const call_id& id) {
  return row_exists(*db_, "SELECT 1 FROM tool_calls WHERE id = ?", id.str());
}

result<void> sqlite_rows::insert_call(const session_id& s, const std::optional<std::string>& execution,
                                      const model::tool_called& p, std::string_view input, std::int64_t seq) {
  auto q = db_->prepare(
      "INSERT INTO tool_calls(id, session_id, execution_id, name, input, kind, status, called_seq) "
      "VALUES(?, ?, ?, ?, ?, ?, 'running', ?)");
  return q.bind(p.call, s, execution, p.tool, input, model::to_string(p.kind), seq).run();
}

result<std::optional<owned_status>> sqlite_rows::call_status_of(const call_id& id) {
  return status_of(*db_, "SELECT session_id, status FROM tool_calls WHERE id = ?", id.str());
}

result<void> sqlite_rows::settle_call(const call_id& id, std::string_view status, std::string_view result) {
  return db_->prepare("UPDATE tool_calls SET status = ?, result = ? WHERE id = ?").bind(status, result, id).run();
}

result<bool> sqlite_rows::interaction_exists(const interaction_id& id) {
  return row_exists(*db_, "SELECT 1 FROM interactions WHERE id = ?", id.str());
}

result<void> sqlite_rows::insert_interaction(const session_id& s, const model::interaction_requested& p,
                                             std::int64_t seq) {
  const std::optional<std::string> call = p.call.empty() ? std::nullopt : std::optional(p.call.str());
  auto q = db_->prepare(
      "INSERT INTO interactions(id, session_id, call_id, kind, payload, status, requested_seq) "
      "VALUES(?, ?, ?, ?, ?, 'pending', ?)");
  return q.bind(p.interaction, s, call, p.kind, boost::json::serialize(p.payload), seq).run();
}

result<std::optional<owned_status>> sqlite_rows::interaction_status_of(const interaction_id& id) {
  return status_of(*db_, "SELECT session_id, status FROM interactions WHERE id = ?", id.str());
}

result<void> sqlite_rows::resolve_interaction(const model::interaction_resolved& p) {
  auto q = db_->prepare("UPDATE interactions SET status = ?, result = ? WHERE id = ?");
  return q.bind(p.status, boost::json::serialize(p.result), p.interaction).run();
}

result<std::optional<lease>> sqlite_rows::load_lease(const session_id& s) {
  auto q = db_->prepare("SELECT owner, expires_at, attempts FROM leases WHERE session_id = ?");
  q.bind(s);
  auto row = q.step();
  if (!row) return row.error();
  if (!*row) return std::optional<lease>();
  return std::optional<lease>(lease{q.text(0), q.int64(1), q.int64(2)});
}

result<void> sqlite_rows::put_lease(const session_id& s, const lease& l) {
  auto q = db_->prepare(
      "INSERT INTO leases(session_id, owner, expires_at, attempts) VALUES(?, ?, ?, ?) "
      "ON CONFLICT(session_id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at");
  return q.bind(s, l.owner, l.expires_at, l.attempts).run();
}

result<void> sqlite_rows::set_lease_expiry(const session_id& s, time_ms expires_at) {
  return db_->prepare("UPDATE leases SET expires_at = ? WHERE session_id = ?").bind(expires_at, s).run();
}

result<void> sqlite_rows::set_lease_attempts(const session_id& s, std::int64_t attempts) {
  return db_->prepare("UPDATE leases SET attempts = ? WHERE session_id = ?").bind(attempts, s).run();
}

result<std::size_t> sqlite_rows::expire_leases_of(const std::string& owner, time_ms at) {
  auto q = db_->prepare("UPDATE leases SET expires_at = ? WHERE owner = ? AND expires_at > ?");
  TETHER_TRY(q.bind(at, owner, at).run());
  return static_cast<std::size_t>(db_->changes());
}

}  // namespace tether::store::sqlite
