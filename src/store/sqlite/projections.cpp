#include "store/sqlite/projections.h"

#include <boost/json.hpp>

#include "store/sqlite/codec.h"
#include "store/sqlite/leases.h"

namespace tether::store::sqlite {

namespace {

namespace json = boost::json;

// The session row as the request sees it, kept current event by event.
struct session_state {
  bool exists = false;
  std::int64_t key = 0;  // the session's key in the events table
  std::int64_t last_seq = 0;
  std::int64_t generation = 0;
  std::optional<std::string> open_execution;
  bool quarantined = false;
};

// What one event's projection sees.
struct applying {
  connection& db;
  const session_id& session;
  session_state& state;
  std::int64_t seq;
  time_ms time;
  const event_id& id;
};

tether::error reject(std::string msg) { return {store_errc::rejected, std::move(msg)}; }

result<session_state> load_session(connection& db, const session_id& s) {
  // The last seq comes from the log itself (the last entry of the session's
  // range of the events key): an append then writes no sessions row, so a
  // group commit does not dirty the sessions table's pages.
  auto q = db.prepare(
      "SELECT generation, open_execution, quarantined, "
      "(SELECT seq FROM events WHERE session = s.key ORDER BY seq DESC LIMIT 1), key FROM sessions s WHERE id = ?");
  q.bind(s);
  auto row = q.step();
  if (!row) return row.error();
  session_state st;
  if (!*row) return st;
  st.exists = true;
  st.generation = q.int64(0);
  st.open_execution = q.optional_text(1);
  st.quarantined = q.int64(2) != 0;
  st.last_seq = q.is_null(3) ? 0 : q.int64(3);
  st.key = q.int64(4);
  return st;
}

result<void> check_fence(connection& db, const session_id& s, const fence& f, const session_state& st,
                         time_ms clock_now) {
  if (f.lease_owner) {
    const time_ms now = f.now_ms != 0 ? f.now_ms : clock_now;
    auto q = db.prepare("SELECT owner, expires_at FROM leases WHERE session_id = ?");
    q.bind(s);
    auto row = q.step();
    if (!row) return row.error();
    if (!*row)
      return make_error(store_errc::fence_failed, s.str() + " has no lease; " + *f.lease_owner + " must hold it");
    if (q.text(0) != *f.lease_owner)
      return make_error(store_errc::fence_failed,
                        "the lease of " + s.str() + " is held by " + q.text(0) + ", not " + *f.lease_owner);
    if (q.int64(1) <= now)
      return make_error(store_errc::fence_failed, "the lease of " + s.str() + " by " + *f.lease_owner + " has expired");
  }
  if (f.last_seq && f.last_seq->value != st.last_seq)
    return make_error(store_errc::fence_failed, "the last seq of " + s.str() + " is " + std::to_string(st.last_seq) +
                                                    ", not " + std::to_string(f.last_seq->value));
  if (f.no_open_execution && st.open_execution)
    return make_error(store_errc::fence_failed, s.str() + " has an open execution " + *st.open_execution);
  return ok();
}

// The id field a payload must carry but does not ("" when all are there).
// The catalogue decodes a present-but-empty id as empty, so the store checks.
template <class T>
std::string_view missing_id(const T&) {
  return {};
}
std::string_view missing_id(const model::input_admitted& p) { return p.input.empty() ? "input_id" : ""; }
std::string_view missing_id(const model::input_promoted& p) {
  return p.input.empty() ? "input_id" : p.execution.empty() ? "execution_id" : "";
}
std::string_view missing_id(const model::input_cancelled& p) { return p.input.empty() ? "input_id" : ""; }
std::string_view missing_id(const model::execution_started& p) { return p.execution.empty() ? "execution_id" : ""; }
std::string_view missing_id(const model::execution_recovered& p) { return p.execution.empty() ? "execution_id" : ""; }
std::string_view missing_id(const model::execution_finished& p) { return p.execution.empty() ? "execution_id" : ""; }
std::string_view missing_id(const model::step_started& p) { return p.execution.empty() ? "execution_id" : ""; }
std::string_view missing_id(const model::text_ended& p) { return p.message.empty() ? "message_id" : ""; }
std::string_view missing_id(const model::tool_called& p) { return p.call.empty() ? "call_id" : ""; }
std::string_view missing_id(const model::tool_succeeded& p) { return p.call.empty() ? "call_id" : ""; }
std::string_view missing_id(const model::tool_failed& p) { return p.call.empty() ? "call_id" : ""; }
std::string_view missing_id(const model::interaction_requested& p) {
  return p.interaction.empty() ? "interaction_id" : "";
}
std::string_view missing_id(const model::interaction_resolved& p) {
  return p.interaction.empty() ? "interaction_id" : "";
}

// The stored `data` text of a payload, proven to read back through the same
// path reads use (JSON parse within the depth limit, UTF-8, catalogue decode).
result<std::string> checked_data(const model::payload& p) {
  const std::string type(model::type_name(p));
  if (model::type_durability(p) != model::durability::durable)
    return reject(type + " is ephemeral; publish it instead of appending it");
  if (const auto field = std::visit([](const auto& body) { return missing_id(body); }, p); !field.empty())
    return reject(type + " needs a " + std::string(field));
  std::string data = json::serialize(model::encode(p));
  if (auto back = decode_payload(type, model::type_version(p), data, type); !back)
    return reject(type + " cannot be stored: " + back.error().message);
  return data;
}

result<bool> exists(connection& db, std::string_view sql, std::string_view id) {
  auto q = db.prepare(sql);
  q.bind(id);
  return q.step();
}

result<void> insert_message(applying& a, std::string_view role, std::string_view id, std::string_view text,
                            std::string_view tool = {}, const std::optional<std::string>& input = std::nullopt,
                            bool is_error = false) {
  auto q = a.db.prepare(
      "INSERT INTO messages(session_id, seq, generation, role, id, text, tool, input, is_error) "
      "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)");
  return q.bind(a.session, a.seq, a.state.generation, role, id, text, tool, input, is_error).run();
}

result<void> require_open(const applying& a, const execution_id& e, std::string_view what) {
  if (a.state.open_execution != e.str())
    return reject(std::string(what) + ": " + e.str() + " is not the open execution of " + a.session.str());
  return ok();
}

// ---- one function per event type ----

result<void> project(applying& a, model::session_created& p) {
  if (a.state.exists) return make_error(store_errc::session_exists, a.session.str() + " already exists");
  auto q = a.db.prepare(
      "INSERT INTO sessions(id, title, workspace, profile, created_at, metadata, key) "
      "VALUES(?, ?, ?, ?, ?, ?, (SELECT coalesce(max(key), 0) + 1 FROM sessions)) RETURNING key");
  const std::string metadata = p.metadata.empty() ? std::string() : boost::json::serialize(p.metadata);
  q.bind(a.session, p.title, p.workspace, p.profile, a.time, metadata);
  auto row = q.step();
  if (!row) return row.error();
  if (!*row) return reject("session.created: no key was assigned");
  a.state = session_state{.exists = true, .key = q.int64(0)};
  return ok();
}

result<void> project(applying& a, model::session_updated& p) {
  auto q = a.db.prepare("UPDATE sessions SET title = ? WHERE id = ?");
  return q.bind(p.title, a.session).run();
}

result<void> project(applying& a, model::session_reset& p) {
  p.generation = ++a.state.generation;
  auto q = a.db.prepare(
      "UPDATE sessions SET generation = ?, runtime = '', external_session_id = '', context_from_seq = ?, "
      "context_summary = NULL WHERE id = ?");
  return q.bind(p.generation, a.seq, a.session).run();
}

result<void> project(applying& a, model::input_admitted& p) {
  if (a.state.quarantined)
    return make_error(store_errc::quarantined, a.session.str() + " is quarantined; it takes no new inputs");
  {
    // One statement for both checks (an admission is the hot path): the
    // input with this id, else a transcript message with it.
    auto q = a.db.prepare(
        "SELECT session_id, prompt, delivery FROM inputs WHERE id = ?1 UNION ALL "
        "SELECT NULL, NULL, NULL FROM messages WHERE id = ?1 AND role IN ('user', 'assistant') LIMIT 1");
    q.bind(p.input);
    auto row = q.step();
    if (!row) return row.error();
    if (*row && q.is_null(0))
      return make_error(store_errc::input_conflict, p.input.str() + " names a message of a transcript");
    if (*row) {
      if (q.text(0) == a.session.str() && q.text(1) == p.prompt && q.text(2) == model::to_string(p.delivery))
        return make_error(store_errc::duplicate_input, p.input.str() + " was already admitted");
      const std::string why = q.text(0) != a.session.str() ? "in another session"
                              : q.text(1) != p.prompt      ? "with another prompt"
                                                           : "with another delivery";
      return make_error(store_errc::input_conflict, p.input.str() + " is already admitted " + why);
    }
  }
  auto q = a.db.prepare(
      "INSERT INTO inputs(id, session_id, prompt, delivery, status, admitted_seq, resume) "
      "VALUES(?, ?, ?, ?, 'pending', ?, ?)");
  return q.bind(p.input, a.session, p.prompt, model::to_string(p.delivery), a.seq, std::int64_t{p.resume ? 1 : 0})
      .run();
}

// The prompt of a pending input of this session, or why it is not one.
result<std::string> pending_input(applying& a, const input_id& id, std::string_view what) {
  auto q = a.db.prepare("SELECT session_id, status, prompt FROM inputs WHERE id = ?");
  q.bind(id);
  auto row = q.step();
  if (!row) return row.error();
  if (!*row || q.text(0) != a.session.str())
    return reject(std::string(what) + ": " + id.str() + " is not an input of " + a.session.str());
  if (q.text(1) != "pending") return reject(std::string(what) + ": " + id.str() + " is " + q.text(1) + ", not pending");
  return q.text(2);
}

result<void> project(applying& a, model::input_promoted& p) {
  auto prompt = pending_input(a, p.input, "input.promoted");
  if (!prompt) return prompt.error();
  auto q = a.db.prepare("UPDATE inputs SET status = 'promoted', execution_id = ?, promoted_seq = ? WHERE id = ?");
  TETHER_TRY(q.bind(p.execution, a.seq, p.input).run());
  return insert_message(a, "user", p.input.str(), *prompt);
}

result<void> project(applying& a, model::input_cancelled& p) {
  TETHER_TRY(pending_input(a, p.input, "input.cancelled"));
  auto q = a.db.prepare("UPDATE inputs SET status = 'cancelled' WHERE id = ?");
  return q.bind(p.input).run();
}

result<void> project(applying& a, model::execution_started& p) {
  if (a.state.open_execution)
    return reject("execution.started: " + a.session.str() + " already has an open execution " +
                  *a.state.open_execution);
  auto q = a.db.prepare(
      "INSERT INTO executions(id, session_id, node, status, started_seq, started_at) VALUES(?, ?, ?, 'running', ?, ?)");
  TETHER_TRY(q.bind(p.execution, a.session, p.node, a.seq, a.time).run());
  auto s = a.db.prepare("UPDATE sessions SET open_execution = ?, continuation_pending = 0 WHERE id = ?");
  TETHER_TRY(s.bind(p.execution, a.session).run());
  a.state.open_execution = p.execution.str();
  return ok();
}

result<void> project(applying& a, model::execution_recovered& p) {
  return require_open(a, p.execution, "execution.recovered");
}

result<void> project(applying& a, model::execution_finished& p) {
  TETHER_TRY(require_open(a, p.execution, "execution.finished"));
  auto q = a.db.prepare(
      "UPDATE executions SET status = 'finished', outcome = ?, reason = ?, error = ?, usage = ?, open_step = NULL, "
      "finished_at = ? WHERE id = ?");
  TETHER_TRY(q.bind(model::to_string(p.outcome), p.reason, p.error, usage_text(p.usage), a.time, p.execution).run());
  auto s = a.db.prepare("UPDATE sessions SET open_execution = NULL WHERE id = ?");
  TETHER_TRY(s.bind(a.session).run());
  auto l = a.db.prepare("UPDATE leases SET attempts = 0 WHERE session_id = ?");
  TETHER_TRY(l.bind(a.session).run());
  if (p.outcome == model::outcome::interrupted) {
    // A stop keeps pending inputs but does not run them: they wait for the
    // next wake (an admission, a resume), not for recovery.
    auto held = a.db.prepare("UPDATE inputs SET resume = 0 WHERE session_id = ? AND status = 'pending' AND resume = 1");
    TETHER_TRY(held.bind(a.session).run());
  }
  a.state.open_execution.reset();
  return ok();
}

result<void> set_open_step(applying& a, std::optional<std::int64_t> step) {
  if (!a.state.open_execution) return ok();
  auto q = a.db.prepare("UPDATE executions SET open_step = ? WHERE id = ?");
  return q.bind(step, *a.state.open_execution).run();
}

result<void> project(applying& a, model::step_started& p) {
  TETHER_TRY(require_open(a, p.execution, "step.started"));
  return set_open_step(a, p.step);
}
result<void> project(applying& a, model::step_ended&) { return set_open_step(a, std::nullopt); }
result<void> project(applying& a, model::step_failed&) { return set_open_step(a, std::nullopt); }
result<void> project(applying&, model::step_retry_scheduled&) { return ok(); }
result<void> project(applying&, model::reasoning_ended&) { return ok(); }
result<void> project(applying& a, model::compaction_ended& p) {
  if (p.kept_from_seq < 1 || p.kept_from_seq > a.seq)
    return reject("compaction.ended: kept_from_seq " + std::to_string(p.kept_from_seq) + " is not a seq of " +
                  a.session.str() + " (1.." + std::to_string(a.seq) + ")");
  auto q = a.db.prepare("UPDATE sessions SET context_from_seq = ?, context_summary = ? WHERE id = ?");
  return q.bind(p.kept_from_seq, p.summary, a.session).run();
}

result<void> project(applying& a, model::text_ended& p) {
  auto used = exists(a.db, "SELECT 1 FROM messages WHERE id = ? AND role IN ('user', 'assistant')", p.message.str());
  if (!used) return used.error();
  if (*used) return reject("text.ended: message id " + p.message.str() + " is already used");
  auto input = exists(a.db, "SELECT 1 FROM inputs WHERE id = ?", p.message.str());
  if (!input) return input.error();
  if (*input) return reject("text.ended: message id " + p.message.str() + " names an input");
  return insert_message(a, "assistant", p.message.str(), p.text);
}

result<void> project(applying& a, model::tool_called& p) {
  auto used = exists(a.db, "SELECT 1 FROM tool_calls WHERE id = ?", p.call.str());
  if (!used) return used.error();
  if (*used) return reject("tool.called: " + p.call.str() + " already exists");
  const std::string input = json::serialize(p.input);
  auto q = a.db.prepare(
      "INSERT INTO tool_calls(id, session_id, execution_id, name, input, hosted, status, called_seq) "
      "VALUES(?, ?, ?, ?, ?, ?, 'running', ?)");
  TETHER_TRY(q.bind(p.call, a.session, a.state.open_execution, p.tool, input, p.hosted, a.seq).run());
  return insert_message(a, "tool_call", p.call.str(), "", p.tool, input);
}

result<void> settle_call(applying& a, const call_id& call, std::string_view status, std::string_view text) {
  {
    auto q = a.db.prepare("SELECT session_id, status FROM tool_calls WHERE id = ?");
    q.bind(call);
    auto row = q.step();
    if (!row) return row.error();
    if (!*row || q.text(0) != a.session.str())
      return reject("tool." + std::string(status) + ": " + call.str() + " is not a call of " + a.session.str());
    if (q.text(1) != "running")
      return reject("tool." + std::string(status) + ": " + call.str() + " is already " + q.text(1));
  }
  auto q = a.db.prepare("UPDATE tool_calls SET status = ?, result = ? WHERE id = ?");
  TETHER_TRY(q.bind(status, text, call).run());
  return insert_message(a, "tool_result", call.str(), text, {}, std::nullopt, status == "failed");
}

result<void> project(applying& a, model::tool_succeeded& p) { return settle_call(a, p.call, "succeeded", p.content); }
result<void> project(applying& a, model::tool_failed& p) { return settle_call(a, p.call, "failed", p.error); }

result<void> project(applying& a, model::interaction_requested& p) {
  auto used = exists(a.db, "SELECT 1 FROM interactions WHERE id = ?", p.interaction.str());
  if (!used) return used.error();
  if (*used) return reject("interaction.requested: " + p.interaction.str() + " already exists");
  const std::optional<std::string> call = p.call.empty() ? std::nullopt : std::optional(p.call.str());
  auto q = a.db.prepare(
      "INSERT INTO interactions(id, session_id, call_id, kind, payload, status, requested_seq) "
      "VALUES(?, ?, ?, ?, ?, 'pending', ?)");
  return q.bind(p.interaction, a.session, call, p.kind, json::serialize(p.payload), a.seq).run();
}

result<void> project(applying& a, model::interaction_resolved& p) {
  if (p.status != "answered" && p.status != "cancelled")
    return reject("interaction.resolved: status must be answered or cancelled, not '" + p.status + "'");
  {
    auto q = a.db.prepare("SELECT session_id, status FROM interactions WHERE id = ?");
    q.bind(p.interaction);
    auto row = q.step();
    if (!row) return row.error();
    if (!*row || q.text(0) != a.session.str())
      return make_error(store_errc::not_found, p.interaction.str() + " is not an interaction of " + a.session.str());
    if (q.text(1) != "pending")
      return make_error(store_errc::interaction_not_pending, p.interaction.str() + " is already " + q.text(1));
  }
  auto q = a.db.prepare("UPDATE interactions SET status = ?, result = ? WHERE id = ?");
  TETHER_TRY(q.bind(p.status, json::serialize(p.result), p.interaction).run());
  auto s = a.db.prepare("UPDATE sessions SET continuation_pending = 1 WHERE id = ?");
  return s.bind(a.session).run();
}

result<void> project(applying& a, model::runtime_bound& p) {
  auto q = a.db.prepare("UPDATE sessions SET runtime = ?, external_session_id = ? WHERE id = ?");
  return q.bind(p.runtime, p.external_session_id, a.session).run();
}

result<void> project(applying& a, model::synthetic& p) { return insert_message(a, "notice", a.id.str(), p.text); }

// Ephemeral payloads never get here (checked_data rejects them first).
result<void> reject_ephemeral(std::string_view name) {
  std::string msg(name);
  msg.append(" is ephemeral");
  return reject(std::move(msg));
}
template <class T>
requires(T::storage == model::durability::ephemeral) result<void> project(applying&, T&) {
  return reject_ephemeral(T::name);
}

}  // namespace

result<std::vector<std::string>> encode_append(const append_request& req) {
  if (req.session.empty()) return reject("an append needs a session id");
  if (req.events.empty()) return reject("an append needs at least one event");
  std::vector<std::string> data;
  data.reserve(req.events.size());
  for (const auto& p : req.events) {
    auto d = checked_data(p);
    if (!d) return d.error();
    data.push_back(std::move(*d));
  }
  return data;
}

result<append_result> apply_append(connection& db, const append_request& req, const std::vector<std::string>& data,
                                   const tether::clock& clock) {
  TETHER_CHECK(data.size() == req.events.size(), "apply_append needs encode_append's data for every event");

  auto state = load_session(db, req.session);
  if (!state) return state.error();
  const bool creates = std::holds_alternative<model::session_created>(req.events.front());
  if (!state->exists && !creates) return make_error(store_errc::unknown_session, req.session.str() + " does not exist");
  if (state->exists && creates) return make_error(store_errc::session_exists, req.session.str() + " already exists");
  const time_ms now = clock.now();
  if (req.fence && req.fence->claim_ttl_ms && req.fence->lease_owner) {
    auto claimed = claim_lease(db, req.session, *req.fence->lease_owner, req.fence->now_ms, *req.fence->claim_ttl_ms);
    if (!claimed) return claimed.error();
  }
  if (req.fence) TETHER_TRY(check_fence(db, req.session, *req.fence, *state, now));

  const time_ms time = req.time != 0 ? req.time : now;
  append_result out;
  out.events.reserve(req.events.size());
  for (std::size_t i = 0; i < req.events.size(); ++i) {
    // A copy: the request stays intact, so the writer can run it again.
    model::payload p = req.events[i];
    const std::int64_t seq = state->last_seq + 1;
    event_id id = event_id::generate();
    applying a{db, req.session, *state, seq, time, id};
    TETHER_TRY(std::visit([&a](auto& body) { return project(a, body); }, p));
    // session.reset learns its generation from the projection.
    const bool reencode = std::holds_alternative<model::session_reset>(p);
    const std::string reset_data = reencode ? json::serialize(model::encode(p)) : std::string();
    auto q = db.prepare("INSERT INTO events(session, seq, id, type, version, time, data) VALUES(?, ?, ?, ?, ?, ?, ?)");
    TETHER_TRY(
        q.bind(state->key, seq, id, model::type_name(p), model::type_version(p), time, reencode ? reset_data : data[i])
            .run());
    state->last_seq = seq;
    out.events.push_back(model::event{std::move(id), req.session, event_seq{seq}, time, std::move(p)});
  }
  if (req.fence && req.fence->release_lease && req.fence->lease_owner)
    TETHER_TRY(release_lease(db, req.session, *req.fence->lease_owner, req.fence->now_ms != 0 ? req.fence->now_ms : now));
  out.last_seq = event_seq{state->last_seq};
  return out;
}

}  // namespace tether::store::sqlite
