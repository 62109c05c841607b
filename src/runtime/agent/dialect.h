// dialect — what differs between agent programs run one process per turn
// (codex exec, claude -p, opencode run): how to launch one turn, and what
// each line it prints means. The runtime (per_turn.h) does everything else:
// the agent's home, the environment, the process, the events, the binding.
//
//   auto d = make_codex_exec();
//   auto l = d->prepare(in);            // writes the agent's config under in.home; argv, env
//   auto m = d->mapper();               // one per turn
//   for each stdout line: m->feed(line) -> agent_events, or an error (garbage)
//   at exit: m->finish() -> what the end of output means (a turn that never
//            said it completed is an error)
//
// Dialects do no I/O but prepare()'s configuration files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <boost/json/value.hpp>

#include "runtime/agent/settings.h"
#include "model/events.h"
#include "util/result.h"

namespace tether::runtime::agent {

// What a line of the agent's output says happened.
struct agent_session {  // the agent's own session (thread) id: resumed next turn
  std::string id;
};
struct text_piece {  // part of the answer as it streams (ephemeral)
  std::string text;
};
struct agent_message {  // a whole assistant message
  std::string text;
};
struct tool_start {  // the agent started (or ran) a tool
  std::string id;    // the agent's id of the call (matches its tool_end)
  std::string tool;
  boost::json::value input;
};
struct tool_end {
  std::string id;
  bool ok = true;
  std::string output;  // result text, or the error
};
struct turn_usage {  // what the model server reported, summed over the turn
  model::usage usage;
  std::optional<double> agent_cost_usd;  // the agent's own estimate, kept beside Tether's price
};
struct turn_failed {  // the agent reported an error
  std::string message;
};
struct turn_done {};  // the agent reported the turn complete

using agent_event =
    std::variant<agent_session, text_piece, agent_message, tool_start, tool_end, turn_usage, turn_failed, turn_done>;

// Parses one program's output, one line at a time.
class line_mapper {
 public:
  virtual ~line_mapper() = default;
  // An error: the line is not this program's output (garbage): the turn fails.
  virtual result<std::vector<agent_event>> feed(std::string_view line) = 0;
};

// Where the agent's model is, and what it may do.
struct model_endpoint {
  std::string base_url;  // ".../v1" for the OpenAI kinds; Anthropic's without /v1
  std::string model;
  std::string key_variable;  // the variable (in the agent's environment) holding the key
};

// How the agent reaches Tether's tools (tether mcp).
struct mcp_server {
  std::filesystem::path program;           // the tether binary
  std::map<std::string, std::string> env;  // TETHER_TOOLS_SOCKET, TETHER_RUN_TOKEN
};

struct launch_input {
  std::filesystem::path program;    // the agent's binary
  std::filesystem::path home;       // the session's own, created; HOME points here
  std::filesystem::path workspace;  // the working directory
  std::string prompt;
  std::optional<std::string> resume;  // the agent session to continue
  model_endpoint endpoint;
  const agent_settings* settings = nullptr;
  std::optional<mcp_server> mcp;
  // A turn in an environment (session::turn_place): `home` is a path
  // there, and the files a dialect writes under it are collected here
  // (relative path, content) to be put there before the agent starts.
  // Null: they are written here (write_private_file).
  std::vector<std::pair<std::string, std::string>>* home_files = nullptr;
};

// What dialects write under in.home: written here beneath it, or collected
// for the environment the turn runs in (launch_input::home_files).
result<void> write_home_file(const launch_input& in, const std::string& rel, std::string content);

struct launch {
  std::vector<std::string> argv;           // argv[0]: the program
  std::map<std::string, std::string> env;  // set beside the runtime's base environment
  // Tether reaches the agent over the host's loopback (opencode serve's
  // HTTP server): its sandbox keeps the host's network, whatever the
  // profile's `network` says.
  bool serves_loopback = false;
};

class dialect {
 public:
  virtual ~dialect() = default;
  // The binary's name as installed ("codex").
  [[nodiscard]] virtual std::string_view program() const = 0;
  // The variable of the agent's environment that carries the model key.
  [[nodiscard]] virtual std::string_view key_variable() const = 0;
  // Base URL of the built-in scripted model for this program, given the
  // scripted model's root ("http://127.0.0.1:P").
  [[nodiscard]] virtual std::string scripted_base_url(std::string_view root) const = 0;
  // Writes the agent's configuration under in.home; the command line.
  virtual result<launch> prepare(const launch_input& in) const = 0;
  [[nodiscard]] virtual std::unique_ptr<line_mapper> mapper() const = 0;
  // Whether a tool call of the agent is one of Tether's own tools through
  // `tether mcp` (ask_user, the work tools: recorded through the bridge, so
  // not mapped again): its name carries "tether" and ends with the tool's
  // ("mcp__tether__finish", "tether.finish", "tether_finish").
  [[nodiscard]] static bool is_tether_tool(std::string_view tool) {
    if (tool.find("tether") == std::string_view::npos) return false;
    for (const std::string_view name : {"ask_user", "write_plan", "request_plan_approval", "update_task",
                                        "create_task", "list_projects", "create_project", "finish"})
      if (tool.ends_with(name) && tool.size() > name.size()) {
        const char sep = tool[tool.size() - name.size() - 1];
        if (sep == '_' || sep == '.' || sep == '/' || sep == ':') return true;
      }
    return false;
  }
};

std::unique_ptr<dialect> make_codex_exec();
std::unique_ptr<dialect> make_claude_print();
std::unique_ptr<dialect> make_opencode_run();

}  // namespace tether::runtime::agent
