// The vocabulary the native runtime's tools and its model providers share:
// a tool as offered to the model, and an image given to it. Below both
// (tools/tool.h describes its tools with it; providers/types.h sends it).
#pragma once

#include <string>

#include <boost/json/object.hpp>

namespace tether::runtime {

// A tool offered to the model. `parameters` is a JSON Schema object.
struct tool_spec {
  std::string name;
  std::string description;
  boost::json::object parameters;
};

// An image given to the model (a tool result of `read`, or user media).
struct image_part {
  std::string media_type;  // "image/png", …
  std::string base64;      // the bytes, base64-encoded (wire formats want it so)
};

}  // namespace tether::runtime
