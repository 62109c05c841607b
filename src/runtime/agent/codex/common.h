// codex_common — what codex exec (codex_exec.cpp) and codex app-server
// (codex_app_server.cpp) share: the agent's configuration.
//
//   auto home = write_codex_home(in, "never");   // in.home/.codex/config.toml
//   l.env["CODEX_HOME"] = home->string();
//
// config.toml names a custom provider "tether" for in.endpoint (the built-in
// `openai` provider ignores base URLs and hangs offline), wire_api
// "responses", the profile's model, the sandbox for in.settings->permissions
// (codex_sandbox), the given approval policy, one retry for requests and
// streams, no update check and no analytics, and (with in.mcp) the MCP server
// of Tether's tools, `tether mcp` with its environment.
//
// Errors: agent_errc::io when the file cannot be written.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "runtime/agent/settings.h"
#include "runtime/agent/dialect.h"
#include "util/result.h"

namespace tether::runtime::agent {

// codex's sandbox_mode for a profile's permissions: approve-all
// "danger-full-access", the others "read-only".
std::string codex_sandbox(agent_permissions p);

// The text of config.toml; approval_policy is codex's ("never", "untrusted",
// "on-request").
std::string codex_config_toml(const launch_input& in, std::string_view approval_policy);

// Writes in.home/.codex/config.toml (0600); returns the directory, CODEX_HOME.
result<std::filesystem::path> write_codex_home(const launch_input& in, std::string_view approval_policy);

}  // namespace tether::runtime::agent
