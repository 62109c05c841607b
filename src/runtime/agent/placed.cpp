#include "runtime/agent/placed.h"

#include <spdlog/spdlog.h>

#include "runtime/agent/agent_env.h"
#include "runtime/agent/bridge/tool_bridge.h"
#include "runtime/agent/relay/model_relay.h"

namespace tether::runtime::agent {

session::task<result<void>> reach_relay(std::shared_ptr<session::turn_place> place, const agent_options* o,
                                        bool relayed, launch_input* in) {
  if (!relayed || o->relay == nullptr) co_return ok();
  auto there = co_await place->reach_port("127.0.0.1", o->relay->port());
  if (!there)
    co_return tether::error(there.error().code, "the model relay cannot be reached from " + place->environment() +
                                                 ": " + there.error().message);
  in->endpoint.base_url = with_authority(in->endpoint.base_url, *there);
  co_return ok();
}

session::task<std::optional<mcp_server>> placed_tools(std::shared_ptr<session::turn_place> place, const agent_options* o,
                                                      std::string token, std::string who) {
  std::string path = o->bridge->socket_path().string();
  auto there = co_await place->reach_socket(std::move(path));
  std::string address;
  if (there) {
    address = *there;
  } else {
    // An environment without socket forwarding (a Daytona sandbox) reaches
    // a port of this machine instead: the bridge's TCP door, forwarded there.
    const std::string no_socket = there.error().message;
    auto port = o->bridge->tcp_port();
    if (!port) {
      spdlog::warn("agent: {} in {} runs without Tether's tools: {}; {}", who, place->environment(), no_socket,
                   port.error().message);
      co_return std::nullopt;
    }
    std::string loopback = "127.0.0.1";
    auto reached = co_await place->reach_port(std::move(loopback), *port);
    if (!reached) {
      spdlog::warn("agent: {} in {} runs without Tether's tools: {}; {}", who, place->environment(), no_socket,
                   reached.error().message);
      co_return std::nullopt;
    }
    address = "tcp:" + *reached;
  }
  co_return mcp_server{"tether", {{"TETHER_TOOLS_SOCKET", address}, {"TETHER_RUN_TOKEN", std::move(token)}}};
}

session::task<result<void>> put_home_files(std::shared_ptr<session::turn_place> place, std::filesystem::path home,
                                           std::vector<std::pair<std::string, std::string>> files) {
  for (auto& [rel, content] : files) {
    auto put = co_await place->put_file((home / rel).string(), std::move(content), 0600);
    if (!put)
      co_return tether::error(put.error().code,
                           "cannot write " + rel + " in " + place->environment() + ": " + put.error().message);
  }
  co_return ok();
}

}  // namespace tether::runtime::agent
