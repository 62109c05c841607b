// Error codes of the agent layer (the tool bridge and its clients).
#pragma once

#include <system_error>

namespace tether::runtime::agent {

enum class agent_errc {
  socket_path_too_long = 1,  // the socket's path does not fit sockaddr_un's sun_path
  not_a_socket,              // something other than a socket sits at the socket's path
  address_in_use,            // a live process already serves the socket's path
  listen_failed,             // the directory, bind, chmod or listen failed (the message says which)
  already_started,           // start() was called twice
  bridge_unreachable,        // a client cannot connect to the bridge or lost the connection
  bad_reply,                 // a client got a line that is not a reply of the protocol
};

const std::error_category& agent_category();
inline std::error_code make_error_code(agent_errc e) { return {static_cast<int>(e), agent_category()}; }

}  // namespace tether::runtime::agent

template <>
struct std::is_error_code_enum<tether::runtime::agent::agent_errc> : std::true_type {};
