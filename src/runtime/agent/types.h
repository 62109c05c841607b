// Value types of the agent layer: a tool as an agent's MCP server lists it,
// and what a call of it returns.
#pragma once

#include <string>

#include <boost/json/value.hpp>

namespace tether::runtime::agent {

// A tool as MCP lists it (tools/list): name, description, JSON schema of its input.
struct tool_spec {
  std::string name;
  std::string description;
  boost::json::value input_schema;
};

struct tool_reply {
  std::string content;  // text for the agent
  bool is_error = false;
};

}  // namespace tether::runtime::agent
