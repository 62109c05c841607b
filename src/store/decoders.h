// How the rows both backends read come back as the store's types: one
// decoder per row kind, over any cursor with the column accessors of
// sqlite::query and postgres::rows (int64, real, text, optional_text,
// is_null; columns numbered from 0). The backends' SELECTs list the columns
// in the order these read them (see the TETHER_*_SELECT macros of each
// queries.cpp). A row that does not read back is corrupt (bad JSON, an
// unknown status) or model_errc::undecodable.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include <boost/json/parse.hpp>

#include "store/codec.h"
#include "store/errors.h"
#include "store/event_store.h"
#include "store/types.h"
#include "store/work_types.h"

// The columns each decoder reads, in its order: both backends select them
// with these (string literals, so they can be joined with a backend's own
// WHERE and ORDER BY into one literal; the SQL is the same on both).
#define TETHER_INPUT_SELECT \
  "SELECT id, session_id, prompt, delivery, status, admitted_seq, execution_id, promoted_seq, returns FROM inputs "
#define TETHER_MESSAGE_SELECT                                                                                          \
  "SELECT m.seq, m.generation, m.role, m.id, m.text, m.tool, m.input, m.is_error, "                                    \
  "COALESCE((SELECT t.kind FROM tool_calls t WHERE t.id = m.id AND m.role IN ('tool_call', 'tool_result')), 'local') " \
  "FROM messages m "
#define TETHER_EXECUTION_SELECT                                                                              \
  "SELECT id, session_id, node, status, outcome, reason, error, usage, started_seq, open_step, started_at, " \
  "finished_at, runtime, agent_state, model FROM executions "
#define TETHER_INTERACTION_SELECT "SELECT id, session_id, call_id, kind, payload, status, result FROM interactions "
#define TETHER_PROJECT_SELECT \
  "SELECT id, name, description, repositories, revision, created_at, updated_at, setup FROM projects "
#define TETHER_TASK_SELECT                                                                            \
  "SELECT t.id, t.session_id, t.title, t.description, t.status, t.mode, t.priority, t.project_id, "   \
  "t.parent_id, s.profile, t.created_by, t.accepted_plan, t.created_at, t.updated_at, t.started_at, " \
  "t.completed_at, t.cancelled_at FROM tasks t JOIN sessions s ON s.id = t.session_id "

namespace tether::store::decode {

inline tether::error corrupt(std::string msg) { return {store_errc::corrupt, std::move(msg)}; }

template <class E>
struct named {
  std::string_view name;
  E value;
};

// Status names as projections.cpp writes them.
constexpr std::array input_statuses{named<input_status>{"pending", input_status::pending},
                                    named<input_status>{"promoted", input_status::promoted},
                                    named<input_status>{"cancelled", input_status::cancelled}};
constexpr std::array message_roles{
    named<message_role>{"user", message_role::user}, named<message_role>{"assistant", message_role::assistant},
    named<message_role>{"tool_call", message_role::tool_call},
    named<message_role>{"tool_result", message_role::tool_result}, named<message_role>{"notice", message_role::notice}};
constexpr std::array execution_statuses{named<execution_status>{"running", execution_status::running},
                                        named<execution_status>{"finished", execution_status::finished}};
constexpr std::array call_statuses{named<call_status>{"running", call_status::running},
                                   named<call_status>{"succeeded", call_status::succeeded},
                                   named<call_status>{"failed", call_status::failed}};
constexpr std::array interaction_statuses{named<interaction_status>{"pending", interaction_status::pending},
                                          named<interaction_status>{"answered", interaction_status::answered},
                                          named<interaction_status>{"cancelled", interaction_status::cancelled}};

template <class E, std::size_t N>
result<E> parse_name(const std::array<named<E>, N>& table, std::string_view s, const std::string& what) {
  for (const auto& n : table)
    if (n.name == s) return n.value;
  return corrupt(what + ": unknown value '" + std::string(s) + "'");
}

// How many columns session_from reads (0..23): a query's columns after them start here.
inline constexpr int session_columns = 24;

template <class Row>
result<session_row> session_from(const Row& q) {
  session_row r;
  r.id = session_id::trusted(q.text(0));
  r.last_seq = event_seq{q.int64(1)};
  r.generation = q.int64(2);
  r.title = q.text(3);
  r.workspace = q.text(4);
  r.profile = q.text(5);
  if (!q.is_null(6)) r.open_execution = execution_id::trusted(q.text(6));
  r.continuation_pending = q.int64(7) != 0;
  r.runtime = q.text(8);
  if (!q.is_null(19)) {  // bound: runtime.bound of this generation
    runtime_binding b;
    b.runtime = q.text(9);
    b.external_session_id = q.text(18);
    b.generation = q.int64(19);
    b.last_seen_seq = event_seq{q.int64(20)};
    b.state = q.text(21);
    r.binding = std::move(b);
  }
  r.quarantined = q.int64(10) != 0;
  r.quarantine_reason = q.text(11);
  r.created_at = q.int64(12);
  r.updated_at = q.int64(13);
  if (!q.is_null(14)) r.lease = lease{q.text(14), q.int64(15), q.int64(16)};
  if (const auto metadata = q.text(17); !metadata.empty()) {
    auto v = parse_column(metadata, "session " + r.id.str() + " metadata");
    if (!v) return v.error();
    if (!v->is_object()) return corrupt("session " + r.id.str() + " metadata is not an object");
    r.metadata = std::move(v->as_object());
  }
  if (!q.is_null(22)) r.forked_from = session_row::origin{session_id::trusted(q.text(22)), q.int64(23)};
  return r;
}

template <class Row>
result<input_row> input_from(const Row& q) {
  input_row r;
  r.id = input_id::trusted(q.text(0));
  const std::string what = "input " + r.id.str();
  r.session = session_id::trusted(q.text(1));
  r.prompt = q.text(2);
  const auto d = model::parse_delivery(q.text(3));
  if (!d) return corrupt(what + ": unknown delivery '" + q.text(3) + "'");
  r.delivery = *d;
  auto status = parse_name(input_statuses, q.text(4), what);
  if (!status) return status.error();
  r.status = *status;
  r.admitted_seq = event_seq{q.int64(5)};
  if (!q.is_null(6)) r.execution = execution_id::trusted(q.text(6));
  if (!q.is_null(7)) r.promoted_seq = event_seq{q.int64(7)};
  r.returns = q.int64(8);
  return r;
}

template <class Row>
result<message_row> message_from(const Row& q, const session_id& s) {
  message_row r;
  r.seq = event_seq{q.int64(0)};
  const std::string what = "message " + s.str() + "/" + std::to_string(r.seq.value);
  r.generation = q.int64(1);
  auto role = parse_name(message_roles, q.text(2), what);
  if (!role) return role.error();
  r.role = *role;
  r.id = q.text(3);
  r.text = q.text(4);
  r.tool = q.text(5);
  if (!q.is_null(6)) {
    auto input = parse_column(q.text(6), what + " input");
    if (!input) return input.error();
    r.input = std::move(*input);
  }
  r.is_error = q.int64(7) != 0;
  const auto kind = model::parse_tool_kind(q.text(8));
  if (!kind) return corrupt(what + ": unknown tool kind '" + q.text(8) + "'");
  r.call_kind = *kind;
  return r;
}

template <class Row>
result<execution_row> execution_from(const Row& q) {
  execution_row r;
  r.id = execution_id::trusted(q.text(0));
  const std::string what = "execution " + r.id.str();
  r.session = session_id::trusted(q.text(1));
  r.node = q.text(2);
  auto status = parse_name(execution_statuses, q.text(3), what);
  if (!status) return status.error();
  r.status = *status;
  if (!q.is_null(4)) {
    r.outcome = model::parse_outcome(q.text(4));
    if (!r.outcome) return corrupt(what + ": unknown outcome '" + q.text(4) + "'");
  }
  r.reason = q.text(5);
  r.error = q.text(6);
  if (!q.is_null(7)) {
    auto u = parse_usage(q.text(7), what);
    if (!u) return u.error();
    r.usage = *u;
  }
  r.started_seq = event_seq{q.int64(8)};
  if (!q.is_null(9)) r.open_step = q.int64(9);
  r.started_at = q.int64(10);
  if (!q.is_null(11)) r.finished_at = q.int64(11);
  r.runtime = q.text(12);
  r.agent_state = q.text(13);
  r.model = q.text(14);
  return r;
}

template <class Row>
result<tool_call_row> call_from(const Row& q) {
  tool_call_row r;
  r.id = call_id::trusted(q.text(0));
  const std::string what = "tool call " + r.id.str();
  r.session = session_id::trusted(q.text(1));
  if (!q.is_null(2)) r.execution = execution_id::trusted(q.text(2));
  r.tool = q.text(3);
  auto input = parse_column(q.text(4), what + " input");
  if (!input) return input.error();
  r.input = std::move(*input);
  const auto kind = model::parse_tool_kind(q.text(5));
  if (!kind) return corrupt(what + ": unknown kind '" + q.text(5) + "'");
  r.kind = *kind;
  auto status = parse_name(call_statuses, q.text(6), what);
  if (!status) return status.error();
  r.status = *status;
  r.result = q.text(7);
  return r;
}

template <class Row>
result<interaction_row> interaction_from(const Row& q) {
  interaction_row r;
  r.id = interaction_id::trusted(q.text(0));
  const std::string what = "interaction " + r.id.str();
  r.session = session_id::trusted(q.text(1));
  if (!q.is_null(2)) r.call = call_id::trusted(q.text(2));
  r.kind = q.text(3);
  auto payload = parse_column(q.text(4), what + " payload");
  if (!payload) return payload.error();
  r.payload = std::move(*payload);
  auto status = parse_name(interaction_statuses, q.text(5), what);
  if (!status) return status.error();
  r.status = *status;
  if (!q.is_null(6)) {
    auto res = parse_column(q.text(6), what + " result");
    if (!res) return res.error();
    r.result = std::move(*res);
  }
  return r;
}

// A row of list_abandoned: session, open execution, lease owner, expiry, attempts.
template <class Row>
result<abandoned_session> abandoned_from(const Row& row) {
  abandoned_session a;
  a.session = session_id::trusted(row.text(0));
  a.execution = execution_id::trusted(row.text(1));
  if (!row.is_null(2)) a.lease = lease{row.text(2), row.int64(3), row.int64(4)};
  return a;
}

// ---- the work layer ----

template <class Row>
result<project_row> project_from(const Row& q) {
  project_row r;
  r.id = project_id::trusted(q.text(0));
  r.name = q.text(1);
  r.description = q.text(2);
  auto repos = decode_repositories(r.id.str(), q.text(3));
  if (!repos) return repos.error();
  r.repositories = std::move(*repos);
  r.revision = q.int64(4);
  r.created_at = q.int64(5);
  r.updated_at = q.int64(6);
  auto setup = decode_setup(r.id.str(), q.text(7));
  if (!setup) return setup.error();
  r.setup = std::move(*setup);
  return r;
}

template <class Row>
std::optional<time_ms> optional_time(const Row& q, int col) {
  return q.is_null(col) ? std::nullopt : std::optional<time_ms>(q.int64(col));
}

template <class Row>
result<task_row> task_from(const Row& q) {
  task_row r;
  r.id = task_id::trusted(q.text(0));
  r.session = session_id::trusted(q.text(1));
  r.title = q.text(2);
  r.description = q.text(3);
  const auto status = model::parse_task_status(q.text(4));
  const auto mode = model::parse_work_mode(q.text(5));
  if (!status || !mode) return make_error(store_errc::corrupt, "task " + r.id.str() + " has an unknown status or mode");
  r.status = *status;
  r.mode = *mode;
  r.priority = q.int64(6);
  if (!q.is_null(7)) r.project = project_id::trusted(q.text(7));
  if (!q.is_null(8)) r.parent = task_id::trusted(q.text(8));
  r.profile = q.text(9);
  r.created_by = q.text(10);
  if (!q.is_null(11)) r.accepted_plan = revision_id::trusted(q.text(11));
  r.created_at = q.int64(12);
  r.updated_at = q.int64(13);
  r.started_at = optional_time(q, 14);
  r.completed_at = optional_time(q, 15);
  r.cancelled_at = optional_time(q, 16);
  return r;
}

template <class Row>
result<comment_row> comment_from(const Row& q) {
  return comment_row{comment_id::trusted(q.text(0)),
                     task_id::trusted(q.text(1)),
                     q.text(2),
                     q.text(3),
                     event_seq{q.int64(4)},
                     q.int64(5)};
}

template <class Row>
result<revision_row> revision_from(const Row& q) {
  revision_row r;
  r.id = revision_id::trusted(q.text(0));
  r.task = task_id::trusted(q.text(1));
  r.document = q.text(2);
  r.number = q.int64(3);
  if (!q.is_null(4)) r.base = revision_id::trusted(q.text(4));
  r.content = q.text(5);
  r.author = q.text(6);
  r.accepted = q.int64(7) != 0;
  r.seq = event_seq{q.int64(8)};
  r.created_at = q.int64(9);
  return r;
}

template <class Row>
result<preparation_row> preparation_from(const Row& q) {
  preparation_row r;
  r.task = task_id::trusted(q.text(0));
  r.seq = event_seq{q.int64(1)};
  r.at = q.int64(3);
  boost::system::error_code ec;
  auto v = boost::json::parse(q.text(2), ec);
  if (ec || !v.is_object()) return make_error(store_errc::corrupt, "a preparation of " + r.task.str() + " is not JSON");
  r.record = std::move(v.as_object());
  return r;
}

}  // namespace tether::store::decode
