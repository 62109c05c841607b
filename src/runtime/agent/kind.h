// The agent-program kinds' descriptors (runtime/kind.h): their settings
// (agent/settings.h) and factories that build an agent runtime, per turn
// (agent_runtime.h) or warm (warm_runtime.h), from a profile and the node's
// host: the program (programs.h: the profile's command, else the installed
// one), the model endpoint (the built-in scripted model's, or the profile's
// behind the model relay), the tool bridge, and the contain sandbox's view
// of the host (not the server's secrets nor other sessions' workspaces).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "runtime/agent/dialect.h"
#include "runtime/agent/settings.h"
#include "runtime/agent/warm_dialect.h"
#include "runtime/kind.h"

namespace tether::runtime::agent {

runtime::kind per_turn_kind(std::string_view name, std::unique_ptr<dialect> (*make)(), agent_kind_traits traits);
runtime::kind warm_kind(std::string_view name, std::unique_ptr<warm_dialect> (*make)(), agent_kind_traits traits);
runtime::kind acp_kind(std::string_view name, acp_agent agent, agent_kind_traits traits);

}  // namespace tether::runtime::agent
