#pragma once
// Token counts and costs as providers and agents report them.
//
// They arrive as JSON from a model server or an agent program, either of
// which may be broken or hostile: huge, negative, a double, infinite (JSON
// 1e400 reads as infinity). Each parser passes every count and cost it reads
// through these, so that sums (input + cache read + cache write, a turn's
// steps, a session's runs) stay far inside their types and every figure
// Tether stores is a finite, non-negative number.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>

#include <boost/json/fwd.hpp>

namespace tether::model {

// A count: clamped to [0, max_reported_tokens] (a trillion; no context
// window is near it).
inline constexpr std::int64_t max_reported_tokens = 1'000'000'000'000;
constexpr std::int64_t reported_tokens(std::int64_t n) {
  return n < 0 ? 0 : n > max_reported_tokens ? max_reported_tokens : n;
}

// A cost in USD: a negative or non-finite one is no cost reported
// (nullopt), a larger one than max_reported_cost_usd is that much.
inline constexpr double max_reported_cost_usd = 1e9;
inline std::optional<double> reported_cost(double usd) {
  if (!std::isfinite(usd) || usd < 0) return std::nullopt;
  return usd > max_reported_cost_usd ? max_reported_cost_usd : usd;
}

// The same, read from a field of a parsed report: a count (0 when absent or
// not a number), a cost (nullopt when absent or not a number).
std::int64_t token_count(const boost::json::object& o, std::string_view key);
std::optional<double> cost_at(const boost::json::object& o, std::string_view key);

}  // namespace tether::model
