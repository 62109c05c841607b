#include "http/server_errors.h"

#include <string>

namespace tether::http {

namespace {

class server_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "http"; }
  std::string message(int c) const override {
    switch (static_cast<server_errc>(c)) {
      case server_errc::invalid_listen_address:
        return "the listen address must be HOST:PORT";
      case server_errc::address_in_use:
        return "the address is already in use";
      case server_errc::listen_failed:
        return "cannot listen on the address";
      case server_errc::already_started:
        return "the server is already started";
      case server_errc::tls_failed:
        return "TLS setup failed";
    }
    return "unknown http error";
  }
};

}  // namespace

const std::error_category& server_category() {
  static const server_category_impl c;
  return c;
}

}  // namespace tether::http
