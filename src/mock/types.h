// Value types of the scripted model: the conversation every wire format is
// normalized into, the tools a request offers, and what one response says.
//
// The model is stateless: everything it decides comes from one request's
// `conversation` (plus the server-wide `once` memory and prompt cache kept by
// the request handler).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

namespace tether::mock {

// The three wire APIs the server speaks.
enum class wire_format { chat, responses, anthropic };
std::string_view to_string(wire_format w);  // "chat", "responses", "anthropic"

enum class role { system, user, assistant, tool_result };
std::string_view to_string(role r);

// How a tool is called on the wire. `custom` (Responses freeform tools such
// as codex's apply_patch) takes raw text instead of JSON; `local_shell` is the
// Responses built-in shell, called with a `local_shell_call` item.
enum class tool_kind { function, custom, local_shell };

// A tool call the assistant made (in history) or makes (in a response).
struct tool_call {
  std::string id;  // Chat/Responses call_id, Anthropic tool_use id
  std::string name;
  std::string arguments;  // JSON text of the input; the raw input of a custom tool
  tool_kind kind = tool_kind::function;
  std::string tool_namespace;  // Responses: the namespace tool the function is in ("" for none)
};

// One entry of the normalized conversation, in request order.
//   system      — text (system prompt, `developer` messages, `instructions`)
//   user        — text typed by the user (or a client's wrapper around it)
//   assistant   — text and/or tool calls
//   tool_result — the output of one tool call: call_id, text, is_error
struct message {
  mock::role role = role::user;
  std::string text;
  std::vector<tool_call> calls;  // assistant
  std::string call_id;           // tool_result
  bool is_error = false;         // tool_result
  // user: text sent in the same Anthropic message as tool results (client
  // reminders); it never counts as an answer to a question.
  bool beside_tool_results = false;
};

// A tool offered in the request.
struct tool_offer {
  std::string name;
  std::string description;
  boost::json::object schema;  // JSON Schema of the input; empty for custom/local_shell tools
  tool_kind kind = tool_kind::function;
  std::string tool_namespace;  // Responses: offered inside this namespace tool ("" for none)
};

// One model request, whatever its wire format.
struct conversation {
  wire_format format = wire_format::chat;
  std::string model;
  bool stream = false;
  bool include_usage = false;  // chat: stream_options.include_usage
  std::vector<message> messages;
  std::vector<tool_offer> tools;
};

// What one response carries: final text, or exactly one tool call.
struct model_output {
  std::string text;
  std::optional<tool_call> call;
};

// Token figures of one response. `input_tokens` counts the whole prompt,
// cached part included (each wire format reports it in its own convention).
struct usage_figures {
  std::uint64_t input_tokens = 0;
  std::uint64_t cached_tokens = 0;
  std::uint64_t output_tokens = 0;
};

// `Fail with: KIND`.
enum class fail_kind { rate_limit, server_error, overloaded, auth, overflow, disconnect };
std::string_view to_string(fail_kind k);
std::optional<fail_kind> parse_fail_kind(std::string_view s);

}  // namespace tether::mock
