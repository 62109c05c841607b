// The ask_user tool's contract, shared by the native tool and by Tether's
// MCP tools for agent programs: its description, the JSON schema of its
// arguments ({question, options?, multi_select?, allow_other?}) and how
// arguments become a question payload (model/questions.h's rules).
#pragma once

#include <string_view>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "model/questions.h"
#include "util/result.h"

namespace tether::runtime::native {

std::string_view ask_user_description();
boost::json::object ask_user_parameters();
// The payload of interaction.requested for these arguments, or what is wrong with them.
result<model::question_payload> ask_user_question(const boost::json::value& input);

}  // namespace tether::runtime::native
