// Questions an agent asks a human (interactions of kind "question") and the
// answers to them: the one definition of both formats, used by the ask_user
// tool (which makes questions), the session service (which checks answers
// before resolving an interaction) and the CLI (which prints questions and
// builds answers).
//
// The question payload (interaction.requested, kind "question"):
//   {"questions":[{"id","question","options":[{"id","label"}],"multi_select","allow_other"}]}
// The answer:
//   {"answers":[{"question_id","option_ids":[...],"other_text"?}]}
// and, as the waiting tool call returns it to the model, each answer also
// carries "labels": the labels of its chosen options (with_labels()).
//
// Making a question (make_question) is strict: the text is not blank and at
// most max_question_bytes; at most max_question_options options, each an
// object {label, id?} whose label is not blank and at most max_label_bytes,
// whose id defaults to the label in ASCII lowercase, and no two options with
// one id. allow_other defaults to "there are no options".
//
// Reading a stored payload (read_questions) is lenient, as payloads may come
// from other runtimes: entries that are not objects, questions without a
// string id and options without a string id are skipped; a flag is set only
// by JSON true.
//
// Checking an answer (check_answer): every question is answered exactly
// once; each option id names an option of its question; one option unless
// multi_select; other_text only where allow_other (and then option_ids may
// be empty); no other fields. A payload with no "questions" array (another
// kind of interaction) only gets the answer's shape checked.
//
// Errors: util_errc::invalid_argument, the message naming the offending
// field ("answers[0].option_ids", "options[1].label").
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <boost/json/value.hpp>

#include "util/result.h"

namespace tether::model {

inline constexpr std::size_t max_question_options = 20;
inline constexpr std::size_t max_question_bytes = 10'000;
inline constexpr std::size_t max_label_bytes = 500;

struct question_option {
  std::string id;
  std::string label;
};

struct question {
  std::string id;  // "q1", unique in its payload
  std::string text;
  std::vector<question_option> options;  // in the order they are shown (numbered from 1)
  bool multi_select = false;
  bool allow_other = false;

  // The option with this id, or nullptr.
  [[nodiscard]] const question_option* option(std::string_view option_id) const;
};

struct question_payload {
  std::vector<question> questions;

  [[nodiscard]] const question* find(std::string_view question_id) const;
};

// A question from a tool's arguments: `options` is the raw JSON of the
// options argument (nullptr or null: none).
result<question> make_question(std::string id, std::string text, const boost::json::value* options,
                               std::optional<bool> multi_select, std::optional<bool> allow_other);

boost::json::value to_json(const question_payload& p);

// The questions of a stored payload, or nullopt when it has no "questions" array.
std::optional<question_payload> read_questions(const boost::json::value& payload);

struct answer {
  std::string question_id;
  std::vector<std::string> option_ids;
  std::optional<std::string> other_text;
};

// {"answers":[…]} of these answers.
boost::json::value to_json(const std::vector<answer>& answers);

// The answer to store: {"answers": the body's answers as given}, or the
// first mistake (see the rules above).
result<boost::json::value> check_answer(const boost::json::value& question_payload, const boost::json::value& body);

// The answer as the waiting tool call returns it to the model: each answer
// gets "labels", the labels of its chosen options looked up in the question,
// so the model reads "Blue", not an option id. Anything it cannot look up is
// left as it is.
boost::json::value with_labels(const boost::json::value& question_payload, boost::json::value answer);

}  // namespace tether::model
