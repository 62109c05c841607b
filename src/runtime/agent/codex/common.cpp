// codex's configuration, shared by codex exec and codex app-server (codex_common.h).
#include "runtime/agent/codex/common.h"

#include "runtime/agent/json_lines.h"

namespace tether::runtime::agent {

std::string codex_sandbox(agent_permissions p) {
  switch (p) {
    case agent_permissions::approve_all:
      return "danger-full-access";
    case agent_permissions::approve_reads:
    case agent_permissions::deny_all:
      return "read-only";
  }
  return "read-only";
}

std::string codex_config_toml(const launch_input& in, std::string_view approval_policy) {
  std::string t;
  t += "model = " + toml_string(in.endpoint.model) + "\n";
  t += "model_provider = \"tether\"\n";
  t += "approval_policy = " + toml_string(approval_policy) + "\n";
  t += "sandbox_mode = " + toml_string(codex_sandbox(in.settings->permissions)) + "\n";
  t += "check_for_update_on_startup = false\n";
  t += "\n[analytics]\nenabled = false\n";
  t += "\n[model_providers.tether]\nname = \"tether\"\n";
  t += "base_url = " + toml_string(in.endpoint.base_url) + "\n";
  if (!in.endpoint.key_variable.empty()) t += "env_key = " + toml_string(in.endpoint.key_variable) + "\n";
  t += "wire_api = \"responses\"\nrequest_max_retries = 1\nstream_max_retries = 1\n";
  if (in.mcp) {
    t += "\n[mcp_servers.tether]\ncommand = " + toml_string(in.mcp->program.string()) + "\nargs = [\"mcp\"]\n";
    t += "\n[mcp_servers.tether.env]\n";
    for (const auto& [k, v] : in.mcp->env) t += k + " = " + toml_string(v) + "\n";
  }
  return t;
}

result<std::filesystem::path> write_codex_home(const launch_input& in, std::string_view approval_policy) {
  auto codex_home = in.home / ".codex";
  TETHER_TRY(write_home_file(in, ".codex/config.toml", codex_config_toml(in, approval_policy)));
  return codex_home;
}

}  // namespace tether::runtime::agent
