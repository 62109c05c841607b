// committed_store: what every backend's event_store shares. The writes
// (appends, lease operations, quarantine, projects) go through the shared
// rules (store/projector.h, store/leases.h) to the group-committing writer
// (store/group_commit.h) over the backend's batch_committer; live events go
// to the tail hub (store/tail.h). A backend derives from it and implements
// the reads and stop().
//
// Lifecycle: the derived class constructs its batch_committer after this
// base, so the writer thread starts only when it calls start_writer() at the
// end of its constructor; its stop() calls stop_writer() before closing what
// the writer uses.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "store/event_store.h"
#include "store/group_commit.h"
#include "store/tail.h"
#include "util/clock.h"

namespace tether::store {

struct committed_store_options {
  std::size_t max_batch = 1024;
  std::size_t tail_buffer = 4096;
  std::size_t tail_buffer_bytes = 1U << 20U;
  int retry_initial_ms = 100;
  int retry_max_ms = 5'000;
};

class committed_store : public event_store {
 public:
  // `backend` and `clock` must outlive this object; `backend` is not used
  // before start_writer().
  committed_store(batch_committer& backend, const tether::clock& clock, const committed_store_options& o);

  task<result<append_result>> append(append_request req) override;
  task<result<lease>> claim_lease(session_id s, std::string owner, time_ms ttl_ms) override;
  task<result<lease>> renew_lease(session_id s, std::string owner, time_ms ttl_ms) override;
  task<result<void>> release_lease(session_id s, std::string owner) override;
  task<result<std::size_t>> expire_owned_leases(std::string owner) override;
  task<result<std::int64_t>> bump_attempts(session_id s, std::string owner) override;
  task<result<void>> quarantine(session_id s, std::string reason) override;
  task<result<project_row>> create_project(project_row p) override;
  task<result<project_row>> update_project(project_patch patch) override;
  task<result<std::int64_t>> put_chunks(std::vector<state_chunk> chunks) override;
  task<result<std::size_t>> release_states(session_id s, std::int64_t keep_bytes) override;
  task<result<chunk_collection>> collect_chunks(time_ms before) override;

  void publish(session_id s, model::payload ephemeral) override;
  std::unique_ptr<event_tail> tail(session_id s, event_seq after) override;
  std::unique_ptr<event_tail> tail_all(std::size_t buffer) override;

  [[nodiscard]] store_health health() const override { return commit_.health(); }
  [[nodiscard]] commit_stats writer_stats() const { return commit_.stats(); }

 protected:
  void start_writer() { commit_.start(); }
  // Commits what is queued and resumes every waiter. Idempotent.
  void stop_writer() { commit_.stop(); }
  [[nodiscard]] tail_hub& hub() { return *hub_; }

 private:
  std::shared_ptr<tail_hub> hub_;
  group_commit commit_;
};

}  // namespace tether::store
