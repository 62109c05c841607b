// Error codes of the qualification harness (`tether e2e`).
#pragma once

#include <system_error>

namespace tether::e2e {

enum class e2e_errc {
  invalid_definition = 1,  // a suite, profile or environment file is wrong (the message names file and field)
  not_found,               // a file or directory that should exist does not
  bad_record,              // a result, campaign or history file is not the expected schema
  io,                      // a file cannot be read or written, a tool (Chromium) failed
  infrastructure,          // the harness could not set a cell up (port, process start, deadline)
  api,                     // the server answered a step with an error
  interrupted,             // Ctrl-C
};

const std::error_category& e2e_category();
inline std::error_code make_error_code(e2e_errc e) { return {static_cast<int>(e), e2e_category()}; }

}  // namespace tether::e2e

template <>
struct std::is_error_code_enum<tether::e2e::e2e_errc> : std::true_type {};
