#include "process/line_framer.h"

#include "process/errors.h"

namespace tether::process {

std::optional<result<std::string>> line_framer::take(std::size_t length, std::size_t skip) {
  std::string line = buffer_.substr(start_, length);
  start_ += length + skip;
  // Compact once the consumed prefix dominates, so feeding stays amortized O(n).
  if (start_ > buffer_.size() / 2) {
    buffer_.erase(0, start_);
    start_ = 0;
  }
  if (skip == 1 && !line.empty() && line.back() == '\r') line.pop_back();
  return result<std::string>(std::move(line));
}

std::optional<result<std::string>> line_framer::next() {
  if (failed_) return std::nullopt;
  const auto nl = buffer_.find('\n', start_);
  const std::size_t length = nl == std::string::npos ? buffered() : nl - start_;
  // "\r\n" counts as one ending: a line of max_bytes plus '\r' is not over.
  // A '\r' that may be the first half of that ending does not count either.
  const bool crlf = length > 0 && buffer_[start_ + length - 1] == '\r';
  if (length - (crlf ? 1 : 0) > limits_.max_bytes) {
    if (limits_.overlong == overlong_line::split) return take(limits_.max_bytes, 0);
    failed_ = true;
    buffer_.clear();
    start_ = 0;
    return result<std::string>(make_error(
        process_errc::line_too_long, "a line is longer than " + std::to_string(limits_.max_bytes) + " bytes"));
  }
  if (nl == std::string::npos) return std::nullopt;
  return take(length, 1);
}

std::string line_framer::drain() {
  std::string rest = buffer_.substr(start_);
  buffer_.clear();
  start_ = 0;
  return rest;
}

std::optional<result<std::string>> line_framer::finish() {
  if (failed_) return std::nullopt;
  if (auto line = next()) return line;  // complete lines (or an overlong piece) first
  if (buffered() == 0) return std::nullopt;
  return take(buffered(), 0);
}

}  // namespace tether::process
