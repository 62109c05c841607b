#include "work/errors.h"

#include <string>

namespace tether::work {

namespace {
class work_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "work"; }
  std::string message(int c) const override {
    switch (static_cast<work_errc>(c)) {
      case work_errc::invalid_spec:
        return "invalid workspace spec";
      case work_errc::not_empty:
        return "the workspace's directory is not empty";
      case work_errc::checkout_failed:
        return "checkout failed";
      case work_errc::command_failed:
        return "setup command failed";
      case work_errc::io:
        return "I/O error";
    }
    return "unknown work error";
  }
};
}  // namespace

const std::error_category& work_category() {
  static const work_category_impl c;
  return c;
}

}  // namespace tether::work
