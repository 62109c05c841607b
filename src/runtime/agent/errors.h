// Error codes of the agent runtimes' layer (src/runtime/agent).
#pragma once

#include <system_error>

namespace tether::runtime::agent {

enum class agent_errc {
  unknown_kind = 1,   // not one of the agent kinds programs.h lists
  not_found,          // no executable binary where the search looked (the message lists where)
  version_timed_out,  // `PROGRAM --version` did not finish within its limit (its group was killed)
  version_failed,     // `PROGRAM --version` exited unsuccessfully (the message has its status and first line)
  no_version,         // the program's output, or its package.json, holds nothing that reads as a version
};

const std::error_category& agent_category();
inline std::error_code make_error_code(agent_errc e) { return {static_cast<int>(e), agent_category()}; }

}  // namespace tether::runtime::agent

template <>
struct std::is_error_code_enum<tether::runtime::agent::agent_errc> : std::true_type {};
