// opencode — what the two opencode dialects share: `opencode run` one
// process per turn (dialect.h, make_opencode_run) and `opencode serve` kept
// running (warm_dialect.h, make_opencode_serve).
//
//   auto env = opencode::write_config(in);   // in.home/opencode.json; the variables that point at it
//
// The configuration: a provider `tether` whose package speaks the profile's
// wire format (chat, responses, messages: all three are bundled, so nothing
// is fetched at run time), the key read from the agent's environment
// ({env:TETHER_MODEL_KEY}, never written), the model as `tether/MODEL` (and
// as the small model, so title or summary requests reach the same server),
// the permissions of the profile, and the MCP server of Tether's tools when
// the launch has one. The variables also turn off the update check, the
// model catalogue fetch and sharing, which cost seconds offline.
//
// Permissions (agent_permissions) as opencode rules:
//   approve_all    edit, bash, webfetch allowed
//   approve_reads  edit and bash denied; reads and webfetch allowed
//   deny_all       edit, bash and webfetch denied
// Anything opencode still asks about (external_directory, doom_loop, …)
// reaches the warm dialect as a permission.asked event; reply() says what to
// answer.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "runtime/agent/settings.h"
#include "runtime/agent/dialect.h"
#include "util/result.h"

namespace tether::runtime::agent::opencode {

// The variable that carries the model key.
inline constexpr std::string_view key_variable = "TETHER_MODEL_KEY";

// The configuration document for `in` (in.settings must be set).
boost::json::object config(const launch_input& in);

// Writes config(in) to in.home/opencode.json (0600); the environment that
// makes opencode read it.
result<std::map<std::string, std::string>> write_config(const launch_input& in);

// What to answer opencode's permission request for `permission` (its kind:
// "read", "edit", "bash", "external_directory", …) under `p`: "once" or
// "reject" (the replies of POST /permission/{id}/reply).
std::string_view reply(agent_permissions p, std::string_view permission);

// The parts both print (opencode's Part objects, the same in `run`'s JSON
// lines and `serve`'s message.part.updated events):
// A step-finish part's tokens {input, output, reasoning, cache {read,
// write}} and cost: input counts the cached tokens too.
turn_usage step_usage(const boost::json::object& part);
// A tool part {callID, tool, state {status, input, output | error}}:
// tool_start the first time a call is seen running or done, tool_end the
// first time it is seen completed or failed (`seen` remembers which).
// Tether's own question tool is left out (the bridge records it).
struct tool_calls_seen {
  std::set<std::string> started;
  std::set<std::string> ended;
};
void tool_events(const boost::json::object& part, tool_calls_seen& seen, std::vector<agent_event>& out);
// The text of an error object {name, data {message}}.
std::string error_text(const boost::json::object& error);

}  // namespace tether::runtime::agent::opencode
