// Glob patterns over '/'-separated relative paths (internal; used by the
// glob tool and grep's file filter).
//
//   **      zero or more whole path segments ("src/**/x.h" matches "src/x.h")
//   *       any characters within one segment (a leading dot included)
//   ?       one character (one UTF-8 code point), not '/'
//   [abc] [a-z] [!a-z] [^a-z]   one character of (or not of) a set
//   {a,b}   alternatives, nested allowed (at most 256 after expansion)
//   \x      x literally
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace tether::runtime::native::tool_detail {

class glob_pattern {
 public:
  // Errors: an empty pattern, an unterminated '[', too many alternatives.
  static result<glob_pattern> compile(std::string_view pattern);

  [[nodiscard]] bool matches(std::string_view relative_path) const;
  // True when the pattern has no '/' (grep's filter then matches file names).
  [[nodiscard]] bool single_segment() const { return single_segment_; }

 private:
  std::vector<std::vector<std::string>> alternatives_;  // each split into segments
  bool single_segment_ = true;
};

}  // namespace tether::runtime::native::tool_detail
