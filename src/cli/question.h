// Questions an agent asks (interaction kind "question"): how the CLI prints
// them, with numbered options, and how a user's reply becomes the body of
// POST /v1/interactions/{id}/answer. The payload and answer formats are
// model/questions.h's; options are numbered from 1 within each question, in
// payload order.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "util/result.h"

namespace tether::cli {

// "question (ID): TEXT\n    1. LABEL [OPTION_ID]\n…", one block per question;
// a payload that is not a question list is printed as JSON.
std::string format_question(std::string_view interaction, const boost::json::value& payload);

struct answer_choice {
  std::optional<std::string> question_id;  // empty: the only question of the payload
  std::vector<std::string> options;        // option ids, or their 1-based numbers as printed
  std::optional<std::string> other_text;
};

// The answer body {answers:[{question_id, option_ids, other_text?}]}.
// util_errc::invalid_argument, with a message naming the choices, when the
// question or an option does not exist, or the payload has several
// questions and none was named.
result<boost::json::value> build_answer(const boost::json::value& payload, const answer_choice& choice);

// A line typed in `tether chat` while a question is pending: numbers (or
// option ids) separated by spaces or commas; with several questions, one per
// question in order. nullopt when the line is not such an answer.
std::optional<boost::json::value> answer_from_line(const boost::json::value& payload, std::string_view line);

}  // namespace tether::cli
