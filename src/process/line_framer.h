// Line framing bounded by bytes: bytes go in as they arrive, lines come out.
//
//   line_framer f({.max_bytes = 1 << 20});
//   f.feed(chunk);
//   while (auto line = f.next()) { if (!*line) fail((*line).error()); use(**line); }
//   if (auto tail = f.finish()) use(*tail);   // at EOF: a last line without '\n'
//
// A line is the bytes before '\n' (a "\r\n" ending loses its '\r' too). A
// line longer than max_bytes is, by policy, an error (process_errc::
// line_too_long; the framer stays failed, nothing more comes out) or split
// into pieces of max_bytes. The framer holds at most max_bytes plus the last
// chunk fed: memory is bounded by bytes whatever the child writes.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "util/result.h"

namespace tether::process {

enum class overlong_line { fail, split };

struct line_limits {
  std::size_t max_bytes = 64 * 1024;  // without the '\n'
  overlong_line overlong = overlong_line::fail;
};

class line_framer {
 public:
  explicit line_framer(line_limits limits = {}) : limits_(limits) {}

  void feed(std::string_view bytes) { buffer_.append(bytes); }
  // The next line; nullopt when no complete line is buffered.
  std::optional<result<std::string>> next();
  // At end of input: the unterminated rest as a last line (nullopt if none;
  // an error when it is over the limit and the policy is fail).
  std::optional<result<std::string>> finish();
  // The unconsumed bytes as they came (no framing), leaving the framer empty.
  std::string drain();
  [[nodiscard]] std::size_t buffered() const { return buffer_.size() - start_; }
  [[nodiscard]] const line_limits& limits() const { return limits_; }

 private:
  std::optional<result<std::string>> take(std::size_t length, std::size_t skip);

  line_limits limits_;
  std::string buffer_;
  std::size_t start_ = 0;  // where the unread part of buffer_ begins
  bool failed_ = false;
};

}  // namespace tether::process
