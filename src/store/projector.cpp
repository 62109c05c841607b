#include "store/projector.h"

#include <set>
#include <string_view>

#include <boost/json.hpp>

#include "store/codec.h"
#include "store/leases.h"

namespace tether::store {

namespace {

namespace json = boost::json;

// What one event's projection sees.
struct applying {
  write_rows& rows;
  const session_id& session;
  bool& exists;
  session_head& state;
  std::int64_t seq;
  time_ms time;
  const event_id& id;
};

tether::error reject(std::string msg) { return {store_errc::rejected, std::move(msg)}; }

result<void> check_fence(write_rows& rows, const session_id& s, const fence& f, const session_head& st, time_ms now) {
  if (f.lease_owner) {
    auto l = rows.load_lease(s);
    if (!l) return l.error();
    if (!*l)
      return make_error(store_errc::fence_failed, s.str() + " has no lease; " + *f.lease_owner + " must hold it");
    if ((*l)->owner != *f.lease_owner)
      return make_error(store_errc::fence_failed,
                        "the lease of " + s.str() + " is held by " + (*l)->owner + ", not " + *f.lease_owner);
    if ((*l)->expires_at <= now)
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
std::string_view missing_id(const model::input_returned& p) {
  return p.input.empty() ? "input_id" : p.execution.empty() ? "execution_id" : "";
}
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

std::string_view missing_id(const model::task_created& p) { return p.task.empty() ? "task_id" : ""; }
std::string_view missing_id(const model::task_commented& p) { return p.comment.empty() ? "comment_id" : ""; }
std::string_view missing_id(const model::document_revised& p) { return p.revision.empty() ? "revision_id" : ""; }
std::string_view missing_id(const model::document_accepted& p) { return p.revision.empty() ? "revision_id" : ""; }

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

result<void> insert_message(applying& a, message_role role, std::string_view id, std::string_view text,
                            std::string_view tool = {}, std::optional<std::string_view> input = std::nullopt,
                            bool is_error = false) {
  return a.rows.insert_message(a.session,
                               new_message{a.seq, a.state.generation, role, id, text, tool, input, is_error});
}

result<void> require_open(const applying& a, const execution_id& e, std::string_view what) {
  if (a.state.open_execution != e.str())
    return reject(std::string(what) + ": " + e.str() + " is not the open execution of " + a.session.str());
  return ok();
}

// ---- one function per event type ----

result<void> project(applying& a, model::session_created& p) {
  if (a.exists) return make_error(store_errc::session_exists, a.session.str() + " already exists");
  auto key = a.rows.insert_session(a.session, p, a.time);
  if (!key) return key.error();
  a.exists = true;
  a.state = session_head{.key = *key};
  return ok();
}

result<void> project(applying& a, model::session_updated& p) { return a.rows.set_title(a.session, p.title); }

result<void> project(applying& a, model::session_reset& p) {
  p.generation = ++a.state.generation;
  return a.rows.reset_context(a.session, p.generation, a.seq);
}

result<void> project(applying& a, model::session_forked& p) {
  if (p.from == p.fork) return reject("session.forked: a session cannot be its own fork");
  if (p.fork != a.session && p.from != a.session)
    return reject("session.forked: " + a.session.str() + " is neither the fork nor its source");
  if (p.fork != a.session) return ok();  // the source's record of it
  return a.rows.set_forked(a.session, p.from, p.at);
}

result<void> project(applying& a, model::input_admitted& p) {
  if (a.state.quarantined)
    return make_error(store_errc::quarantined, a.session.str() + " is quarantined; it takes no new inputs");
  auto use = a.rows.input_id_in_use(p.input);
  if (!use) return use.error();
  if (*use && (*use)->what == input_id_use::kind::message)
    return make_error(store_errc::input_conflict, p.input.str() + " names a message of a transcript");
  if (*use) {
    const auto& in = **use;
    if (in.session == a.session.str() && in.prompt == p.prompt && in.delivery == model::to_string(p.delivery))
      return make_error(store_errc::duplicate_input, p.input.str() + " was already admitted");
    const std::string why = in.session != a.session.str() ? "in another session"
                            : in.prompt != p.prompt       ? "with another prompt"
                                                          : "with another delivery";
    return make_error(store_errc::input_conflict, p.input.str() + " is already admitted " + why);
  }
  return a.rows.insert_input(a.session, p, a.seq);
}

// The prompt of a pending input of this session, or why it is not one.
result<std::string> pending_input(applying& a, const input_id& id, std::string_view what) {
  auto in = a.rows.input_status_of(id);
  if (!in) return in.error();
  if (!*in || (*in)->session != a.session.str())
    return reject(std::string(what) + ": " + id.str() + " is not an input of " + a.session.str());
  if ((*in)->status != "pending")
    return reject(std::string(what) + ": " + id.str() + " is " + (*in)->status + ", not pending");
  return std::move((*in)->prompt);
}

result<void> project(applying& a, model::input_promoted& p) {
  auto prompt = pending_input(a, p.input, "input.promoted");
  if (!prompt) return prompt.error();
  TETHER_TRY(a.rows.promote_input(p.input, p.execution, a.seq));
  return insert_message(a, message_role::user, p.input.str(), *prompt);
}

result<void> project(applying& a, model::input_cancelled& p) {
  TETHER_TRY(pending_input(a, p.input, "input.cancelled"));
  return a.rows.cancel_input(p.input);
}

result<void> project(applying& a, model::input_returned& p) {
  TETHER_TRY(require_open(a, p.execution, "input.returned"));
  auto in = a.rows.input_status_of(p.input);
  if (!in) return in.error();
  if (!*in || (*in)->session != a.session.str())
    return reject("input.returned: " + p.input.str() + " is not an input of " + a.session.str());
  if ((*in)->status != "promoted" || (*in)->execution != p.execution.str())
    return reject("input.returned: " + p.input.str() + " is " + (*in)->status + ", not promoted into " +
                  p.execution.str());
  if (p.returns != (*in)->returns + 1)
    return reject("input.returned: " + p.input.str() + " was given back " + std::to_string((*in)->returns) +
                  " times before, so this is return " + std::to_string((*in)->returns + 1) + ", not " +
                  std::to_string(p.returns));
  return a.rows.return_input(p.input, p.returns);
}

result<void> project(applying& a, model::execution_started& p) {
  if (a.state.open_execution)
    return reject("execution.started: " + a.session.str() + " already has an open execution " +
                  *a.state.open_execution);
  TETHER_TRY(a.rows.insert_execution(a.session, p, a.seq, a.time));
  TETHER_TRY(a.rows.open_execution(a.session, p.execution, p.runtime));
  a.state.open_execution = p.execution.str();
  return ok();
}

result<void> project(applying& a, model::execution_recovered& p) {
  return require_open(a, p.execution, "execution.recovered");
}

result<void> project(applying& a, model::execution_finished& p) {
  TETHER_TRY(require_open(a, p.execution, "execution.finished"));
  TETHER_TRY(a.rows.finish_execution(p, a.time));
  TETHER_TRY(a.rows.close_execution(a.session));
  TETHER_TRY(a.rows.set_lease_attempts(a.session, 0));
  // A stop keeps pending inputs but does not run them: they wait for the
  // next wake (an admission, a resume), not for recovery.
  if (p.outcome == model::outcome::interrupted) TETHER_TRY(a.rows.hold_pending_inputs(a.session));
  a.state.open_execution.reset();
  return ok();
}

result<void> set_open_step(applying& a, std::optional<std::int64_t> step) {
  if (!a.state.open_execution) return ok();
  return a.rows.set_open_step(*a.state.open_execution, step);
}

result<void> project(applying& a, model::step_started& p) {
  TETHER_TRY(require_open(a, p.execution, "step.started"));
  return set_open_step(a, p.step);
}
result<void> project(applying& a, model::step_ended&) { return set_open_step(a, std::nullopt); }
result<void> project(applying& a, model::step_failed&) { return set_open_step(a, std::nullopt); }
result<void> project(applying&, model::step_retry_scheduled&) { return ok(); }
result<void> project(applying&, model::reasoning_ended&) { return ok(); }
result<void> project(applying&, model::env_lease_requested&) { return ok(); }
result<void> project(applying&, model::env_lease_acquired&) { return ok(); }
result<void> project(applying&, model::env_lease_released&) { return ok(); }
result<void> project(applying&, model::env_workspace_synced&) { return ok(); }
result<void> project(applying& a, model::agent_state_saved& p) {
  TETHER_TRY(a.rows.insert_state(a.state.key, a.seq));
  std::set<std::string_view> chunks;
  for (const auto& f : p.manifest) chunks.insert(f.chunks.begin(), f.chunks.end());
  for (const auto sha : chunks) {
    auto held = a.rows.chunk_exists(sha);
    if (!held) return held.error();
    if (!*held) return reject("agent.state.saved: chunk " + std::string(sha) + " is not stored");
    TETHER_TRY(a.rows.insert_state_ref(a.state.key, a.seq, sha));
  }
  return ok();
}
result<void> project(applying& a, model::agent_state_unavailable&) { return a.rows.insert_state(a.state.key, a.seq); }
result<void> project(applying& a, model::compaction_ended& p) {
  if (p.kept_from_seq < 1 || p.kept_from_seq > a.seq)
    return reject("compaction.ended: kept_from_seq " + std::to_string(p.kept_from_seq) + " is not a seq of " +
                  a.session.str() + " (1.." + std::to_string(a.seq) + ")");
  return a.rows.compact_context(a.session, p.kept_from_seq, p.summary);
}

result<void> project(applying& a, model::text_ended& p) {
  auto used = a.rows.message_id_used(p.message.str());
  if (!used) return used.error();
  if (*used) return reject("text.ended: message id " + p.message.str() + " is already used");
  auto input = a.rows.input_exists(p.message.str());
  if (!input) return input.error();
  if (*input) return reject("text.ended: message id " + p.message.str() + " names an input");
  return insert_message(a, message_role::assistant, p.message.str(), p.text);
}

result<void> project(applying& a, model::tool_called& p) {
  auto used = a.rows.call_exists(p.call);
  if (!used) return used.error();
  if (*used) return reject("tool.called: " + p.call.str() + " already exists");
  const std::string input = json::serialize(p.input);
  TETHER_TRY(a.rows.insert_call(a.session, a.state.open_execution, p, input, a.seq));
  return insert_message(a, message_role::tool_call, p.call.str(), "", p.tool, input);
}

result<void> settle_call(applying& a, const call_id& call, std::string_view status, std::string_view text) {
  auto current = a.rows.call_status_of(call);
  if (!current) return current.error();
  if (!*current || (*current)->session != a.session.str())
    return reject("tool." + std::string(status) + ": " + call.str() + " is not a call of " + a.session.str());
  if ((*current)->status != "running")
    return reject("tool." + std::string(status) + ": " + call.str() + " is already " + (*current)->status);
  TETHER_TRY(a.rows.settle_call(call, status, text));
  return insert_message(a, message_role::tool_result, call.str(), text, {}, std::nullopt, status == "failed");
}

result<void> project(applying& a, model::tool_succeeded& p) { return settle_call(a, p.call, "succeeded", p.content); }
result<void> project(applying& a, model::tool_failed& p) { return settle_call(a, p.call, "failed", p.error); }

result<void> project(applying& a, model::interaction_requested& p) {
  auto used = a.rows.interaction_exists(p.interaction);
  if (!used) return used.error();
  if (*used) return reject("interaction.requested: " + p.interaction.str() + " already exists");
  return a.rows.insert_interaction(a.session, p, a.seq);
}

result<void> project(applying& a, model::interaction_resolved& p) {
  if (p.status != "answered" && p.status != "cancelled")
    return reject("interaction.resolved: status must be answered or cancelled, not '" + p.status + "'");
  auto current = a.rows.interaction_status_of(p.interaction);
  if (!current) return current.error();
  if (!*current || (*current)->session != a.session.str())
    return make_error(store_errc::not_found, p.interaction.str() + " is not an interaction of " + a.session.str());
  if ((*current)->status != "pending")
    return make_error(store_errc::interaction_not_pending, p.interaction.str() + " is already " + (*current)->status);
  TETHER_TRY(a.rows.resolve_interaction(p));
  return a.rows.set_continuation_pending(a.session);
}

result<void> project(applying& a, model::runtime_bound& p) {
  if (!p.generation) return reject("runtime.bound needs the context generation it was made in");
  if (*p.generation > a.state.generation)
    return reject("runtime.bound: generation " + std::to_string(*p.generation) + " is ahead of " + a.session.str() +
                  "'s " + std::to_string(a.state.generation));
  // Made before a reset: kept in the log, but the old agent session stays dropped.
  if (*p.generation < a.state.generation) return ok();
  return a.rows.bind_runtime(a.session, p);
}

result<void> project(applying& a, model::synthetic& p) {
  return insert_message(a, message_role::notice, a.id.str(), p.text);
}

// ---- the work layer ----

tether::error conflict(std::string msg) { return {store_errc::conflict, std::move(msg)}; }

constexpr std::size_t max_title_bytes = 500;

result<void> check_title(std::string_view event, const std::string& title) {
  if (title.find_first_not_of(" \t\r\n") == std::string::npos) return reject(std::string(event) + ": the title is empty");
  if (title.size() > max_title_bytes)
    return reject(std::string(event) + ": the title is longer than " + std::to_string(max_title_bytes) + " bytes");
  return ok();
}

// The session's task, or why the event cannot apply.
result<task_head> task_of(applying& a, std::string_view event) {
  auto t = a.rows.task_of(a.session);
  if (!t) return t.error();
  if (!*t) return reject(std::string(event) + ": " + a.session.str() + " is not the session of a task");
  return std::move(**t);
}

result<void> known_project(applying& a, std::string_view event, const project_id& p) {
  if (p.empty()) return ok();
  auto row = a.rows.load_project(p);
  if (!row) return row.error();
  if (!*row) return make_error(store_errc::not_found, std::string(event) + ": there is no project " + p.str());
  return ok();
}

result<void> project(applying& a, model::task_created& p) {
  auto existing = a.rows.task_of(a.session);
  if (!existing) return existing.error();
  if (*existing) return reject("task.created: " + a.session.str() + " is already the session of " + (*existing)->id.str());
  auto used = a.rows.task_exists(p.task);
  if (!used) return used.error();
  if (*used) return reject("task.created: " + p.task.str() + " already exists");
  TETHER_TRY(check_title("task.created", p.title));
  TETHER_TRY(known_project(a, "task.created", p.project));
  if (!p.parent.empty()) {
    auto parent = a.rows.task_exists(p.parent);
    if (!parent) return parent.error();
    if (!*parent) return make_error(store_errc::not_found, "task.created: there is no parent task " + p.parent.str());
  }
  return a.rows.insert_task(a.session, p, a.time);
}

result<void> project(applying& a, model::task_updated& p) {
  auto t = task_of(a, "task.updated");
  if (!t) return t.error();
  if (p.title) TETHER_TRY(check_title("task.updated", *p.title));
  if (p.project) TETHER_TRY(known_project(a, "task.updated", *p.project));
  return a.rows.update_task(t->id, p, a.time);
}

result<void> project(applying& a, model::task_status_changed& p) {
  auto t = task_of(a, "task.status_changed");
  if (!t) return t.error();
  if (t->status != p.from)
    return conflict("task.status_changed: " + t->id.str() + " is " + std::string(model::to_string(t->status)) +
                    ", not " + std::string(model::to_string(p.from)));
  if (auto allowed = model::check_transition(p.from, p.to); !allowed)
    return reject("task.status_changed: " + allowed.error().message);
  return a.rows.set_task_status(t->id, p.to, model::stamp(p.from, p.to), a.time);
}

result<void> project(applying& a, model::task_commented& p) {
  auto t = task_of(a, "task.commented");
  if (!t) return t.error();
  if (p.text.find_first_not_of(" \t\r\n") == std::string::npos) return reject("task.commented: the text is empty");
  auto used = a.rows.comment_exists(p.comment);
  if (!used) return used.error();
  if (*used) return reject("task.commented: " + p.comment.str() + " already exists");
  return a.rows.insert_comment(t->id, p, a.seq, a.time);
}

result<void> project(applying& a, model::document_revised& p) {
  auto t = task_of(a, "document.revised");
  if (!t) return t.error();
  if (p.document.empty() || p.document.size() > 64) return reject("document.revised: the document name is empty or long");
  if (p.content.find_first_not_of(" \t\r\n") == std::string::npos) return reject("document.revised: the content is empty");
  auto used = a.rows.revision_exists(p.revision);
  if (!used) return used.error();
  if (*used) return reject("document.revised: " + p.revision.str() + " already exists");
  auto latest = a.rows.latest_revision(t->id, p.document);
  if (!latest) return latest.error();
  const std::string what = "the " + p.document + " of " + t->id.str();
  if (*latest && p.base != (*latest)->id)
    return conflict("document.revised: " + what + " is at " + (*latest)->id.str() + ", not " +
                    (p.base.empty() ? std::string("none") : p.base.str()));
  if (!*latest && !p.base.empty())
    return conflict("document.revised: " + what + " has no revision " + p.base.str());
  const std::int64_t number = *latest ? (*latest)->number + 1 : 1;
  return a.rows.insert_revision(t->id, p, number, a.seq, a.time);
}

result<void> project(applying& a, model::task_prepared& p) {
  auto t = task_of(a, "task.prepared");
  if (!t) return t.error();
  return a.rows.insert_preparation(t->id, p, a.seq, a.time);
}

result<void> project(applying& a, model::document_accepted& p) {
  auto t = task_of(a, "document.accepted");
  if (!t) return t.error();
  auto mine = a.rows.revision_of(p.revision, t->id, p.document);
  if (!mine) return mine.error();
  if (!*mine)
    return make_error(store_errc::not_found,
                      "document.accepted: " + p.revision.str() + " is not a revision of the " + p.document + " of " +
                          t->id.str());
  return a.rows.accept_revision(t->id, p, a.time);
}

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

result<append_result> apply_append(write_rows& rows, const append_request& req, const std::vector<std::string>& data) {
  TETHER_CHECK(data.size() == req.events.size(), "apply_append needs encode_append's data for every event");

  auto loaded = rows.load_session(req.session);
  if (!loaded) return loaded.error();
  bool exists = loaded->has_value();
  session_head state = exists ? std::move(**loaded) : session_head{};
  const bool creates = std::holds_alternative<model::session_created>(req.events.front());
  if (!exists && !creates) return make_error(store_errc::unknown_session, req.session.str() + " does not exist");
  if (exists && creates) return make_error(store_errc::session_exists, req.session.str() + " already exists");
  const time_ms now = rows.now();
  if (req.fence && req.fence->claim_ttl_ms && req.fence->lease_owner) {
    auto claimed = claim_lease(rows, req.session, *req.fence->lease_owner, *req.fence->claim_ttl_ms, now);
    if (!claimed) return claimed.error();
  }
  if (req.fence) TETHER_TRY(check_fence(rows, req.session, *req.fence, state, now));

  const time_ms time = req.time != 0 ? req.time : now;
  append_result out;
  out.events.reserve(req.events.size());
  for (std::size_t i = 0; i < req.events.size(); ++i) {
    // A copy: the request stays intact, so the writer can run it again.
    model::payload p = req.events[i];
    const std::int64_t seq = state.last_seq + 1;
    event_id id = event_id::generate();
    applying a{rows, req.session, exists, state, seq, time, id};
    TETHER_TRY(std::visit([&a](auto& body) { return project(a, body); }, p));
    // session.reset learns its generation from the projection.
    const bool reencode = std::holds_alternative<model::session_reset>(p);
    const std::string reset_data = reencode ? json::serialize(model::encode(p)) : std::string();
    TETHER_TRY(rows.insert_event(new_event{state.key, seq, id.str(), model::type_name(p), model::type_version(p), time,
                                           reencode ? std::string_view(reset_data) : std::string_view(data[i])}));
    state.last_seq = seq;
    out.events.push_back(model::event{std::move(id), req.session, event_seq{seq}, time, std::move(p)});
  }
  if (req.fence && req.fence->release_lease && req.fence->lease_owner)
    TETHER_TRY(release_lease(rows, req.session, *req.fence->lease_owner, now));
  out.last_seq = event_seq{state.last_seq};
  return out;
}

namespace {

result<void> check_project(write_rows& rows, project_row& p) {
  const auto blank = p.name.find_first_not_of(" \t\r\n") == std::string::npos;
  if (blank || p.name.size() > 200) return reject("a project needs a name of 1 to 200 bytes");
  if (p.description.size() > 64U * 1024U) return reject("a project's description is over 64 KiB");
  if (auto r = model::check_repositories(p.repositories); !r) return reject(r.error().message);
  if (p.setup.size() > 32) return reject("a project has at most 32 setup commands");
  for (const auto& c : p.setup)
    if (c.find_first_not_of(" \t\r\n") == std::string::npos || c.size() > 4096)
      return reject("a setup command must be 1 to 4096 bytes, not blank");
  auto named = rows.project_named(p.name);
  if (!named) return named.error();
  if (*named && **named != p.id)
    return conflict("the project name '" + p.name + "' is taken by " + (*named)->str());
  return ok();
}

}  // namespace

result<project_row> create_project(write_rows& rows, project_row p) {
  if (p.id.empty()) return reject("a project needs an id");
  auto existing = rows.load_project(p.id);
  if (!existing) return existing.error();
  if (*existing) return reject(p.id.str() + " already exists");
  TETHER_TRY(check_project(rows, p));
  p.revision = 1;
  p.created_at = p.updated_at = rows.now();
  TETHER_TRY(rows.put_project(p));
  return p;
}

result<project_row> update_project(write_rows& rows, const project_patch& patch) {
  auto existing = rows.load_project(patch.id);
  if (!existing) return existing.error();
  if (!*existing) return make_error(store_errc::not_found, "there is no project " + patch.id.str());
  project_row p = std::move(**existing);
  if (patch.expected_revision && *patch.expected_revision != p.revision)
    return conflict(p.id.str() + " is at revision " + std::to_string(p.revision) + ", not " +
                    std::to_string(*patch.expected_revision));
  if (patch.name) p.name = *patch.name;
  if (patch.description) p.description = *patch.description;
  if (patch.repositories) p.repositories = *patch.repositories;
  if (patch.setup) p.setup = *patch.setup;
  TETHER_TRY(check_project(rows, p));
  p.revision += 1;
  p.updated_at = rows.now();
  TETHER_TRY(rows.put_project(p));
  return p;
}

}  // namespace tether::store
