// Error codes of the agent layer (src/runtime/agent): finding the agent
// programs, running them, and the tool bridge of their MCP server.
#pragma once

#include <system_error>

namespace tether::runtime::agent {

enum class agent_errc {
  // Finding the programs (programs.h).
  unknown_kind = 1,   // not one of the agent kinds programs.h lists
  not_found,          // no executable binary where the search looked (the message lists where)
  version_timed_out,  // `PROGRAM --version` did not finish within its limit (its group was killed)
  version_failed,     // `PROGRAM --version` exited unsuccessfully (the message has its status and first line)
  no_version,         // the program's output, or its package.json, holds nothing that reads as a version
  // Running them (agent_runtime.h).
  io,        // the agent's home or configuration cannot be written
  protocol,  // the agent printed something that is not its output format
  // Speaking a warm agent's protocol (warm_dialect.h, json_rpc.h).
  rpc_closed,      // the agent ended its output (it exited or closed stdout); pending calls fail with it
  rpc_failed,      // the agent answered a request with an error (the message has its code and text)
  resume_refused,  // the agent does not know the session it was asked to resume
  // The tool bridge (tool_bridge.h).
  socket_path_too_long,  // the socket's path does not fit sockaddr_un's sun_path
  not_a_socket,          // something other than a socket sits at the socket's path
  address_in_use,        // a live process already serves the socket's path
  listen_failed,         // the directory, bind, chmod or listen failed (the message says which)
  already_started,       // start() was called twice
  bridge_unreachable,    // a client cannot connect to the bridge or lost the connection
  bad_reply,             // a client got a line that is not a reply of the protocol
};

const std::error_category& agent_category();
inline std::error_code make_error_code(agent_errc e) { return {static_cast<int>(e), agent_category()}; }

}  // namespace tether::runtime::agent

template <>
struct std::is_error_code_enum<tether::runtime::agent::agent_errc> : std::true_type {};
