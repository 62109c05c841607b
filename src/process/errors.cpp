#include "process/errors.h"

#include <string>

namespace tether::process {

namespace {
class process_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "process"; }
  std::string message(int c) const override {
    switch (static_cast<process_errc>(c)) {
      case process_errc::spawn_failed: return "cannot start the process";
      case process_errc::gate_closed: return "the process ended before it was started";
      case process_errc::line_too_long: return "a line is longer than the limit";
      case process_errc::not_a_pipe: return "the stream is not a pipe";
      case process_errc::io: return "pipe I/O failed";
    }
    return "unknown process error";
  }
};
}  // namespace

const std::error_category& process_category() {
  static const process_category_impl c;
  return c;
}

}  // namespace tether::process
