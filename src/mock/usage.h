// Token figures of the scripted model (docs/mock-model.md, "Usage").
//
// Tokens are ceil(characters / 4), characters being Unicode code points.
// Input counts the request's canonical text: every message (role, text, tool
// calls, call ids) and every tool offered (name, description, schema).
// Output counts the response's text, or the call's name and arguments.
//
// The simulated prompt cache remembers, for each earlier request, its
// canonical text — the tools first, then each message, as real provider
// caches order them — at every segment boundary (as hashes). A request's
// cached tokens are the tokens of its longest boundary prefix seen before.
// The memory is bounded (oldest prefixes are forgotten first). prompt_cache
// is not thread-safe; the handler serializes it.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "mock/types.h"

namespace tether::mock {

std::uint64_t count_tokens(std::string_view text);  // ceil(code points / 4)

// The canonical text of each message, in order (their concatenation is the
// request's canonical message text).
std::vector<std::string> canonical_messages(const conversation& c);
std::string canonical_tools(const conversation& c);
// What the prompt cache sees: canonical_tools, then canonical_messages.
std::vector<std::string> canonical_segments(const conversation& c);

std::uint64_t input_tokens(const conversation& c);
std::uint64_t output_tokens(const model_output& out);

class prompt_cache {
 public:
  explicit prompt_cache(std::size_t max_prefixes = 100'000) : max_(max_prefixes) {}

  // Cached tokens for this request (given as canonical_segments); then
  // remembers its prefixes.
  std::uint64_t lookup_and_remember(const std::vector<std::string>& canonical);

 private:
  std::size_t max_;
  std::unordered_map<std::uint64_t, std::uint64_t> prefixes_;  // hash of a prefix → its length in code points
  std::deque<std::uint64_t> order_;                            // insertion order, for eviction
};

}  // namespace tether::mock
