// Error codes of the process layer.
#pragma once

#include <system_error>

namespace tether::process {

enum class process_errc {
  spawn_failed = 1,  // the child could not be set up or exec'd (the message says which step and why)
  gate_closed,       // the gated child is gone before its gate was opened
  line_too_long,     // a line exceeded the reader's byte limit (overlong_line::fail)
  not_a_pipe,        // a read or write on a stream the options did not make a pipe
  io,                // a read or write on a pipe failed
};

const std::error_category& process_category();
inline std::error_code make_error_code(process_errc e) { return {static_cast<int>(e), process_category()}; }

}  // namespace tether::process

template <>
struct std::is_error_code_enum<tether::process::process_errc> : std::true_type {};
