// The runtime kinds: a descriptor for each name of model/runtime_kinds.h.
#include <algorithm>

#include "model/runtime_kinds.h"
#include "runtime/agent/kind.h"
#include "runtime/kind.h"
#include "runtime/native/kind.h"

namespace tether::runtime {

const std::vector<kind>& kinds() {
  using agent::acp_agent;
  using agent::model_home;
  namespace name = model::runtime_kind;
  static const std::vector<kind> all{
      // Tether's own agent loop over a provider's API.
      native::native_kind(name::native),
      // An agent program per turn.
      agent::per_turn_kind(name::codex_exec, agent::make_codex_exec, {.home = model_home::openai}),
      agent::per_turn_kind(name::claude_print, agent::make_claude_print, {.home = model_home::anthropic}),
      agent::per_turn_kind(name::opencode_run, agent::make_opencode_run, {.wire = true, .home = model_home::by_wire}),
      // A warm agent process per session, kept between turns.
      agent::warm_kind(name::codex, agent::make_codex_app_server, {.warm = true, .home = model_home::openai}),
      agent::warm_kind(name::claude, agent::make_claude_stream, {.warm = true, .home = model_home::anthropic}),
      agent::warm_kind(name::opencode, agent::make_opencode_serve,
                       {.warm = true, .wire = true, .home = model_home::by_wire}),
      // The Agent Client Protocol: any agent (its `command`), or one Tether knows.
      agent::acp_kind(name::acp, acp_agent::any, {.warm = true, .home = model_home::own, .command_required = true}),
      agent::acp_kind(name::acp_codex, acp_agent::codex, {.warm = true, .home = model_home::openai}),
      agent::acp_kind(name::acp_claude, acp_agent::claude, {.warm = true, .home = model_home::anthropic}),
      agent::acp_kind(name::acp_opencode, acp_agent::opencode,
                      {.warm = true, .wire = true, .home = model_home::by_wire}),
  };
  return all;
}

const kind* find_kind(std::string_view name) {
  const auto& all = kinds();
  const auto it = std::find_if(all.begin(), all.end(), [&](const kind& k) { return k.config.name == name; });
  return it == all.end() ? nullptr : &*it;
}

std::span<const config::kind_keys> config_kinds() {
  static const std::vector<config::kind_keys> keys = [] {
    std::vector<config::kind_keys> out;
    for (const auto& k : kinds()) out.push_back(k.config);
    return out;
  }();
  return keys;
}

}  // namespace tether::runtime
