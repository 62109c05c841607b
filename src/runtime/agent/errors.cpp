#include "runtime/agent/errors.h"

#include <string>

namespace tether::runtime::agent {

namespace {
class agent_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "agent"; }
  std::string message(int c) const override {
    switch (static_cast<agent_errc>(c)) {
      case agent_errc::unknown_kind: return "unknown agent kind";
      case agent_errc::not_found: return "agent program not found";
      case agent_errc::version_timed_out: return "the agent program did not print its version in time";
      case agent_errc::version_failed: return "the agent program's --version failed";
      case agent_errc::no_version: return "no version found";
    }
    return "unknown agent error";
  }
};
}  // namespace

const std::error_category& agent_category() {
  static const agent_category_impl c;
  return c;
}

}  // namespace tether::runtime::agent
