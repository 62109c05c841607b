// Request normalization: the body of a model request, in any of the three
// wire formats, read into one `conversation`.
//
// What each format contributes:
//   chat       messages[]: system/developer → system; user (string or parts
//              of type text); assistant (content + tool_calls[].function);
//              tool (tool_call_id, content) → tool_result; legacy `function`
//              role → tool_result. tools[]: {type:function, function:{name,
//              description, parameters}}. stream, stream_options.include_usage.
//   responses  instructions → system; input (a string, or items): message
//              (roles user/assistant/system/developer; content a string or
//              input_text/output_text parts), function_call, custom_tool_call,
//              local_shell_call → assistant calls; function_call_output,
//              custom_tool_call_output, local_shell_call_output → tool_result
//              (output a string or content parts); reasoning items ignored.
//              tools[]: {type:function, name, parameters}, {type:custom,
//              name}, {type:local_shell}.
//   anthropic  system (string or text blocks) → system; messages[] with roles
//              user/assistant/system (a system entry carrying Claude Code's
//              "The user sent a new message while you were working:" is a
//              user message: a steer); content a string or blocks: text,
//              tool_use (assistant), tool_result {tool_use_id, content:
//              string|blocks, is_error} → one tool_result message each (placed
//              before the user text of the same message), image (ignored).
//              tools[]: {name, description, input_schema}.
//
// Unknown fields and unknown block/item types are ignored. A body that is not
// an object, or a field with the wrong JSON type (messages not an array, …),
// is mock_errc::invalid_request with a message naming the field.
#pragma once

#include <boost/json/value.hpp>

#include "mock/types.h"
#include "util/result.h"

namespace tether::mock {

result<conversation> parse_request(wire_format format, const boost::json::value& body);

result<conversation> parse_chat_request(const boost::json::value& body);
result<conversation> parse_responses_request(const boost::json::value& body);
result<conversation> parse_anthropic_request(const boost::json::value& body);

}  // namespace tether::mock
