// forwarding_store: an event_store that forwards every call to another, to
// derive from when a store should change one or two calls and pass the rest
// through (as LevelDB ships EnvWrapper beside Env): the tests' stores that
// inject a race, a failure or a count. A new method of one of event_store's
// interfaces (event_log, lease_store, session_reads, work_store,
// agent_state_store, cluster_signals) gets its forwarder here, once.
//
//   class counting final : public forwarding_store {
//     using forwarding_store::forwarding_store;
//     task<result<event_page>> read(session_id s, event_seq after, std::size_t n) override { ... }
//   };
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "store/event_store.h"

namespace tether::store {

class forwarding_store : public event_store {
 public:
  explicit forwarding_store(event_store& inner) : inner_(&inner) {}

  // ---- writes and tails ----
  task<result<append_result>> append(append_request req) override {
    return inner_->append(std::move(req));
  }
  task<result<lease>> claim_lease(session_id s, std::string owner, time_ms ttl_ms) override {
    return inner_->claim_lease(std::move(s), std::move(owner), ttl_ms);
  }
  task<result<lease>> renew_lease(session_id s, std::string owner, time_ms ttl_ms) override {
    return inner_->renew_lease(std::move(s), std::move(owner), ttl_ms);
  }
  task<result<void>> release_lease(session_id s, std::string owner) override {
    return inner_->release_lease(std::move(s), std::move(owner));
  }
  task<result<std::size_t>> expire_owned_leases(std::string owner) override {
    return inner_->expire_owned_leases(std::move(owner));
  }
  task<result<std::int64_t>> bump_attempts(session_id s, std::string owner) override {
    return inner_->bump_attempts(std::move(s), std::move(owner));
  }
  task<result<void>> quarantine(session_id s, std::string reason) override {
    return inner_->quarantine(std::move(s), std::move(reason));
  }
  void publish(session_id s, model::payload ephemeral) override { inner_->publish(std::move(s), std::move(ephemeral)); }
  std::unique_ptr<event_tail> tail(session_id s, event_seq after) override {
    return inner_->tail(std::move(s), after);
  }
  std::unique_ptr<event_tail> tail_all(std::size_t buffer) override { return inner_->tail_all(buffer); }
  void watch_foreign(std::function<void(const foreign_change&)> w) override { inner_->watch_foreign(std::move(w)); }
  void signal(session_id s, std::string control) override { inner_->signal(std::move(s), std::move(control)); }
  [[nodiscard]] bool shared() const override { return inner_->shared(); }
  [[nodiscard]] store_health health() const override { return inner_->health(); }
  void stop() override { inner_->stop(); }

  // ---- reads: each calls on_read() first ----
  task<result<event_page>> read(session_id s, event_seq after, std::size_t limit) override {
    on_read();
    return inner_->read(std::move(s), after, limit);
  }
  task<result<session_row>> get_session(session_id s) override {
    on_read();
    return inner_->get_session(std::move(s));
  }
  task<result<session_snapshot>> snapshot(session_id s) override {
    on_read();
    return inner_->snapshot(std::move(s));
  }
  task<result<std::vector<session_row>>> list_sessions(std::size_t limit) override {
    on_read();
    return inner_->list_sessions(limit);
  }
  task<result<std::vector<session_overview>>> list_overviews(std::size_t limit,
                                                                          std::string id_prefix) override {
    on_read();
    return inner_->list_overviews(limit, std::move(id_prefix));
  }
  task<result<input_row>> get_input(input_id id) override {
    on_read();
    return inner_->get_input(std::move(id));
  }
  task<result<std::vector<input_row>>> pending_inputs(session_id s) override {
    on_read();
    return inner_->pending_inputs(std::move(s));
  }
  task<result<std::vector<input_row>>> list_inputs(session_id s) override {
    on_read();
    return inner_->list_inputs(std::move(s));
  }
  task<result<std::vector<message_row>>> context(session_id s) override {
    on_read();
    return inner_->context(std::move(s));
  }
  task<result<std::vector<message_row>>> transcript(session_id s) override {
    on_read();
    return inner_->transcript(std::move(s));
  }
  task<result<execution_row>> get_execution(execution_id id) override {
    on_read();
    return inner_->get_execution(std::move(id));
  }
  task<result<std::vector<execution_row>>> list_executions(session_id s) override {
    on_read();
    return inner_->list_executions(std::move(s));
  }
  task<result<std::vector<tool_call_row>>> unsettled_calls(session_id s) override {
    on_read();
    return inner_->unsettled_calls(std::move(s));
  }
  task<result<interaction_row>> get_interaction(interaction_id id) override {
    on_read();
    return inner_->get_interaction(std::move(id));
  }
  task<result<std::vector<interaction_row>>> pending_interactions(session_id s) override {
    on_read();
    return inner_->pending_interactions(std::move(s));
  }
  task<result<std::vector<interaction_row>>> list_interactions(session_id s) override {
    on_read();
    return inner_->list_interactions(std::move(s));
  }
  task<result<std::vector<abandoned_session>>> list_abandoned(std::string node, std::string current_owner,
                                                                            std::optional<session_id> after,
                                                                            std::size_t limit) override {
    on_read();
    return inner_->list_abandoned(std::move(node), std::move(current_owner), std::move(after), limit);
  }
  task<result<std::vector<session_id>>> list_stranded(std::optional<session_id> after,
                                                             std::size_t limit) override {
    on_read();
    return inner_->list_stranded(std::move(after), limit);
  }
  task<result<project_row>> create_project(project_row p) override {
    return inner_->create_project(std::move(p));
  }
  task<result<project_row>> update_project(project_patch patch) override {
    return inner_->update_project(std::move(patch));
  }
  task<result<project_row>> get_project(project_id id) override {
    on_read();
    return inner_->get_project(std::move(id));
  }
  task<result<std::vector<project_row>>> list_projects(std::size_t limit) override {
    on_read();
    return inner_->list_projects(limit);
  }
  task<result<task_row>> get_task(task_id id) override {
    on_read();
    return inner_->get_task(std::move(id));
  }
  task<result<std::optional<task_row>>> task_of_session(session_id s) override {
    on_read();
    return inner_->task_of_session(std::move(s));
  }
  task<result<std::vector<task_row>>> list_tasks(task_filter f) override {
    on_read();
    return inner_->list_tasks(std::move(f));
  }
  task<result<std::vector<comment_row>>> list_comments(task_id t) override {
    on_read();
    return inner_->list_comments(std::move(t));
  }
  task<result<std::vector<preparation_row>>> list_preparations(task_id t) override {
    on_read();
    return inner_->list_preparations(std::move(t));
  }
  task<result<std::vector<revision_row>>> list_revisions(task_id t) override {
    on_read();
    return inner_->list_revisions(std::move(t));
  }

  // ---- agent state ----
  task<result<std::int64_t>> put_chunks(std::vector<state_chunk> chunks) override {
    return inner_->put_chunks(std::move(chunks));
  }
  task<result<std::size_t>> release_states(session_id s, std::int64_t keep_bytes) override {
    return inner_->release_states(std::move(s), keep_bytes);
  }
  task<result<chunk_collection>> collect_chunks(time_ms before) override { return inner_->collect_chunks(before); }
  task<result<std::vector<std::string>>> missing_chunks(std::vector<std::string> sha256s) override {
    on_read();
    return inner_->missing_chunks(std::move(sha256s));
  }
  task<result<std::vector<state_chunk>>> get_chunks(std::vector<std::string> sha256s) override {
    on_read();
    return inner_->get_chunks(std::move(sha256s));
  }
  task<result<std::optional<model::event>>> latest_agent_state(session_id s, event_seq at) override {
    on_read();
    return inner_->latest_agent_state(std::move(s), at);
  }
  task<result<bool>> agent_state_held(session_id s, event_seq seq) override {
    on_read();
    return inner_->agent_state_held(std::move(s), seq);
  }

 protected:
  // Called before every read is forwarded.
  virtual void on_read() {}

  event_store* inner_;  // not owned; it outlives this store
};

}  // namespace tether::store
