// bridge_protocol — the lines the tool bridge and its client (`tether mcp`)
// exchange, both sides in one place so they cannot drift apart. The wire
// format is tool_bridge.h's; every encoded line ends with '\n'.
//
// Server side: parse_request() a line, then answer with list_reply(),
// call_reply() or refusal(). Client side: encode_request(), then
// parse_list_reply() / parse_call_reply() the line that comes back. A
// refusal parses as a value too (a `refused` with the bridge's reason): it is
// an answer, not a transport failure.
#pragma once

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <boost/json/object.hpp>

#include "runtime/agent/types.h"
#include "util/result.h"

namespace tether::runtime::agent::protocol {

enum class op { list, call };

struct request {
  std::string token;
  op kind = op::list;
  std::string tool;               // call
  boost::json::object arguments;  // call
};

// The bridge said no (ok:false); nothing ran.
struct refused {
  std::string reason;
};

// A request line (without its '\n'); util_errc::malformed_json with the
// reason to send back when it is not JSON, not an object, or lacks a field.
result<request> parse_request(std::string_view line);
std::string encode_request(const request& r);

std::string list_reply(const std::vector<tool_spec>& tools);
std::string call_reply(const tool_reply& reply);
std::string refusal(std::string_view reason);

// agent_errc::bad_reply when the line is not a reply of the protocol.
result<std::variant<std::vector<tool_spec>, refused>> parse_list_reply(std::string_view line);
result<std::variant<tool_reply, refused>> parse_call_reply(std::string_view line);

}  // namespace tether::runtime::agent::protocol
