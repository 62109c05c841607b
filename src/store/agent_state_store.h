// agent_state_store: the chunks of agent programs' saved session state
// (runtime/agent/portable/state.h), beside the event log. A saved state is
// an agent.state.saved event (model/events.h) whose manifest names each
// file's chunks by SHA-256; the chunks live here, content-addressed, so a
// chunk that several turns or sessions hold is stored once.
//
//   put_chunks(c)        stores the chunks not stored yet (idempotent):
//                        their stored bytes. Put a state's chunks before
//                        its agent.state.saved: the store refuses a manifest
//                        naming a chunk it does not hold.
//   missing_chunks(s)    which of these are not stored (so a save sends only
//                        new ones)
//   get_chunks(s)        the chunks, in the order asked; not_found naming
//                        the first that is not stored
//   latest_agent_state(s, at)  the newest agent.state.saved or
//                        agent.state.unavailable event of the session at or
//                        before seq `at` (0: the newest of all)
//   agent_state_held(s, seq)   whether the state saved at `seq` still holds
//                        its chunks (not released by the budget)
//   release_states(s, keep_bytes)  the budget: keeps the session's newest
//                        saved state and the older ones, newest first, while
//                        the stored bytes of the distinct chunks they hold
//                        stay within keep_bytes; the older ones are released
//                        (their references dropped; a fork at them is
//                        refused). How many were released.
//   collect_chunks(before)  deletes chunks no held state refers to that were
//                        stored before `before` (a chunk put for a save
//                        whose event is not yet written is younger)
//
// Writes (put, release, collect) are group-committed with appends
// (store/event_store.h); reads run on the reader pool. Errors as
// event_store's (closed, write_failed, storage_unavailable, read_failed,
// not_found, rejected for a chunk whose sha256 is not 64 hex digits).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/events.h"
#include "store/agent_state_types.h"
#include "store/task.h"
#include "store/types.h"
#include "util/result.h"

namespace tether::store {

class agent_state_store {
 public:
  virtual ~agent_state_store() = default;

  virtual task<result<std::int64_t>> put_chunks(std::vector<state_chunk> chunks) = 0;
  virtual task<result<std::size_t>> release_states(session_id s, std::int64_t keep_bytes) = 0;
  virtual task<result<chunk_collection>> collect_chunks(time_ms before) = 0;

  virtual task<result<std::vector<std::string>>> missing_chunks(std::vector<std::string> sha256s) = 0;
  virtual task<result<std::vector<state_chunk>>> get_chunks(std::vector<std::string> sha256s) = 0;
  virtual task<result<std::optional<model::event>>> latest_agent_state(session_id s, event_seq at) = 0;
  virtual task<result<bool>> agent_state_held(session_id s, event_seq seq) = 0;
};

}  // namespace tether::store
