// Test support: speaks each wire format to mock::server the way a real
// client would — builds request bodies from a format-neutral history and
// reads replies (SSE or JSON) back into one shape.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "http_client.h"
#include "mock/types.h"

namespace tether::mock::test {

struct tool_def {
  std::string name;
  boost::json::object schema;
};

// One entry of a client's history.
struct turn {
  role r = role::user;
  std::string text;
  std::optional<tool_call> call;  // assistant
  std::string call_id;            // tool_result
  bool is_error = false;
};

std::string route_of(wire_format w);  // "/v1/chat/completions", "/v1/responses", "/v1/messages?beta=true"

boost::json::value build_request(wire_format w, const std::vector<turn>& history, const std::vector<tool_def>& tools,
                                 bool stream, const std::string& system = {});

// A reply read back, whatever the format.
struct reply_view {
  unsigned status = 0;
  std::map<std::string, std::string> headers;
  std::string text;
  std::optional<tool_call> call;
  std::string stop;        // finish_reason / stop_reason / response status
  usage_figures usage;     // input_tokens include the cached ones in every format
  bool complete = false;   // the stream ended with its end event(s), or the JSON body parsed
  std::size_t deltas = 0;  // text or argument delta events
  std::vector<sse_message> events;
  boost::json::value json;  // the non-streaming body (or error body)
};

reply_view read_reply(wire_format w, bool stream, const http_response& r);

// Drives one conversation: keeps the history, sends it, appends replies.
class scripted_client {
 public:
  scripted_client(std::uint16_t port, wire_format w, bool stream) : port_(port), format_(w), stream_(stream) {}

  std::vector<tool_def> tools;
  std::vector<turn> history;
  std::string system;

  void user(std::string text);
  // Sends the history; appends the reply (text or call) to it.
  reply_view step();
  // Answers the last call of the history.
  void tool_result(std::string text, bool is_error = false);
  // step() until a text reply, answering every call with `result`; returns
  // the text replies' text and the names of the tools called, in order.
  std::pair<std::string, std::vector<std::string>> run_to_text(const std::string& result = "ok", int max_steps = 10);

  [[nodiscard]] wire_format format() const { return format_; }

 private:
  std::uint16_t port_;
  wire_format format_;
  bool stream_;
};

// Tool definitions as the real clients send them.
tool_def bash_tool();            // {command: string} (Tether/Claude style)
tool_def exec_command_tool();    // codex {cmd: string}
tool_def array_shell_tool();     // codex "shell" {command: array}
tool_def write_tool();           // Tether {path, content}
tool_def claude_write_tool();    // Write {file_path (absolute), content}
tool_def opencode_write_tool();  // write {filePath (absolute), content}
tool_def ask_user_tool();        // Tether ask_user
tool_def claude_ask_tool();      // AskUserQuestion
tool_def write_plan_tool();      // {steps: [string]}
tool_def update_plan_tool();     // codex update_plan
tool_def todowrite_tool();       // opencode todowrite
tool_def opencode_bash_tool();   // bash {command, description (required), timeout}

}  // namespace tether::mock::test
