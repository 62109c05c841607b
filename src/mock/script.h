// The scripted model's decision: given one request's conversation, what the
// next response is (docs/mock-model.md, "Where the model is").
//
//   1. The latest instruction is the last user message (not a tool result)
//      with at least one directive. None: the answer is "Done.".
//   2. Progress is the number of tool results after that message, plus one
//      for a tool call still without a result that a later user message
//      answered (a question answered in chat rather than through its tool).
//   3. Directives run in order. Action directives (directives.h, is_action)
//      already covered by progress are skipped; the first one not covered is
//      this response's tool call. `Reply with the answer.` reached without an
//      answer ends the turn with WAITING_FOR_ANSWER. An `invalid` directive
//      reached ends the turn with its message.
//   4. With every action done, the answer is the last of: `Reply with
//      exactly` TEXT, `Recall the phrase.` (the phrase or NO_PHRASE), `Reply
//      with the answer.` (the answer). Otherwise "Noted." when the message
//      only remembers a phrase, else "Done.".
//
// `Fail with:` and `Stream slowly:` apply to every request whose latest
// instruction carries them; `once` is decided by the caller (handler.h),
// which remembers the instruction's hash.
//
// Side requests: a request that offers no tools and whose system prompt asks
// for a title (opencode's "You are a title generator", …) is answered with
// title_answer and never fails or streams slowly, so it cannot consume a
// `Fail with: … once` meant for the real turn that runs beside it.
//
// Answers to questions (latest_answer): a question is a call of a question
// tool (tools.h, is_question_tool). Its answer is, by precedence of time
// (the latest wins):
//   - a tool result for that call that reads as an answer: JSON
//     {"answers":[{labels|option_ids, other_text}]} (labels joined by ", ";
//     option ids mapped back to the labels of the question that was asked;
//     else the other text), {"answers":{QUESTION: ANSWER}}, {"answer": TEXT};
//     Claude's text `"QUESTION"="ANSWER"`; or plain text after an optional
//     `answered:` prefix. Error results and JSON without an answer (a tool
//     that only records the question) are not answers;
//   - a directive-less user message after a question still unanswered: its
//     text after an optional `answered:` prefix.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "mock/directives.h"
#include "mock/types.h"

namespace tether::mock {

struct decision {
  model_output output;            // the response (unless `fail` is set)
  std::optional<fail_kind> fail;  // `Fail with:` of the latest instruction
  bool fail_once = false;
  std::uint64_t instruction_hash = 0;           // hash of the latest instruction's text (0 when none)
  std::chrono::milliseconds delta_interval{0};  // `Stream slowly:`
};

inline constexpr std::string_view title_answer = "Scripted session";

decision decide(const conversation& c);

// A client's side request for a conversation title (see above).
bool is_title_request(const conversation& c);

// Index of the latest instruction in c.messages, if any.
std::optional<std::size_t> latest_instruction(const conversation& c);

// The latest answer to a question asked in the conversation, if any.
std::optional<std::string> latest_answer(const conversation& c);

// The phrase of the last `Remember the phrase:` line in messages [0, end)
// (tool results excluded).
std::optional<std::string> recall_phrase(const conversation& c, std::size_t end);

// FNV-1a 64 of s (stable across runs).
std::uint64_t stable_hash(std::string_view s);

}  // namespace tether::mock
