// Rows of an agent program's saved session state (store/agent_state_store.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tether::store {

// A piece of a saved file, stored once for every state and session that
// holds it: `sha256` (hex) of its raw bytes, their count, and `data` as
// stored (deflated: util/deflate.h).
struct state_chunk {
  std::string sha256;
  std::int64_t size = 0;
  std::string data;
};

// A saved state (the agent.state.saved at `seq`) uses a chunk of `bytes`
// stored bytes.
struct state_ref {
  std::int64_t seq = 0;
  std::string sha256;
  std::int64_t bytes = 0;
};

// What collect_chunks() deleted.
struct chunk_collection {
  std::size_t chunks = 0;
  std::int64_t bytes = 0;  // stored bytes
};

}  // namespace tether::store
