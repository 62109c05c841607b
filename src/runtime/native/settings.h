// The native kind's profile settings (config::profile::settings of a
// `runtime = "native"` profile) and how the configuration reads them:
//
//   [profiles.default]
//   runtime        = "native"
//   provider       = "openai-chat"       # "openai-responses" | "anthropic" | "scripted"
//   max_steps      = 50                  # model requests per turn at most
//   context_window = 128000              # tokens; compaction keeps requests under it
//   instructions   = "…"                 # added to the system prompt (a change resets a task's session)
//   sandbox        = "workspace-write"   # the bash tool's: "workspace-write" | "read-only" | "off"
//   network        = false               # whether bash may use the network (inside the sandbox)
//
// besides the common keys (base_url, model, api_key_env, ca_file, env:
// config/config.h). The official base URL is OpenAI's, or Anthropic's for
// provider = "anthropic".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "config/config.h"
#include "process/sandbox.h"
#include "runtime/native/providers/wire_api.h"

namespace tether::runtime::native {

struct native_settings {
  wire_api provider = wire_api::openai_chat;
  int max_steps = 50;
  std::int64_t context_window = 128'000;
  std::string instructions;
  process::sandbox_mode sandbox = process::sandbox_mode::workspace_write;
  bool network = false;
};

// A provider as a profile or `tether run --provider` names it: nullopt for
// "scripted" (the built-in model), else openai-chat, openai-responses or
// anthropic; any other name is util_errc::invalid_argument listing them.
result<std::optional<wire_api>> parse_provider(std::string_view name);

// The configuration's view of the kind called `name` (its keys, reader and
// official base URL).
config::kind_keys native_keys(std::string name);

}  // namespace tether::runtime::native
