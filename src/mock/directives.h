// Directive lines: the scripted model's grammar (docs/mock-model.md).
//
// parse_directives() reads a user message line by line. A line is a
// directive when, after leading spaces and list markers ("-", "*", "+", "•",
// ">", "1.", "2)") are dropped, it starts with one of the patterns below
// (case-insensitive; the arguments keep their case). Every other line is
// ignored, so a client may wrap the user's words with its own text.
//
//   Reply with exactly: TEXT          reply_exactly   text
//   Remember the phrase: PHRASE       remember        text
//   Recall the phrase.                recall
//   Run: COMMAND                      run             text
//   Write file PATH: CONTENT          write_file      path, text ("\n" → newline)
//   Append line TEXT to PATH          append_line     text, path (split at the last " to ")
//   Ask: QUESTION | OPTION | …        ask             text, items
//   Reply with the answer.            reply_answer
//   Plan: STEP ; STEP ; …             plan            items
//   Tool: NAME {JSON}                 tool            name, input (JSON, {} when absent);
//                                                     "{{answer}}" in its strings becomes the
//                                                     latest answer (as `Reply with the answer.`
//                                                     finds it; none yet: WAITING_FOR_ANSWER)
//   Wait for file PATH                wait_for_file   path
//   Stream slowly: MS                 stream_slowly   interval
//   Fail with: KIND [once]            fail            fail, once
//
// A request whose last message is a tool result saying
// {"status":"waiting_for_approval"} (Tether's request_plan_approval through
// `tether mcp`) is answered WAITING_FOR_APPROVAL: the decision arrives as a
// later message, after which the directives go on.
//
// A line that starts like a directive but cannot be read (an unknown failure
// kind, a Tool line with bad JSON, …) becomes `invalid` with a message: the
// model answers that message when it reaches the line, so a test fails with a
// readable reason instead of the line being silently skipped.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "mock/types.h"

namespace tether::mock {

enum class directive_kind {
  reply_exactly,
  remember,
  recall,
  run,
  write_file,
  append_line,
  ask,
  reply_answer,
  plan,
  tool,
  wait_for_file,
  stream_slowly,
  fail,
  invalid,
};

struct directive {
  directive_kind kind = directive_kind::invalid;
  std::string text;                       // reply/remember text, command, file content, question, error message
  std::string path;                       // write_file, append_line, wait_for_file
  std::string name;                       // tool
  std::vector<std::string> items;         // ask options, plan steps
  boost::json::value input;               // tool
  std::chrono::milliseconds interval{0};  // stream_slowly
  fail_kind fail = fail_kind::server_error;
  bool once = false;  // fail
};

// True for the directives that are one action each (one tool call, one
// response): run, write_file, append_line, ask, plan, tool, wait_for_file.
bool is_action(directive_kind k);

// The directives of `text`, in order. Empty when it has none.
std::vector<directive> parse_directives(std::string_view text);

// The line with its leading spaces and list markers removed (also used to
// find `Remember the phrase:` lines in earlier messages).
std::string_view strip_line_prefix(std::string_view line);

// ASCII case-insensitive starts_with.
bool starts_with_nocase(std::string_view s, std::string_view prefix);

std::string_view trim(std::string_view s);

}  // namespace tether::mock
