// deflate / inflate (zlib's format) of a whole buffer in memory: the chunks
// of agent programs' saved session state (store/agent_state_store.h).
//
//   auto packed = deflate_bytes(raw);               // never fails
//   auto back = inflate_bytes(packed, raw.size());  // an error for damaged input
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "util/result.h"

namespace tether {

std::string deflate_bytes(std::string_view raw);
// util_errc::invalid_argument when `packed` is not zlib data or does not
// inflate to exactly `size` bytes.
result<std::string> inflate_bytes(std::string_view packed, std::size_t size);

}  // namespace tether
