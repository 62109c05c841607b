// Value types shared by the native runtime and its model providers: the
// provider-neutral conversation a step sends, and the stream of events a
// provider reports while the model answers.
//
// Every wire format (OpenAI Chat Completions, OpenAI Responses, Anthropic
// Messages) maps its request from a model_request and its response stream to
// stream_events, so the agent loop never sees a wire format.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "model/events.h"
#include "runtime/common/tool_types.h"

namespace tether::runtime::native {

// ---- the request ----

using runtime::image_part;  // runtime/common/tool_types.h
using runtime::tool_spec;

// A tool call the model made. `input` is the parsed JSON arguments.
struct tool_use {
  std::string id;  // the provider's call id, echoed back with the result
  std::string name;
  boost::json::value input;
  bool hosted = false;  // executed by the provider (web search, …)
};

// Provider-specific reasoning state that must be sent back on the next
// request to the same provider (Anthropic thinking signatures, Responses
// encrypted reasoning items). Dropped when the model or provider changes.
struct reasoning_state {
  std::string provider;  // "anthropic", "openai-responses", …
  std::string model;
  boost::json::value data;
};

// One entry of the conversation, in order.
//   system      — text: the system prompt (Anthropic/Responses lift it out)
//   user        — text (+ images)
//   assistant   — text, reasoning, tool calls (local and hosted), and for
//                 hosted calls their results (hosted_results, by call id)
//   tool_result — the result of one local tool call: call_id, text, is_error
//                 (+ images)
enum class chat_role { system, user, assistant, tool_result };

struct hosted_result {
  std::string call_id;
  boost::json::value content;  // kept exactly as the provider sent it
};

struct chat_message {
  chat_role role = chat_role::user;
  std::string source_id;  // the transcript row it came from (message or call id); not sent
  std::string text;
  std::vector<image_part> images;
  // assistant
  std::string reasoning;
  std::optional<reasoning_state> reasoning_meta;
  std::vector<tool_use> calls;
  std::vector<hosted_result> hosted_results;
  // tool_result
  std::string call_id;
  bool is_error = false;
};

struct model_request {
  std::string model;
  std::vector<chat_message> messages;
  std::vector<tool_spec> tools;
  bool tools_enabled = true;          // false: offer no tools (final answer after max steps)
  std::optional<int> max_output_tokens;
  // "" (the provider's default), "low", "medium" or "high": Chat
  // `reasoning_effort`, Responses `reasoning.effort`, Anthropic extended
  // thinking with a budget of 2k / 8k / 24k tokens.
  std::string reasoning_effort;
};

// ---- the response stream ----

struct text_delta_event { std::string text; };
struct reasoning_delta_event { std::string text; };
// A piece of a tool call's JSON arguments, as streamed. `index` orders calls
// within one response; id and name are set on the first delta of a call.
struct tool_input_delta_event {
  int index = 0;
  std::string id;
  std::string name;
  std::string json_fragment;
};
// A complete tool call (arguments parsed). Local and hosted calls alike.
struct tool_call_event { tool_use call; };
// The result of a hosted (provider-executed) tool call.
struct hosted_result_event { hosted_result result; };
// Final reasoning state to keep for the next request (may come at the end).
struct reasoning_state_event { reasoning_state state; };

using stream_event = std::variant<text_delta_event, reasoning_delta_event, tool_input_delta_event,
                                  tool_call_event, hosted_result_event, reasoning_state_event>;

// Why the model stopped, normalized across wire formats.
enum class finish_reason { stop, tool_calls, length, content_filter, other };
std::string_view to_string(finish_reason f);

// What a finished response was, besides the events it streamed.
struct completion {
  std::string text;        // all text deltas joined
  std::string reasoning;   // all reasoning deltas joined
  std::optional<reasoning_state> reasoning_meta;
  std::vector<tool_use> calls;            // in order, local and hosted
  std::vector<hosted_result> hosted_results;
  finish_reason finish = finish_reason::stop;
  std::string raw_finish;                 // the provider's own word
  model::usage usage;
  std::optional<double> reported_cost_usd;  // when the provider sent one
  std::string response_id;
};

}  // namespace tether::runtime::native
