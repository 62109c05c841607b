// What the opencode dialects share (opencode run, opencode acp): opencode's
// configuration for a launch, as JSON.
//
// A provider `tether` whose package speaks the profile's wire format (all
// three are bundled, so nothing is fetched), the key read from the agent's
// environment ({env:TETHER_MODEL_KEY}, never written), the permissions, the
// MCP server of Tether's tools; autoupdate and sharing off. The caller hands
// it to opencode as a file (OPENCODE_CONFIG) or inline
// (OPENCODE_CONFIG_CONTENT).
#pragma once

#include <boost/json/object.hpp>

#include "runtime/agent/dialect.h"

namespace tether::runtime::agent {

boost::json::object opencode_config(const launch_input& in);

}  // namespace tether::runtime::agent
