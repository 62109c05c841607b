// What the matcher files share (matchers_work.cpp, matchers_env.cpp). Private to e2e.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "e2e/matchers.h"

namespace tether::e2e::detail {

inline matcher_result begin(const matcher_spec& spec, std::string description, std::string expected) {
  matcher_result r;
  r.kind = std::string(to_string(spec.kind));
  r.description = std::move(description);
  r.expected = std::move(expected);
  return r;
}

inline matcher_result& verdict(matcher_result& r, bool passed, std::string why) {
  r.passed = passed;
  r.why = passed ? std::string() : std::move(why);
  return r;
}

// "a, b, c", or "(none)".
inline std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out.empty() ? "(none)" : out;
}

}  // namespace tether::e2e::detail
