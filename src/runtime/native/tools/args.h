// Reading a tool's JSON arguments (internal to the local tools).
//
// Models send arguments that are missing, mistyped or padded with extra
// fields; each check here turns that into an error message the model can act
// on ("missing required argument 'path'", "argument 'limit' must be an
// integer", "unknown argument 'file'; expected one of: path, offset, limit").
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "util/result.h"

namespace tether::runtime::native::tool_detail {

class tool_args {
 public:
  // `input` must be a JSON object (null counts as {}; a string holding a JSON
  // object is parsed, as some providers send arguments unparsed). Every key
  // must be one of `allowed`.
  static result<tool_args> parse(const boost::json::value& input, std::initializer_list<std::string_view> allowed);

  [[nodiscard]] result<std::string> required_string(std::string_view name) const;
  [[nodiscard]] result<std::optional<std::string>> optional_string(std::string_view name) const;
  // Integers; a float with an integral value (10.0) is accepted.
  [[nodiscard]] result<std::optional<std::int64_t>> optional_int(std::string_view name) const;
  [[nodiscard]] result<std::optional<bool>> optional_bool(std::string_view name) const;
  // The raw value, or nullptr when absent or JSON null.
  [[nodiscard]] const boost::json::value* find(std::string_view name) const;

 private:
  boost::json::object object_;
};

// "missing required argument 'NAME'" and friends, shared with ask_user's
// nested checks.
std::string missing_argument(std::string_view name);
std::string wrong_type(std::string_view name, std::string_view expected);

}  // namespace tether::runtime::native::tool_detail
