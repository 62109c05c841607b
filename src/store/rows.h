// write_rows: what the projection and lease rules (store/projector.h,
// store/leases.h) read and write inside the writer's transaction. A backend
// implements it over its own tables (store/sqlite/rows.h); the rules stay
// the same for every backend.
//
// Every call runs inside the transaction the group-committing writer opened
// for the current request (store/group_commit.h), so a request sees its own
// writes and a refused request leaves nothing behind. Calls only read and
// write rows: they check no rule (the callers do) and change only what they
// name. A failure is the backend's (store_errc::write_failed, corrupt for a
// row that cannot be read back, rejected for a constraint the row broke);
// the writer decides whether it dooms the batch.
//
// now() is the backend's one clock for every lease and fence decision and
// for event times: the store's clock object for SQLite, the database's time
// for a database server. It is read once per request.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/events.h"
#include "store/errors.h"
#include "store/agent_state_types.h"
#include "store/types.h"
#include "store/work_types.h"
#include "util/clock.h"
#include "util/ids.h"
#include "util/result.h"

namespace tether::store {

// The session row as the projection rules need it.
struct session_head {
  std::int64_t key = 0;  // the backend's own handle of the session (opaque to the rules)
  std::int64_t last_seq = 0;
  std::int64_t generation = 0;
  std::optional<std::string> open_execution;
  bool quarantined = false;
};

// Who already uses an id that an input.admitted wants.
struct input_id_use {
  enum class kind { input, message } what = kind::input;
  // kind::input: the input's session, prompt and delivery.
  std::string session;
  std::string prompt;
  std::string delivery;  // as stored
};

// A pending-or-not input, a tool call or an interaction: whose it is and
// its status, as the name the rules report ("promoted", "succeeded", …).
struct owned_status {
  std::string session;
  std::string status;
  std::string prompt;  // inputs only
  std::optional<std::string> execution;  // inputs only: the execution it was promoted into
  std::int64_t returns = 0;              // inputs only: times it was given back (input.returned)
};

// One transcript message to insert (views: valid for the call only).
struct new_message {
  std::int64_t seq = 0;
  std::int64_t generation = 0;
  message_role role = message_role::user;
  std::string_view id;
  std::string_view text;
  std::string_view tool;
  std::optional<std::string_view> input;  // JSON text of a tool call's input
  bool is_error = false;
};

// One stored event (views: valid for the call only).
struct new_event {
  std::int64_t session_key = 0;  // session_head::key
  std::int64_t seq = 0;
  std::string_view id;
  std::string_view type;
  int version = 0;
  time_ms time = 0;
  std::string_view data;  // the payload's JSON text
};

// The task of a session, as the work rules need it.
struct task_head {
  task_id id;
  model::task_status status = model::task_status::todo;
};

// The latest revision of a task's document.
struct revision_head {
  revision_id id;
  std::int64_t number = 0;
};

class write_rows {
 public:
  virtual ~write_rows() = default;

  // The backend's clock (see the header comment).
  virtual time_ms now() = 0;

  // ---- sessions ----
  virtual result<std::optional<session_head>> load_session(const session_id& s) = 0;
  virtual result<bool> session_exists(const session_id& s) = 0;
  // Inserts the session row; returns its key.
  virtual result<std::int64_t> insert_session(const session_id& s, const model::session_created& p, time_ms at) = 0;
  virtual result<void> set_title(const session_id& s, const std::string& title) = 0;
  // session.forked in a fork's own log: where it was made from.
  virtual result<void> set_forked(const session_id& s, const session_id& from, std::int64_t at) = 0;
  // session.reset: the new generation, the context starting at `from_seq`,
  // no summary, no runtime binding (the runtime of the last execution stays).
  virtual result<void> reset_context(const session_id& s, std::int64_t generation, std::int64_t from_seq) = 0;
  // compaction.ended: the context is `summary` then the messages from `from_seq`.
  virtual result<void> compact_context(const session_id& s, std::int64_t from_seq, const std::string& summary) = 0;
  // Opens `e`, makes `runtime` the session's runtime, clears continuation_pending.
  virtual result<void> open_execution(const session_id& s, const execution_id& e, const std::string& runtime) = 0;
  virtual result<void> close_execution(const session_id& s) = 0;
  virtual result<void> set_continuation_pending(const session_id& s) = 0;
  // Replaces the session's binding with `b` (its generation is set).
  virtual result<void> bind_runtime(const session_id& s, const model::runtime_bound& b) = 0;
  // False when there is no such session.
  virtual result<bool> quarantine(const session_id& s, const std::string& reason) = 0;

  // ---- events and messages ----
  virtual result<void> insert_event(const new_event& e) = 0;
  virtual result<void> insert_message(const session_id& s, const new_message& m) = 0;
  // Whether a user or assistant message has this id.
  virtual result<bool> message_id_used(std::string_view id) = 0;

  // ---- inputs ----
  // The input with this id, else a user or assistant message with it, else none.
  virtual result<std::optional<input_id_use>> input_id_in_use(const input_id& id) = 0;
  virtual result<bool> input_exists(std::string_view id) = 0;
  virtual result<void> insert_input(const session_id& s, const model::input_admitted& p, std::int64_t seq) = 0;
  virtual result<std::optional<owned_status>> input_status_of(const input_id& id) = 0;
  virtual result<void> promote_input(const input_id& id, const execution_id& e, std::int64_t seq) = 0;
  virtual result<void> cancel_input(const input_id& id) = 0;
  // input.returned: the promoted input is pending again (its admission seq
  // kept, no execution, no promoted_seq, waiting for a run), given back
  // `returns` times; its user message leaves the transcript (a promotion
  // writes it again).
  virtual result<void> return_input(const input_id& id, std::int64_t returns) = 0;
  // A stop: the session's pending inputs no longer ask for a run.
  virtual result<void> hold_pending_inputs(const session_id& s) = 0;

  // ---- executions ----
  virtual result<void> insert_execution(const session_id& s, const model::execution_started& p, std::int64_t seq,
                                        time_ms at) = 0;
  virtual result<void> finish_execution(const model::execution_finished& p, time_ms at) = 0;
  virtual result<void> set_open_step(const std::string& execution, std::optional<std::int64_t> step) = 0;

  // ---- tool calls ----
  virtual result<bool> call_exists(const call_id& id) = 0;
  virtual result<void> insert_call(const session_id& s, const std::optional<std::string>& execution,
                                   const model::tool_called& p, std::string_view input, std::int64_t seq) = 0;
  virtual result<std::optional<owned_status>> call_status_of(const call_id& id) = 0;
  virtual result<void> settle_call(const call_id& id, std::string_view status, std::string_view result) = 0;

  // ---- interactions ----
  virtual result<bool> interaction_exists(const interaction_id& id) = 0;
  virtual result<void> insert_interaction(const session_id& s, const model::interaction_requested& p,
                                          std::int64_t seq) = 0;
  virtual result<std::optional<owned_status>> interaction_status_of(const interaction_id& id) = 0;
  virtual result<void> resolve_interaction(const model::interaction_resolved& p) = 0;

  // ---- the work layer ----
  virtual result<std::optional<task_head>> task_of(const session_id& s) = 0;
  virtual result<bool> task_exists(const task_id& t) = 0;
  virtual result<void> insert_task(const session_id& s, const model::task_created& p, time_ms at) = 0;
  // Sets the fields p sets (a project "" clears it).
  virtual result<void> update_task(const task_id& t, const model::task_updated& p, time_ms at) = 0;
  virtual result<void> set_task_status(const task_id& t, model::task_status to, const model::stamp_change& st,
                                       time_ms at) = 0;
  virtual result<bool> comment_exists(const comment_id& c) = 0;
  virtual result<void> insert_comment(const task_id& t, const model::task_commented& p, std::int64_t seq,
                                      time_ms at) = 0;
  virtual result<std::optional<revision_head>> latest_revision(const task_id& t, const std::string& document) = 0;
  virtual result<bool> revision_exists(const revision_id& r) = 0;
  // Whether `r` is a revision of this task's `document`.
  virtual result<bool> revision_of(const revision_id& r, const task_id& t, const std::string& document) = 0;
  virtual result<void> insert_revision(const task_id& t, const model::document_revised& p, std::int64_t number,
                                       std::int64_t seq, time_ms at) = 0;
  virtual result<void> insert_preparation(const task_id& t, const model::task_prepared& p, std::int64_t seq,
                                          time_ms at) = 0;
  // Marks `r` accepted; for the plan, it becomes the task's accepted plan.
  virtual result<void> accept_revision(const task_id& t, const model::document_accepted& p, time_ms at) = 0;

  // ---- projects ----
  virtual result<std::optional<project_row>> load_project(const project_id& p) = 0;
  // The id of the project with this name, if any.
  virtual result<std::optional<project_id>> project_named(const std::string& name) = 0;
  // Inserts the project, or replaces the row with its id.
  virtual result<void> put_project(const project_row& p) = 0;

  // ---- agent state (store/agent_state_store.h) ----
  virtual result<bool> chunk_exists(std::string_view sha256) = 0;
  // Inserts the chunk unless one with its sha256 is stored; whether it did.
  virtual result<bool> put_chunk(const state_chunk& c, time_ms at) = 0;
  // An agent.state.* event of the session (session_head::key) is at `seq`.
  virtual result<void> insert_state(std::int64_t session_key, std::int64_t seq) = 0;
  // The saved state at `seq` of the session (session_head::key) uses the chunk.
  virtual result<void> insert_state_ref(std::int64_t session_key, std::int64_t seq, std::string_view sha256) = 0;
  // Every reference of the session's saved states to a chunk, with the chunk's stored bytes.
  virtual result<std::vector<state_ref>> state_refs(std::int64_t session_key) = 0;
  // Drops the session's references of saved states older than `seq` (not `seq`'s own).
  virtual result<std::size_t> release_states_before(std::int64_t session_key, std::int64_t seq) = 0;
  // Deletes chunks no saved state refers to that were stored before `before`; how many and their bytes.
  virtual result<std::pair<std::size_t, std::int64_t>> delete_unreferenced_chunks(time_ms before) = 0;

  // ---- leases ----
  virtual result<std::optional<lease>> load_lease(const session_id& s) = 0;
  // Inserts the lease, or sets owner and expiry of the existing one (its
  // attempt count stays).
  virtual result<void> put_lease(const session_id& s, const lease& l) = 0;
  virtual result<void> set_lease_expiry(const session_id& s, time_ms expires_at) = 0;
  virtual result<void> set_lease_attempts(const session_id& s, std::int64_t attempts) = 0;
  // Sets expires_at = at on every lease of `owner` fresh at `at`; how many.
  virtual result<std::size_t> expire_leases_of(const std::string& owner, time_ms at) = 0;
};

}  // namespace tether::store
