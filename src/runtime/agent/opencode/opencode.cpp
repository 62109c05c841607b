// The configuration both opencode dialects write (opencode.h).
#include "runtime/agent/opencode/opencode.h"

#include <algorithm>
#include <array>

#include <boost/json/serialize.hpp>

#include "model/reported.h"
#include "runtime/agent/json_lines.h"

namespace tether::runtime::agent::opencode {

namespace json = boost::json;

namespace {

std::string_view package_for(std::string_view wire) {
  if (wire == "responses") return "@ai-sdk/openai";
  if (wire == "messages") return "@ai-sdk/anthropic";
  return "@ai-sdk/openai-compatible";
}

json::object permissions_for(agent_permissions p) {
  const char* edit = p == agent_permissions::approve_all ? "allow" : "deny";
  const char* fetch = p == agent_permissions::deny_all ? "deny" : "allow";
  return json::object{{"edit", edit}, {"bash", edit}, {"webfetch", fetch}};
}

// opencode's permission kinds that only read (the workspace or the web).
constexpr std::array<std::string_view, 9> read_kinds = {"read",       "glob",      "grep",     "list",    "lsp",
                                                        "codesearch", "websearch", "webfetch", "todoread"};

}  // namespace

json::object config(const launch_input& in) {
  const auto& model = in.endpoint.model;
  json::object provider{{"npm", package_for(in.settings->wire)},
                        {"options", json::object{{"baseURL", in.endpoint.base_url},
                                                 {"apiKey", "{env:" + std::string(key_variable) + "}"}}},
                        {"models", json::object{{model, json::object{}}}}};
  json::object c{{"provider", json::object{{"tether", std::move(provider)}}},
                 {"model", "tether/" + model},
                 {"small_model", "tether/" + model},
                 {"autoupdate", false},
                 {"share", "disabled"},
                 {"permission", permissions_for(in.settings->permissions)}};
  if (in.mcp) {
    json::object env;
    for (const auto& [k, v] : in.mcp->env) env[k] = v;
    c["mcp"] = json::object{{"tether", json::object{{"type", "local"},
                                                    {"command", json::array{in.mcp->program.string(), "mcp"}},
                                                    {"environment", std::move(env)},
                                                    {"enabled", true}}}};
  }
  return c;
}

result<std::map<std::string, std::string>> write_config(const launch_input& in) {
  const auto path = in.home / "opencode.json";
  TETHER_TRY(write_home_file(in, "opencode.json", json::serialize(config(in))));
  return std::map<std::string, std::string>{{"OPENCODE_CONFIG", path.string()},
                                            {"OPENCODE_DISABLE_MODELS_FETCH", "1"},
                                            {"OPENCODE_DISABLE_AUTOUPDATE", "1"},
                                            {"OPENCODE_DISABLE_SHARE", "1"}};
}

std::string_view reply(agent_permissions p, std::string_view permission) {
  switch (p) {
    case agent_permissions::approve_all:
      return "once";
    case agent_permissions::approve_reads:
      return std::ranges::find(read_kinds, permission) != read_kinds.end() ? "once" : "reject";
    case agent_permissions::deny_all:
      return "reject";
  }
  return "reject";
}

turn_usage step_usage(const json::object& part) {
  turn_usage u;
  if (const auto* tokens = object_at(part, "tokens")) {
    std::int64_t read = 0;
    std::int64_t write = 0;
    if (const auto* cache = object_at(*tokens, "cache")) {
      read = model::token_count(*cache, "read");
      write = model::token_count(*cache, "write");
    }
    u.usage.input_tokens = model::token_count(*tokens, "input") + read + write;
    u.usage.cached_input_tokens = read;
    u.usage.output_tokens = model::token_count(*tokens, "output") + model::token_count(*tokens, "reasoning");
  }
  u.agent_cost_usd = model::cost_at(part, "cost");
  return u;
}

void tool_events(const json::object& part, tool_calls_seen& seen, std::vector<agent_event>& out) {
  const auto id = str(part, "callID");
  const auto name = str(part, "tool");
  if (dialect::is_tether_tool(name)) return;
  const auto* state = object_at(part, "state");
  if (state == nullptr) return;
  const auto status = str(*state, "status");
  if (status == "pending") return;  // its input is still streaming
  if (seen.started.insert(id).second) {
    const auto* input = state->if_contains("input");
    out.emplace_back(tool_start{id, name, input ? *input : json::value(json::object{})});
  }
  if (status != "completed" && status != "error") return;
  if (!seen.ended.insert(id).second) return;
  if (status == "completed")
    out.emplace_back(tool_end{id, true, str(*state, "output")});
  else
    out.emplace_back(tool_end{id, false, str(*state, "error")});
}

std::string error_text(const json::object& error) {
  std::string message;
  if (const auto* data = object_at(error, "data")) message = str(*data, "message");
  if (message.empty()) message = str(error, "name");
  return message.empty() ? std::string("opencode reported an error") : message;
}

}  // namespace tether::runtime::agent::opencode
