// Error codes of the mock layer (the scripted model server).
#pragma once

#include <system_error>

namespace tether::mock {

enum class mock_errc {
  invalid_listen_address = 1,  // --listen is not HOST:PORT with a numeric address and port
  address_in_use,              // another socket already listens on the address
  listen_failed,               // the socket could not be opened, bound or put in listening state
  record_failed,               // the --record file cannot be opened for appending
  already_started,             // start() called twice
  invalid_request,             // a model request has the wrong shape (the message says which field)
};

const std::error_category& mock_category();
inline std::error_code make_error_code(mock_errc e) { return {static_cast<int>(e), mock_category()}; }

}  // namespace tether::mock

template <>
struct std::is_error_code_enum<tether::mock::mock_errc> : std::true_type {};
