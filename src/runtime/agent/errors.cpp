#include "runtime/agent/errors.h"

#include <string>

namespace tether::runtime::agent {

namespace {
class agent_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "agent"; }
  std::string message(int c) const override {
    switch (static_cast<agent_errc>(c)) {
      case agent_errc::unknown_kind:
        return "unknown agent kind";
      case agent_errc::not_found:
        return "agent program not found";
      case agent_errc::version_timed_out:
        return "the agent program did not print its version in time";
      case agent_errc::version_failed:
        return "the agent program's --version failed";
      case agent_errc::no_version:
        return "no version found";
      case agent_errc::io:
        return "cannot prepare the agent's files";
      case agent_errc::protocol:
        return "the agent's output is not its protocol";
      case agent_errc::rpc_closed:
        return "the agent closed the connection";
      case agent_errc::rpc_failed:
        return "the agent answered with an error";
      case agent_errc::resume_refused:
        return "the agent cannot resume that session";
      case agent_errc::socket_path_too_long:
        return "the socket path is too long";
      case agent_errc::not_a_socket:
        return "the socket path is taken by something that is not a socket";
      case agent_errc::address_in_use:
        return "another process serves the socket";
      case agent_errc::listen_failed:
        return "cannot listen on the socket";
      case agent_errc::already_started:
        return "the bridge was already started";
      case agent_errc::bridge_unreachable:
        return "the tool bridge cannot be reached";
      case agent_errc::bad_reply:
        return "the tool bridge sent a malformed reply";
    }
    return "unknown agent error";
  }
};
}  // namespace

const std::error_category& agent_category() {
  static const agent_category_impl c;
  return c;
}

}  // namespace tether::runtime::agent
