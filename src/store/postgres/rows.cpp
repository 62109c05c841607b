#include "store/postgres/rows.h"

#include <boost/json/serialize.hpp>

#include "store/codec.h"

namespace tether::store::postgres {

result<bool> row_exists(connection& db, const char* sql, std::string_view id) {
  auto r = db.query(sql, id);
  if (!r) return r.error();
  return r->step();
}

namespace {

// The owner and status of a call or an interaction looked up by id (`sql`
// selects session_id and status).
result<std::optional<owned_status>> status_of(connection& db, const char* sql, std::string_view id) {
  auto r = db.query(sql, id);
  if (!r) return r.error();
  if (!r->step()) return std::optional<owned_status>();
  return std::optional<owned_status>(owned_status{r->text(0), r->text(1), {}, {}, 0});
}

// Events that may give their session work on whichever node runs it: an
// input admitted to run (not one queued with resume false: the payload's
// JSON, as encode_append wrote it), an answer, a reset, a cancellation, an
// input given back to pending.
bool wakes(std::string_view type, std::string_view data) {
  if (type == "input.admitted") return data.find("\"resume\":false") == std::string_view::npos;
  return type == "interaction.resolved" || type == "session.reset" || type == "input.cancelled" ||
         type == "input.returned";
}

}  // namespace

result<std::optional<session_head>> pg_rows::load_session(const session_id& s) {
  // FOR UPDATE: see the header (appends to one session are serialized by this lock).
  auto r = db_->query(
      "SELECT generation, open_execution, quarantined, last_seq, key FROM sessions WHERE id = $1::text FOR UPDATE", s);
  if (!r) return r.error();
  if (!r->step()) return std::optional<session_head>();
  session_head st;
  st.generation = r->int64(0);
  st.open_execution = r->optional_text(1);
  st.quarantined = r->int64(2) != 0;
  st.last_seq = r->int64(3);
  st.key = r->int64(4);
  return std::optional<session_head>(std::move(st));
}

result<bool> pg_rows::session_exists(const session_id& s) {
  return row_exists(*db_, "SELECT 1 FROM sessions WHERE id = $1::text", s.str());
}

result<std::int64_t> pg_rows::insert_session(const session_id& s, const model::session_created& p, time_ms at) {
  const std::string metadata = p.metadata.empty() ? std::string() : boost::json::serialize(p.metadata);
  auto r = db_->query(
      "INSERT INTO sessions(id, title, workspace, profile, created_at, metadata) "
      "VALUES($1::text, $2::text, $3::text, $4::text, $5::bigint, $6::text) RETURNING key",
      s, p.title, p.workspace, p.profile, at, metadata);
  if (!r) return r.error();
  if (!r->step()) return make_error(store_errc::rejected, "session.created: no key was assigned");
  const std::int64_t key = r->int64(0);
  return key;
}

result<void> pg_rows::set_title(const session_id& s, const std::string& title) {
  return db_->run("UPDATE sessions SET title = $1::text WHERE id = $2::text", title, s);
}

result<void> pg_rows::set_forked(const session_id& s, const session_id& from, std::int64_t at) {
  return db_->run("UPDATE sessions SET forked_from = $1::text, forked_at = $2::bigint WHERE id = $3::text", from, at,
                  s);
}

result<void> pg_rows::reset_context(const session_id& s, std::int64_t generation, std::int64_t from_seq) {
  return db_->run(
      "UPDATE sessions SET generation = $1::bigint, bound_runtime = '', bound_session_id = '', "
      "bound_generation = NULL, bound_seen_seq = 0, bound_state = '', context_from_seq = $2::bigint, "
      "context_summary = NULL WHERE id = $3::text",
      generation, from_seq, s);
}

result<void> pg_rows::compact_context(const session_id& s, std::int64_t from_seq, const std::string& summary) {
  return db_->run("UPDATE sessions SET context_from_seq = $1::bigint, context_summary = $2::text WHERE id = $3::text",
                  from_seq, summary, s);
}

result<void> pg_rows::open_execution(const session_id& s, const execution_id& e, const std::string& runtime) {
  return db_->run(
      "UPDATE sessions SET open_execution = $1::text, runtime = $2::text, continuation_pending = 0 "
      "WHERE id = $3::text",
      e, runtime, s);
}

result<void> pg_rows::close_execution(const session_id& s) {
  return db_->run("UPDATE sessions SET open_execution = NULL WHERE id = $1::text", s);
}

result<void> pg_rows::set_continuation_pending(const session_id& s) {
  return db_->run("UPDATE sessions SET continuation_pending = 1 WHERE id = $1::text", s);
}

result<void> pg_rows::bind_runtime(const session_id& s, const model::runtime_bound& b) {
  TETHER_TRY(db_->run(
      "UPDATE sessions SET bound_runtime = $1::text, bound_session_id = $2::text, bound_generation = $3::bigint, "
      "bound_seen_seq = $4::bigint, bound_state = $5::text WHERE id = $6::text",
      b.runtime, b.external_session_id, b.generation, b.last_seen_seq, b.state, s));
  if (b.state.empty()) return ok();
  // The running execution keeps the state too: which agent process ran it.
  return db_->run("UPDATE executions SET agent_state = $1::text WHERE session_id = $2::text AND status = 'running'",
                  b.state, s);
}

result<bool> pg_rows::quarantine(const session_id& s, const std::string& reason) {
  auto r =
      db_->query("UPDATE sessions SET quarantined = 1, quarantine_reason = $1::text WHERE id = $2::text", reason, s);
  if (!r) return r.error();
  return r->affected() != 0;
}

result<void> pg_rows::insert_event(const new_event& e) {
  // One statement: the event, and the session row's last_seq and last_time
  // (the row is locked by load_session, so the next append reads this seq);
  // it returns the session's id for touched().
  auto r = db_->query(
      "WITH e AS (INSERT INTO events(session, seq, id, type, version, time, data) "
      "VALUES($1::bigint, $2::bigint, $3::text, $4::text, $5::integer, $6::bigint, $7::text)) "
      "UPDATE sessions SET last_seq = $2::bigint, last_time = $6::bigint WHERE key = $1::bigint RETURNING id",
      e.session_key, e.seq, e.id, e.type, e.version, e.time, e.data);
  if (!r) return r.error();
  if (!r->step())
    return make_error(store_errc::rejected,
                      "event " + std::string(e.id) + " names no session (key " + std::to_string(e.session_key) + ")");
  touched_.push_back(touched_session{r->text(0), e.seq, wakes(e.type, e.data)});
  return ok();
}

result<void> pg_rows::insert_message(const session_id& s, const new_message& m) {
  return db_->run(
      "INSERT INTO messages(session_id, seq, generation, role, id, text, tool, input, is_error) "
      "VALUES($1::text, $2::bigint, $3::bigint, $4::text, $5::text, $6::text, $7::text, $8::text, $9::integer)",
      s, m.seq, m.generation, to_string(m.role), m.id, m.text, m.tool, m.input, m.is_error);
}

result<bool> pg_rows::message_id_used(std::string_view id) {
  return row_exists(*db_, "SELECT 1 FROM messages WHERE id = $1::text AND role IN ('user', 'assistant')", id);
}

result<std::optional<input_id_use>> pg_rows::input_id_in_use(const input_id& id) {
  // One statement for both checks (an admission is the hot path): the input
  // with this id, else a transcript message with it. UNION ALL promises no
  // order, hence the explicit one.
  auto r = db_->query(
      "SELECT session_id, prompt, delivery, 0 AS pick FROM inputs WHERE id = $1::text UNION ALL "
      "SELECT NULL, NULL, NULL, 1 FROM messages WHERE id = $1::text AND role IN ('user', 'assistant') "
      "ORDER BY pick LIMIT 1",
      id);
  if (!r) return r.error();
  if (!r->step()) return std::optional<input_id_use>();
  if (r->is_null(0)) return std::optional<input_id_use>(input_id_use{input_id_use::kind::message, {}, {}, {}});
  return std::optional<input_id_use>(input_id_use{input_id_use::kind::input, r->text(0), r->text(1), r->text(2)});
}

result<bool> pg_rows::input_exists(std::string_view id) {
  return row_exists(*db_, "SELECT 1 FROM inputs WHERE id = $1::text", id);
}

result<void> pg_rows::insert_input(const session_id& s, const model::input_admitted& p, std::int64_t seq) {
  return db_->run(
      "INSERT INTO inputs(id, session_id, prompt, delivery, status, admitted_seq, resume) "
      "VALUES($1::text, $2::text, $3::text, $4::text, 'pending', $5::bigint, $6::integer)",
      p.input, s, p.prompt, model::to_string(p.delivery), seq, std::int64_t{p.resume ? 1 : 0});
}

result<std::optional<owned_status>> pg_rows::input_status_of(const input_id& id) {
  auto r = db_->query("SELECT session_id, status, prompt, execution_id, returns FROM inputs WHERE id = $1::text", id);
  if (!r) return r.error();
  if (!r->step()) return std::optional<owned_status>();
  return std::optional<owned_status>(
      owned_status{r->text(0), r->text(1), r->text(2), r->optional_text(3), r->int64(4)});
}

result<void> pg_rows::promote_input(const input_id& id, const execution_id& e, std::int64_t seq) {
  return db_->run(
      "UPDATE inputs SET status = 'promoted', execution_id = $1::text, promoted_seq = $2::bigint WHERE id = $3::text",
      e, seq, id);
}

result<void> pg_rows::cancel_input(const input_id& id) {
  return db_->run("UPDATE inputs SET status = 'cancelled' WHERE id = $1::text", id);
}

result<void> pg_rows::return_input(const input_id& id, std::int64_t returns) {
  // Its user message has the seq of its input.promoted (the messages key).
  TETHER_TRY(db_->run(
      "DELETE FROM messages m USING inputs i WHERE i.id = $1::text AND m.session_id = i.session_id "
      "AND m.seq = i.promoted_seq AND m.role = 'user'",
      id));
  return db_->run(
      "UPDATE inputs SET status = 'pending', execution_id = NULL, promoted_seq = NULL, resume = 1, "
      "returns = $1::integer WHERE id = $2::text",
      returns, id);
}

result<void> pg_rows::hold_pending_inputs(const session_id& s) {
  return db_->run("UPDATE inputs SET resume = 0 WHERE session_id = $1::text AND status = 'pending' AND resume = 1", s);
}

result<void> pg_rows::insert_execution(const session_id& s, const model::execution_started& p, std::int64_t seq,
                                       time_ms at) {
  return db_->run(
      "INSERT INTO executions(id, session_id, node, runtime, model, status, started_seq, started_at) "
      "VALUES($1::text, $2::text, $3::text, $4::text, $5::text, 'running', $6::bigint, $7::bigint)",
      p.execution, s, p.node, p.runtime, p.model, seq, at);
}

result<void> pg_rows::finish_execution(const model::execution_finished& p, time_ms at) {
  return db_->run(
      "UPDATE executions SET status = 'finished', outcome = $1::text, reason = $2::text, error = $3::text, "
      "usage = $4::text, open_step = NULL, finished_at = $5::bigint WHERE id = $6::text",
      model::to_string(p.outcome), p.reason, p.error, usage_text(p.usage), at, p.execution);
}

result<void> pg_rows::set_open_step(const std::string& execution, std::optional<std::int64_t> step) {
  return db_->run("UPDATE executions SET open_step = $1::bigint WHERE id = $2::text", step, execution);
}

result<bool> pg_rows::call_exists(const call_id& id) {
  return row_exists(*db_, "SELECT 1 FROM tool_calls WHERE id = $1::text", id.str());
}

result<void> pg_rows::insert_call(const session_id& s, const std::optional<std::string>& execution,
                                  const model::tool_called& p, std::string_view input, std::int64_t seq) {
  return db_->run(
      "INSERT INTO tool_calls(id, session_id, execution_id, name, input, kind, status, called_seq) "
      "VALUES($1::text, $2::text, $3::text, $4::text, $5::text, $6::text, 'running', $7::bigint)",
      p.call, s, execution, p.tool, input, model::to_string(p.kind), seq);
}

result<std::optional<owned_status>> pg_rows::call_status_of(const call_id& id) {
  return status_of(*db_, "SELECT session_id, status FROM tool_calls WHERE id = $1::text", id.str());
}

result<void> pg_rows::settle_call(const call_id& id, std::string_view status, std::string_view result) {
  return db_->run("UPDATE tool_calls SET status = $1::text, result = $2::text WHERE id = $3::text", status, result, id);
}

result<bool> pg_rows::interaction_exists(const interaction_id& id) {
  return row_exists(*db_, "SELECT 1 FROM interactions WHERE id = $1::text", id.str());
}

result<void> pg_rows::insert_interaction(const session_id& s, const model::interaction_requested& p, std::int64_t seq) {
  const std::optional<std::string> call = p.call.empty() ? std::nullopt : std::optional(p.call.str());
  return db_->run(
      "INSERT INTO interactions(id, session_id, call_id, kind, payload, status, requested_seq) "
      "VALUES($1::text, $2::text, $3::text, $4::text, $5::text, 'pending', $6::bigint)",
      p.interaction, s, call, p.kind, boost::json::serialize(p.payload), seq);
}

result<std::optional<owned_status>> pg_rows::interaction_status_of(const interaction_id& id) {
  return status_of(*db_, "SELECT session_id, status FROM interactions WHERE id = $1::text", id.str());
}

result<void> pg_rows::resolve_interaction(const model::interaction_resolved& p) {
  return db_->run("UPDATE interactions SET status = $1::text, result = $2::text WHERE id = $3::text", p.status,
                  boost::json::serialize(p.result), p.interaction);
}

result<std::optional<lease>> pg_rows::load_lease(const session_id& s) {
  // FOR UPDATE: see the header (lease decisions and fence checks of one
  // session are serialized by this lock).
  auto r = db_->query("SELECT owner, expires_at, attempts FROM leases WHERE session_id = $1::text FOR UPDATE", s);
  if (!r) return r.error();
  if (!r->step()) return std::optional<lease>();
  return std::optional<lease>(lease{r->text(0), r->int64(1), r->int64(2)});
}

result<void> pg_rows::put_lease(const session_id& s, const lease& l) {
  return db_->run(
      "INSERT INTO leases(session_id, owner, expires_at, attempts) VALUES($1::text, $2::text, $3::bigint, $4::bigint) "
      "ON CONFLICT (session_id) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at",
      s, l.owner, l.expires_at, l.attempts);
}

result<void> pg_rows::set_lease_expiry(const session_id& s, time_ms expires_at) {
  return db_->run("UPDATE leases SET expires_at = $1::bigint WHERE session_id = $2::text", expires_at, s);
}

result<void> pg_rows::set_lease_attempts(const session_id& s, std::int64_t attempts) {
  return db_->run("UPDATE leases SET attempts = $1::bigint WHERE session_id = $2::text", attempts, s);
}

result<std::size_t> pg_rows::expire_leases_of(const std::string& owner, time_ms at) {
  auto r = db_->query("UPDATE leases SET expires_at = $1::bigint WHERE owner = $2::text AND expires_at > $1::bigint",
                      at, owner);
  if (!r) return r.error();
  return static_cast<std::size_t>(r->affected());
}

}  // namespace tether::store::postgres
