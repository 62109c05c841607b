#pragma once
// Token counts as providers and agents report them.
//
// A count arrives as JSON from a model server or an agent program, either of
// which may be broken or hostile: huge, negative, a double. Each parser
// clamps every count it reads to [0, max_reported_tokens] (a trillion; no
// context window is near it), so that sums of counts (input + cache read +
// cache write, a turn's steps, a session's runs) stay far inside int64,
// where an overflow would be undefined behaviour.
#include <cstdint>

namespace tether::model {

inline constexpr std::int64_t max_reported_tokens = 1'000'000'000'000;

constexpr std::int64_t reported_tokens(std::int64_t n) {
  return n < 0 ? 0 : n > max_reported_tokens ? max_reported_tokens : n;
}

}  // namespace tether::model
