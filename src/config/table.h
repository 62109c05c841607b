// config::table_reader — one TOML table of the configuration as a runtime
// kind reads its keys (config/kinds.h), without toml++ in the kind's code.
//
//   auto steps = t.integer("max_steps", 50, 1);   // result<std::int64_t>
//   if (!steps) return steps.error();             // "config: profiles.x.max_steps must be an integer"
//
// Every getter returns the fallback when the key is absent, and
// util_errc::invalid_argument naming the key ("config: <where>.<key> …")
// when its value has the wrong type or is out of range. bad() builds such an
// error for a check of the kind's own.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace tether::config {

namespace detail {
struct toml_table;  // a toml::table (config's own; table.cpp)
}

class table_reader {
 public:
  // `where`: the table's place in the file ("profiles.default"). Made by
  // the configuration's parser, which owns the table.
  table_reader(const detail::toml_table& table, std::string where);
  table_reader(const detail::toml_table&& table, std::string where) = delete;  // it would dangle

  [[nodiscard]] const std::string& where() const { return where_; }
  [[nodiscard]] bool has(std::string_view key) const;

  [[nodiscard]] result<std::string> text(std::string_view key, std::string fallback) const;
  [[nodiscard]] result<std::int64_t> integer(std::string_view key, std::int64_t fallback, std::int64_t min) const;
  [[nodiscard]] result<bool> boolean(std::string_view key, bool fallback) const;
  [[nodiscard]] result<std::vector<std::string>> strings(std::string_view key) const;
  // An array of environment variable names (letters, digits, _).
  [[nodiscard]] result<std::vector<std::string>> variable_names(std::string_view key) const;
  // A table of NAME = "value" with variable names.
  [[nodiscard]] result<std::map<std::string, std::string, std::less<>>> variables(std::string_view key) const;
  // An absolute path, or "" when absent.
  [[nodiscard]] result<std::string> absolute_path(std::string_view key) const;
  // An http:// or https:// URL, or "" when absent.
  [[nodiscard]] result<std::string> url(std::string_view key) const;

  // util_errc::invalid_argument: "config: <where>.<key>: <message>".
  [[nodiscard]] error bad(std::string_view key, std::string_view message) const;

 private:
  const detail::toml_table& table_;
  std::string where_;
};

// Whether `name` can be an environment variable's name.
bool is_variable_name(std::string_view name);

}  // namespace tether::config
