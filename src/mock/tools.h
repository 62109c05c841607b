// Tool discovery and argument filling: how an action becomes a call of a
// tool the request actually offers.
//
// Discovery looks for each role's names in order (docs/mock-model.md):
//   shell     bash, shell, Bash, exec_command, local_shell, run_command
//   write     write, Write, write_file, create_file
//   question  ask_user, tether_ask_user, AskUserQuestion, question
//   plan      write_plan, tether_write_plan, update_plan, todowrite
// first by exact name (in that order), then MCP-style prefixed names
// ("mcp__tether__ask_user", "tether_write_plan" → "<server>_<name>" for names
// that contain '_', and "tether_<name>" for any name of Tether's own server:
// "tether_finish"), then case-insensitively ("TodoWrite").
//
// Arguments are filled from the tool's JSON schema:
//   shell     `command` or `cmd` (or the only required string); an array
//             property gets ["bash","-lc",CMD]; a wait gets the longest
//             timeout the schema names (timeout/timeout_ms/yield_time_ms).
//   write     path key: path, file_path, filePath, filename, file; content
//             key: content, contents, text, file_text, data. A relative path
//             becomes absolute when the schema's path description says
//             "absolute" and the conversation names a working directory
//             ("Primary working directory: …", "Working directory: …",
//             "<cwd>…</cwd>").
//   question  Tether's {question, options[{id,label}], multi_select,
//             allow_other}; Claude's {questions[{question, header,
//             options[{label, description}], multiSelect}]}; whatever of
//             those the schema has.
//   plan      an array of steps (steps/plan/todos/items/tasks) whose items
//             are strings or objects (step/content/title/text + status
//             "pending" + id/priority/activeForm when the schema has them),
//             else a markdown list in a string property.
// Required properties still missing get the schema's default, its first enum
// value, or an empty value of their type, so strict clients accept the call.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <boost/json/value.hpp>

#include "mock/types.h"

namespace tether::mock {

enum class tool_role { shell, write, question, plan };

// The names a role looks for, in order.
const std::vector<std::string_view>& tool_names(tool_role r);

// The offered tool for `r`, or nullptr.
const tool_offer* find_tool(const std::vector<tool_offer>& tools, tool_role r);
// The offered tool named `name` (exact, then MCP-prefixed), or nullptr.
const tool_offer* find_tool_named(const std::vector<tool_offer>& tools, std::string_view name);
// True when `name` (as called in history) is a question tool.
bool is_question_tool(std::string_view name);

// An action's outcome: a tool call (id left empty for the server to assign)
// or, when no suitable tool is offered, the text to answer instead.
using action_outcome = std::variant<tool_call, std::string>;

struct shell_hints {
  bool long_wait = false;  // Wait for file: ask for a timeout of at least 130 s
};

action_outcome shell_call(const conversation& c, const std::string& command, shell_hints hints = {});
// Falls back to the shell tool with printf when no write tool is offered.
action_outcome write_call(const conversation& c, const std::string& path, const std::string& content);
action_outcome question_call(const conversation& c, const std::string& question,
                             const std::vector<std::string>& options);
action_outcome plan_call(const conversation& c, const std::vector<std::string>& steps);
action_outcome named_call(const conversation& c, const std::string& name, const boost::json::value& input);

// Single-quotes `s` for a POSIX shell.
std::string shell_quote(std::string_view s);

// The working directory named in the conversation's system or user text.
std::optional<std::string> working_directory(const conversation& c);

// Option id of a label: the label lowercased.
std::string option_id(std::string_view label);

}  // namespace tether::mock
