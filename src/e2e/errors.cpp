#include "e2e/errors.h"

#include <string>

namespace tether::e2e {

namespace {
class e2e_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "e2e"; }
  std::string message(int c) const override {
    switch (static_cast<e2e_errc>(c)) {
      case e2e_errc::invalid_definition:
        return "invalid definition";
      case e2e_errc::not_found:
        return "not found";
      case e2e_errc::bad_record:
        return "unreadable record";
      case e2e_errc::io:
        return "I/O error";
      case e2e_errc::infrastructure:
        return "harness infrastructure failure";
      case e2e_errc::api:
        return "API error";
      case e2e_errc::interrupted:
        return "interrupted";
    }
    return "unknown e2e error";
  }
};
}  // namespace

const std::error_category& e2e_category() {
  static const e2e_category_impl c;
  return c;
}

}  // namespace tether::e2e
