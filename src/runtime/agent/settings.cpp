#include "runtime/agent/settings.h"

#include <fmt/format.h>

namespace tether::runtime::agent {

std::string_view to_string(agent_network n) { return n == agent_network::full ? "full" : "relay-only"; }

std::string_view to_string(agent_permissions p) {
  switch (p) {
    case agent_permissions::approve_all:
      return "approve-all";
    case agent_permissions::approve_reads:
      return "approve-reads";
    case agent_permissions::deny_all:
      return "deny-all";
  }
  return "approve-all";
}

namespace {

result<void> read(config::profile& p, const config::table_reader& t, const agent_kind_traits& traits) {
  auto& a = p.kind_settings<agent_settings>();
  // The agent's provider follows from the program (and its wire); only the
  // scripted model can be named.
  if (!p.provider.empty() && p.provider != "scripted")
    return t.bad("provider",
                 fmt::format(": \"{}\": an agent profile takes only \"scripted\" (its provider follows from "
                             "the program; base_url points it elsewhere)",
                             p.provider));
  auto command = t.text("command", a.command);
  if (!command) return command.error();
  a.command = *command;
  if (traits.command_required && a.command.empty())
    return t.bad("command", fmt::format(": runtime \"{}\" needs the ACP agent's command", p.runtime));
  auto wire = t.text("wire", a.wire);
  if (!wire) return wire.error();
  a.wire = *wire;
  if (!a.wire.empty() && a.wire != "chat" && a.wire != "responses" && a.wire != "messages")
    return t.bad("wire", fmt::format(": \"{}\" is not a wire format (chat, responses, messages)", a.wire));
  auto perms = t.text("permissions", std::string(to_string(a.permissions)));
  if (!perms) return perms.error();
  if (*perms == "approve-all") {
    a.permissions = agent_permissions::approve_all;
  } else if (*perms == "approve-reads") {
    a.permissions = agent_permissions::approve_reads;
  } else if (*perms == "deny-all") {
    a.permissions = agent_permissions::deny_all;
  } else {
    return t.bad("permissions", fmt::format(": \"{}\" is not one of approve-all, approve-reads, deny-all", *perms));
  }
  auto network = t.text("network", std::string(to_string(a.network)));
  if (!network) return network.error();
  if (*network == "relay-only") {
    a.network = agent_network::relay_only;
  } else if (*network == "full") {
    a.network = agent_network::full;
  } else {
    return t.bad("network", fmt::format(": \"{}\" is not one of relay-only, full", *network));
  }
  auto args = t.strings("args");
  if (!args) return args.error();
  a.args = std::move(*args);
  auto set_env = t.variables("set_env");
  if (!set_env) return set_env.error();
  a.set_env = std::move(*set_env);
  auto idle = t.integer("idle_timeout_ms", a.idle_timeout_ms, 100);
  if (!idle) return idle.error();
  a.idle_timeout_ms = *idle;
  // Only the warm kinds take these (their key sets refuse them elsewhere).
  auto keep = t.integer("keep_alive_ms", a.keep_alive_ms, 100);
  if (!keep) return keep.error();
  a.keep_alive_ms = *keep;
  auto most = t.integer("max_processes", a.max_processes, 1);
  if (!most) return most.error();
  a.max_processes = *most;
  auto start = t.integer("start_timeout_ms", a.start_timeout_ms, 100);
  if (!start) return start.error();
  a.start_timeout_ms = *start;
  return ok();
}

std::string official_base_url(const config::profile& p, model_home home) {
  constexpr std::string_view openai = "https://api.openai.com/v1";
  constexpr std::string_view anthropic = "https://api.anthropic.com";
  switch (home) {
    case model_home::openai:
      return std::string(openai);
    case model_home::anthropic:
      return std::string(anthropic);
    case model_home::by_wire:
      return p.kind_settings<agent_settings>().wire == "messages" ? std::string(anthropic) + "/v1"
                                                                  : std::string(openai);
    case model_home::own:
      return {};
  }
  return {};
}

}  // namespace

config::kind_keys agent_keys(std::string name, agent_kind_traits traits) {
  std::vector<std::string> keys{"command", "model",   "base_url",        "api_key_env", "permissions", "args",
                                "env",     "set_env", "idle_timeout_ms", "provider",    "network",     "ca_file"};
  if (traits.warm) {
    keys.emplace_back("keep_alive_ms");
    keys.emplace_back("max_processes");
    keys.emplace_back("start_timeout_ms");
  }
  if (traits.wire) keys.emplace_back("wire");
  return {std::move(name), std::move(keys),
          [traits](config::profile& p, const config::table_reader& t) { return read(p, t, traits); },
          [home = traits.home](const config::profile& p) { return official_base_url(p, home); }};
}

}  // namespace tether::runtime::agent
