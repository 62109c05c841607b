// opencode's configuration (opencode_common.h).
#include "runtime/agent/opencode_common.h"

namespace tether::runtime::agent {

namespace json = boost::json;

namespace {

std::string_view package_for(std::string_view wire) {
  if (wire == "responses") return "@ai-sdk/openai";
  if (wire == "messages") return "@ai-sdk/anthropic";
  return "@ai-sdk/openai-compatible";
}

json::object permissions_for(config::agent_permissions p) {
  using config::agent_permissions;
  const char* edit = p == agent_permissions::approve_all ? "allow" : "deny";
  const char* fetch = p == agent_permissions::deny_all ? "deny" : "allow";
  return json::object{{"edit", edit}, {"bash", edit}, {"webfetch", fetch}};
}

}  // namespace

json::object opencode_config(const launch_input& in) {
  const auto& model = in.endpoint.model;
  json::object provider{
      {"npm", package_for(in.settings->wire)},
      {"options", json::object{{"baseURL", in.endpoint.base_url}, {"apiKey", "{env:TETHER_MODEL_KEY}"}}},
      {"models", json::object{{model, json::object{}}}}};
  json::object config{{"provider", json::object{{"tether", std::move(provider)}}},
                      {"model", "tether/" + model},
                      {"small_model", "tether/" + model},
                      {"autoupdate", false},
                      {"share", "disabled"},
                      {"permission", permissions_for(in.settings->permissions)}};
  if (in.mcp) {
    json::object env;
    for (const auto& [k, v] : in.mcp->env) env[k] = v;
    config["mcp"] = json::object{{"tether", json::object{{"type", "local"},
                                                         {"command", json::array{in.mcp->program.string(), "mcp"}},
                                                         {"environment", std::move(env)},
                                                         {"enabled", true}}}};
  }
  return config;
}

}  // namespace tether::runtime::agent
