// Error codes of the HTTP server shell (http/server.h, http/server_tls.h).
#pragma once

#include <system_error>

namespace tether::http {

enum class server_errc {
  invalid_listen_address = 1,  // not HOST:PORT with a numeric address (or "localhost") and a port
  address_in_use,              // another socket already listens on the address
  listen_failed,               // the socket could not be opened, bound or put in listening state
  already_started,             // start() called twice
  tls_failed,                  // a certificate or key cannot be made, read or used (the message says which)
};

const std::error_category& server_category();
inline std::error_code make_error_code(server_errc e) { return {static_cast<int>(e), server_category()}; }

}  // namespace tether::http

template <>
struct std::is_error_code_enum<tether::http::server_errc> : std::true_type {};
