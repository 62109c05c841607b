#include "store/committed_store.h"

#include "store/agent_states.h"
#include "store/leases.h"
#include "store/projector.h"

namespace tether::store {

committed_store::committed_store(batch_committer& backend, const tether::clock& clock, const committed_store_options& o)
    : hub_(std::make_shared<tail_hub>(o.tail_buffer, o.tail_buffer_bytes, clock)),
      commit_(backend, hub_, clock, {o.max_batch, o.retry_initial_ms, o.retry_max_ms}) {}

task<result<append_result>> committed_store::append(append_request req) {
  // Encoding and validation happen here, on the caller's thread; the writer
  // is the bottleneck under load and only runs SQL.
  auto data = encode_append(req);
  // The session's deltas published from now on follow these events (tail.h, Order).
  hub_->hold(req.session);
  auto settled = [hub = hub_, s = req.session] { hub->release(s); };
  return commit_.submit<append_result>(
      [req = std::move(req), data = std::move(data)](write_rows& rows) {
        if (!data) return result<append_result>(data.error());
        return apply_append(rows, req, data.value());
      },
      std::move(settled));
}

task<result<lease>> committed_store::claim_lease(session_id s, std::string owner, time_ms ttl_ms) {
  return commit_.submit<lease>([s = std::move(s), owner = std::move(owner), ttl_ms](write_rows& rows) {
    return store::claim_lease(rows, s, owner, ttl_ms, rows.now());
  });
}

task<result<lease>> committed_store::renew_lease(session_id s, std::string owner, time_ms ttl_ms) {
  return commit_.submit<lease>([s = std::move(s), owner = std::move(owner), ttl_ms](write_rows& rows) {
    return store::renew_lease(rows, s, owner, ttl_ms, rows.now());
  });
}

task<result<void>> committed_store::release_lease(session_id s, std::string owner) {
  return commit_.submit<void>([s = std::move(s), owner = std::move(owner)](write_rows& rows) {
    return store::release_lease(rows, s, owner, rows.now());
  });
}

task<result<std::size_t>> committed_store::expire_owned_leases(std::string owner) {
  return commit_.submit<std::size_t>(
      [owner = std::move(owner)](write_rows& rows) { return store::expire_owned_leases(rows, owner, rows.now()); });
}

task<result<std::int64_t>> committed_store::bump_attempts(session_id s, std::string owner) {
  return commit_.submit<std::int64_t>([s = std::move(s), owner = std::move(owner)](write_rows& rows) {
    return store::bump_attempts(rows, s, owner, rows.now());
  });
}

task<result<void>> committed_store::quarantine(session_id s, std::string reason) {
  return commit_.submit<void>(
      [s = std::move(s), reason = std::move(reason)](write_rows& rows) { return store::quarantine(rows, s, reason); });
}

task<result<project_row>> committed_store::create_project(project_row p) {
  return commit_.submit<project_row>([p = std::move(p)](write_rows& rows) { return store::create_project(rows, p); });
}

task<result<project_row>> committed_store::update_project(project_patch patch) {
  return commit_.submit<project_row>(
      [patch = std::move(patch)](write_rows& rows) { return store::update_project(rows, patch); });
}

task<result<std::int64_t>> committed_store::put_chunks(std::vector<state_chunk> chunks) {
  return commit_.submit<std::int64_t>(
      [chunks = std::move(chunks)](write_rows& rows) { return store::put_chunks(rows, chunks); });
}

task<result<std::size_t>> committed_store::release_states(session_id s, std::int64_t keep_bytes) {
  return commit_.submit<std::size_t>(
      [s = std::move(s), keep_bytes](write_rows& rows) { return store::release_states(rows, s, keep_bytes); });
}

task<result<chunk_collection>> committed_store::collect_chunks(time_ms before) {
  return commit_.submit<chunk_collection>([before](write_rows& rows) { return store::collect_chunks(rows, before); });
}

void committed_store::publish(session_id s, model::payload ephemeral) {
  hub_->publish_ephemeral(s, std::move(ephemeral));
}

std::unique_ptr<event_tail> committed_store::tail(session_id s, event_seq after) {
  return hub_->subscribe(*this, std::move(s), after);
}

std::unique_ptr<event_tail> committed_store::tail_all(std::size_t buffer) { return hub_->subscribe_all(buffer); }

}  // namespace tether::store
