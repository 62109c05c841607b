// The names of the runtime kinds, as profiles name them and the event log
// records them (execution.started's `runtime`): the one place they are
// written. runtime/kinds.cpp builds a descriptor for each (runtime/kind.h);
// the qualification harness qualifies each (e2e/suite.h).
//
//   native                      Tether's own agent loop over a provider's API
//   codex-exec, claude-print,   an agent program per turn
//   opencode-run
//   codex, claude, opencode     a warm agent process per session, kept
//   acp-codex, acp-claude,      between turns (codex app-server, claude
//   acp-opencode, acp           stream-json, opencode serve, the Agent Client
//                               Protocol; "acp" runs any ACP agent a profile's
//                               `command` names)
#pragma once

#include <array>
#include <string_view>

namespace tether::model::runtime_kind {

inline constexpr std::string_view native = "native";
inline constexpr std::string_view codex_exec = "codex-exec";
inline constexpr std::string_view claude_print = "claude-print";
inline constexpr std::string_view opencode_run = "opencode-run";
inline constexpr std::string_view codex = "codex";
inline constexpr std::string_view claude = "claude";
inline constexpr std::string_view opencode = "opencode";
inline constexpr std::string_view acp_codex = "acp-codex";
inline constexpr std::string_view acp_claude = "acp-claude";
inline constexpr std::string_view acp_opencode = "acp-opencode";
inline constexpr std::string_view acp = "acp";

inline constexpr std::array<std::string_view, 3> per_turn{codex_exec, claude_print, opencode_run};
inline constexpr std::array<std::string_view, 7> warm{codex,      claude,       opencode, acp_codex,
                                                      acp_claude, acp_opencode, acp};
// Every kind, the default (native) first.
inline constexpr std::array<std::string_view, 11> all{native,   codex_exec, claude_print, opencode_run, codex, claude,
                                                      opencode, acp_codex,  acp_claude,   acp_opencode, acp};

}  // namespace tether::model::runtime_kind
