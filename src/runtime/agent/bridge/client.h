// bridge_client — the blocking client side of the tool bridge, for `tether
// mcp` (a small child process of the agent, where blocking I/O is simplest).
//
//   bridge_client client(getenv("TETHER_TOOLS_SOCKET"), getenv("TETHER_RUN_TOKEN"));
//   auto tools = client.list();                    // the run's tools, or refused
//   auto reply = client.call("ask_user", args);    // the tool's reply, or refused
//
// The bridge is a Unix socket's path, or "tcp:HOST:PORT" for an agent in an
// environment that reaches this machine over TCP only (the bridge's
// tcp_port(), forwarded there: tcp_door.h).
//
// Each request opens its own connection (a Unix socket connect costs next to
// nothing), so there is no connection to go stale between an agent's calls
// and nothing to retry: a call is sent at most once. A call waits as long as
// its tool runs; no timeout here (the agent has its own).
//
// Errors: agent_errc::bridge_unreachable (cannot connect, or the connection
// ended before a reply: the bridge stopped), bad_reply (the line that came
// back is not a reply, or is over max_reply_bytes). A refusal (bad token,
// closed run, unknown tool) is an answer, returned as protocol::refused.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <variant>
#include <vector>

#include <boost/json/object.hpp>

#include "runtime/agent/bridge/protocol.h"
#include "runtime/agent/types.h"
#include "util/result.h"

namespace tether::runtime::agent {

class bridge_client {
 public:
  static constexpr std::size_t max_reply_bytes = 64U << 20U;

  bridge_client(std::filesystem::path socket_path, std::string token);

  result<std::variant<std::vector<tool_spec>, protocol::refused>> list() const;
  result<std::variant<tool_reply, protocol::refused>> call(std::string tool, boost::json::object arguments) const;

 private:
  // Sends one request line and returns the reply line (without '\n').
  [[nodiscard]] result<std::string> exchange(const std::string& request_line) const;

  std::filesystem::path socket_path_;
  std::string token_;
};

}  // namespace tether::runtime::agent
