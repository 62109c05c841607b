#include "env/errors.h"

#include <string>

namespace tether::env {

namespace {
class env_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "env"; }
  std::string message(int c) const override {
    switch (static_cast<env_errc>(c)) {
      case env_errc::unreachable: return "the environment cannot be reached";
      case env_errc::refused: return "the environment refused the connection";
      case env_errc::not_found: return "not found in the environment";
      case env_errc::lost: return "the lease was lost";
      case env_errc::failed: return "the remote operation failed";
      case env_errc::no_space: return "the environment is out of disk space";
      case env_errc::invalid: return "invalid environment setting";
    }
    return "unknown environment error";
  }
};
}  // namespace

const std::error_category& env_category() {
  static const env_category_impl c;
  return c;
}

}  // namespace tether::env
