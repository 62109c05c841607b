// claude_cli — what the two ways of running Claude Code share: `claude -p`
// one process per turn (claude_print.cpp) and `claude -p --input-format
// stream-json` kept running (claude_stream.cpp).
//
//   auto l = claude_launch(in, {"--output-format", "stream-json"});  // argv, env, mcp.json under in.home
//   l->argv += claude_permission_flags(in.settings->permissions);     // the per-turn way of permissions
//   auto m = make_claude_mapper();                                     // one line of output → agent_events
//
// The environment: CLAUDE_CONFIG_DIR in the session's home,
// ANTHROPIC_BASE_URL, non-essential traffic, telemetry and the autoupdater
// off (the key is the runtime's: ANTHROPIC_API_KEY). The command line:
// PROGRAM -p MODE… --verbose --include-partial-messages --model M, then the
// MCP server of Tether's tools (--mcp-config FILE --strict-mcp-config) when
// in.mcp is set. The caller adds how the session is picked (--resume,
// --session-id), the permission flags and the profile's args.
//
// Output lines (stream-json): system/init {session_id}, stream_event {the
// Messages stream's events: text deltas}, assistant {message.content: text
// and tool_use blocks}, user {tool_result blocks}, result {usage,
// total_cost_usd, is_error, subtype}.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

#include "runtime/agent/settings.h"
#include "runtime/agent/dialect.h"
#include "util/result.h"

namespace tether::runtime::agent {

// Claude's own record of session `session` under CLAUDE_CONFIG_DIR `config`
// (projects/*/SESSION.jsonl), which claude writes in batches: its size
// (0 while there is none), and whether it holds `needle` at or after byte
// `from` (only its last MiB is read when `from` is 0). Tether waits on it
// before it reports a turn done (a SIGKILL of Tether must not beat it).
std::uintmax_t claude_session_size(const std::string& config, const std::string& session);
bool claude_session_has(const std::string& config, const std::string& session, std::string_view needle,
                        std::uintmax_t from = 0);
// Waits until claude_session_has(config, session, needle, from), 3 s at most.
boost::asio::awaitable<void> claude_session_written(std::string config, std::string session, std::string needle,
                                                    std::uintmax_t from = 0);

// Tools that only look: what approve_reads lets the agent use.
constexpr std::string_view claude_read_tools = "Read Glob Grep LS";
// Tether's own tools (ask_user and the work tools: every tool of its MCP
// server), usable under every policy.
constexpr std::string_view claude_tether_tools = "mcp__tether";

// Whether `tool` is one of the space-separated names of `list`.
bool claude_tool_listed(std::string_view list, std::string_view tool);

// argv (without the session or permission flags), env; writes in.home/mcp.json.
result<launch> claude_launch(const launch_input& in, const std::vector<std::string>& mode);

// --permission-mode / --allowedTools / --disallowedTools for `p` when no one
// answers permission prompts (in -p mode a tool that would ask is denied).
std::vector<std::string> claude_permission_flags(agent_permissions p);

// What a result line reports: the usage of its turn (input counts cache reads
// and writes), and total_cost_usd as printed (nullopt when absent).
turn_usage claude_result_usage(const boost::json::object& result);

// Maps system/init, stream_event, assistant and user lines, and result lines
// (turn_failed when is_error, turn_usage, turn_done).
std::unique_ptr<line_mapper> make_claude_mapper();

}  // namespace tether::runtime::agent
