// The rules of agent_state_store's writes (store/agent_state_store.h), for
// every backend: run by the writer inside a request's transaction over
// write_rows (store/rows.h), like store/leases.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "store/agent_state_types.h"
#include "store/rows.h"
#include "store/types.h"
#include "util/result.h"

namespace tether::store {

// rejected: a sha256 that is not 64 lowercase hex digits, or a negative size.
result<std::int64_t> put_chunks(write_rows& rows, const std::vector<state_chunk>& chunks);
// not_found: an unknown session.
result<std::size_t> release_states(write_rows& rows, const session_id& s, std::int64_t keep_bytes);
result<chunk_collection> collect_chunks(write_rows& rows, time_ms before);

}  // namespace tether::store
