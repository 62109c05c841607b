#include "mock/errors.h"

#include <string>

namespace tether::mock {

namespace {

class mock_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "mock"; }
  std::string message(int c) const override {
    switch (static_cast<mock_errc>(c)) {
      case mock_errc::invalid_listen_address:
        return "the listen address must be HOST:PORT";
      case mock_errc::address_in_use:
        return "the address is already in use";
      case mock_errc::listen_failed:
        return "cannot listen on the address";
      case mock_errc::record_failed:
        return "cannot open the record file";
      case mock_errc::already_started:
        return "the server is already started";
      case mock_errc::invalid_request:
        return "invalid model request";
    }
    return "unknown mock error";
  }
};

}  // namespace

const std::error_category& mock_category() {
  static const mock_category_impl c;
  return c;
}

}  // namespace tether::mock
