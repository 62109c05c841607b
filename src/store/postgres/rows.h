// The PostgreSQL rows behind the shared projection and lease rules:
// write_rows (store/rows.h) over the writer's connection, one cached
// statement per call (pq.h). The schema is store/postgres/schema.cpp's; the
// statements are SQLite's (store/sqlite/rows.h) with what several nodes
// writing one database at READ COMMITTED need.
//
// Locking (every lock is held until the writer's transaction ends):
// - load_session locks the session row (SELECT … FOR UPDATE). Every append
//   loads its session first, so appends to one session are serialized
//   across nodes, and the last_seq it reads is the one the next event must
//   follow. insert_event writes the event and the row's last_seq and
//   last_time in one statement, under that lock.
// - load_lease locks the lease row the same way, so lease decisions and
//   fence checks of one session are serialized across nodes. Two nodes
//   inserting a session's first lease at once: one gets a unique
//   violation (connection::unique_violation()), and the writer runs that
//   request again, when the row exists and is locked.
// - Ids used across sessions (inputs, messages, calls, projects' names …)
//   are checked without a lock: a concurrent insert of the same id ends in
//   a unique violation (store_errc::rejected), never in a duplicate.
// - A batch locks the rows of several sessions; two nodes locking them in
//   another order may deadlock, which PostgreSQL breaks with 40P01
//   (connection::retryable(): the writer runs the batch again).
//
// Row keys: sessions.key is an identity column (insert_session returns the
// one the database assigned).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "store/postgres/pq.h"
#include "store/rows.h"
#include "util/clock.h"

namespace tether::store::postgres {

class pg_rows final : public write_rows {
 public:
  // `db` may be replaced (use(); the writer reconnects after a failure);
  // `now` is the database's clock as the writer reads it.
  pg_rows(connection& db, std::function<time_ms()> now) : db_(&db), now_(std::move(now)) {}
  void use(connection& db) { db_ = &db; }

  time_ms now() override { return now_(); }

  // The sessions whose events this batch inserted, for cross-node
  // notifications.
  struct touched_session {
    std::string id;
    std::int64_t seq;
    bool wakes;  // an event that may give the session work (an input, an answer, a reset)
  };
  // One entry per inserted event, in insertion order (the writer dedups,
  // truncates to a mark when it rolls a request back, and clears it per batch).
  std::vector<touched_session>& touched() { return touched_; }
  [[nodiscard]] const std::vector<touched_session>& touched() const { return touched_; }

  result<std::optional<session_head>> load_session(const session_id& s) override;
  result<bool> session_exists(const session_id& s) override;
  result<std::int64_t> insert_session(const session_id& s, const model::session_created& p, time_ms at) override;
  result<void> set_title(const session_id& s, const std::string& title) override;
  result<void> set_forked(const session_id& s, const session_id& from, std::int64_t at) override;
  result<void> reset_context(const session_id& s, std::int64_t generation, std::int64_t from_seq) override;
  result<void> compact_context(const session_id& s, std::int64_t from_seq, const std::string& summary) override;
  result<void> open_execution(const session_id& s, const execution_id& e, const std::string& runtime) override;
  result<void> close_execution(const session_id& s) override;
  result<void> set_continuation_pending(const session_id& s) override;
  result<void> bind_runtime(const session_id& s, const model::runtime_bound& b) override;
  result<bool> quarantine(const session_id& s, const std::string& reason) override;

  result<void> insert_event(const new_event& e) override;
  result<void> insert_message(const session_id& s, const new_message& m) override;
  result<bool> message_id_used(std::string_view id) override;

  result<std::optional<input_id_use>> input_id_in_use(const input_id& id) override;
  result<bool> input_exists(std::string_view id) override;
  result<void> insert_input(const session_id& s, const model::input_admitted& p, std::int64_t seq) override;
  result<std::optional<owned_status>> input_status_of(const input_id& id) override;
  result<void> promote_input(const input_id& id, const execution_id& e, std::int64_t seq) override;
  result<void> cancel_input(const input_id& id) override;
  result<void> return_input(const input_id& id, std::int64_t returns) override;
  result<void> hold_pending_inputs(const session_id& s) override;

  result<void> insert_execution(const session_id& s, const model::execution_started& p, std::int64_t seq,
                                time_ms at) override;
  result<void> finish_execution(const model::execution_finished& p, time_ms at) override;
  result<void> set_open_step(const std::string& execution, std::optional<std::int64_t> step) override;

  result<bool> call_exists(const call_id& id) override;
  result<void> insert_call(const session_id& s, const std::optional<std::string>& execution,
                           const model::tool_called& p, std::string_view input, std::int64_t seq) override;
  result<std::optional<owned_status>> call_status_of(const call_id& id) override;
  result<void> settle_call(const call_id& id, std::string_view status, std::string_view result) override;

  result<bool> interaction_exists(const interaction_id& id) override;
  result<void> insert_interaction(const session_id& s, const model::interaction_requested& p,
                                  std::int64_t seq) override;
  result<std::optional<owned_status>> interaction_status_of(const interaction_id& id) override;
  result<void> resolve_interaction(const model::interaction_resolved& p) override;

  result<std::optional<task_head>> task_of(const session_id& s) override;
  result<bool> task_exists(const task_id& t) override;
  result<void> insert_task(const session_id& s, const model::task_created& p, time_ms at) override;
  result<void> update_task(const task_id& t, const model::task_updated& p, time_ms at) override;
  result<void> set_task_status(const task_id& t, model::task_status to, const model::stamp_change& st,
                               time_ms at) override;
  result<bool> comment_exists(const comment_id& c) override;
  result<void> insert_comment(const task_id& t, const model::task_commented& p, std::int64_t seq, time_ms at) override;
  result<std::optional<revision_head>> latest_revision(const task_id& t, const std::string& document) override;
  result<bool> revision_exists(const revision_id& r) override;
  result<bool> revision_of(const revision_id& r, const task_id& t, const std::string& document) override;
  result<void> insert_revision(const task_id& t, const model::document_revised& p, std::int64_t number,
                               std::int64_t seq, time_ms at) override;
  result<void> accept_revision(const task_id& t, const model::document_accepted& p, time_ms at) override;
  result<void> insert_preparation(const task_id& t, const model::task_prepared& p, std::int64_t seq,
                                  time_ms at) override;
  result<std::optional<project_row>> load_project(const project_id& p) override;
  result<std::optional<project_id>> project_named(const std::string& name) override;
  result<void> put_project(const project_row& p) override;

  result<bool> chunk_exists(std::string_view sha256) override;
  result<bool> put_chunk(const state_chunk& c, time_ms at) override;
  result<void> insert_state(std::int64_t session_key, std::int64_t seq) override;
  result<void> insert_state_ref(std::int64_t session_key, std::int64_t seq, std::string_view sha256) override;
  result<std::vector<state_ref>> state_refs(std::int64_t session_key) override;
  result<std::size_t> release_states_before(std::int64_t session_key, std::int64_t seq) override;
  result<std::pair<std::size_t, std::int64_t>> delete_unreferenced_chunks(time_ms before) override;

  result<std::optional<lease>> load_lease(const session_id& s) override;
  result<void> put_lease(const session_id& s, const lease& l) override;
  result<void> set_lease_expiry(const session_id& s, time_ms expires_at) override;
  result<void> set_lease_attempts(const session_id& s, std::int64_t attempts) override;
  result<std::size_t> expire_leases_of(const std::string& owner, time_ms at) override;

 private:
  connection* db_;
  std::function<time_ms()> now_;
  std::vector<touched_session> touched_;
};

// Whether `sql` (one parameter, `$1::text`, bound to `id`; a string literal,
// as pq.h requires) returns a row: the existence checks.
result<bool> row_exists(connection& db, const char* sql, std::string_view id);

}  // namespace tether::store::postgres
