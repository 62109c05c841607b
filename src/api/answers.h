// Checks an answer to a question against the question it answers, before it
// reaches the session layer, so a typo is a 400 naming the field rather than
// an answer the model cannot use.
//
// The question payload (interaction.requested, kind "question"):
//   {"questions":[{"id","question","options":[{"id","label"}],"multi_select","allow_other"}]}
// The answer body:
//   {"answers":[{"question_id","option_ids":[...],"other_text"?}]}
// Rules: every question is answered exactly once; each option id names an
// option of its question; one option unless multi_select; other_text only
// where allow_other (and then option_ids may be empty); nothing else.
// Payloads of other kinds (no "questions" array) only get the shape checked.
#pragma once

#include <boost/json/value.hpp>

#include "util/result.h"

namespace tether::api {

// The answer to store ({"answers":[…]} as given, minus nothing), or
// api_errc::bad_request with the offending field in the message.
result<boost::json::value> check_answer(const boost::json::value& question_payload, const boost::json::value& body);

}  // namespace tether::api
