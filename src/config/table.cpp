#include "config/table.h"

#include <filesystem>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "config/toml_table.h"
#include "util/errors.h"

namespace tether::config {

table_reader::table_reader(const detail::toml_table& table, std::string where)
    : table_(table), where_(std::move(where)) {}

bool table_reader::has(std::string_view key) const { return table_.t.contains(key); }

error table_reader::bad(std::string_view key, std::string_view message) const {
  return make_error(util_errc::invalid_argument, fmt::format("config: {}.{}{}", where_, key, message));
}

result<std::string> table_reader::text(std::string_view key, std::string fallback) const {
  const auto* node = table_.t.get(key);
  if (node == nullptr) return fallback;
  auto v = node->value<std::string>();
  if (!v) return bad(key, " must be a string");
  return *v;
}

result<std::int64_t> table_reader::integer(std::string_view key, std::int64_t fallback, std::int64_t min) const {
  const auto* node = table_.t.get(key);
  if (node == nullptr) return fallback;
  if (!node->is_integer()) return bad(key, " must be an integer");
  const auto v = node->value<std::int64_t>().value_or(0);
  if (v < min) return bad(key, fmt::format(" must be at least {}", min));
  return v;
}

result<bool> table_reader::boolean(std::string_view key, bool fallback) const {
  const auto* node = table_.t.get(key);
  if (node == nullptr) return fallback;
  if (!node->is_boolean()) return bad(key, " must be true or false");
  return node->value<bool>().value_or(fallback);
}

result<std::vector<std::string>> table_reader::strings(std::string_view key) const {
  std::vector<std::string> out;
  const auto* node = table_.t.get(key);
  if (node == nullptr) return out;
  const auto* list = node->as_array();
  if (list == nullptr) return bad(key, " must be an array of strings");
  for (const auto& item : *list) {
    const auto v = item.value<std::string>();
    if (!v) return bad(key, " must be an array of strings");
    out.push_back(*v);
  }
  return out;
}

result<std::vector<std::string>> table_reader::variable_names(std::string_view key) const {
  const auto* node = table_.t.get(key);
  if (node != nullptr && node->as_array() == nullptr) return bad(key, " must be an array of variable names");
  auto names = strings(key);
  if (!names) return bad(key, " must be an array of variable names");
  for (const auto& n : *names)
    if (!is_variable_name(n)) return bad(key, ": every entry must be a variable name (letters, digits, _)");
  return names;
}

result<std::map<std::string, std::string, std::less<>>> table_reader::variables(std::string_view key) const {
  std::map<std::string, std::string, std::less<>> out;
  const auto* node = table_.t.get(key);
  if (node == nullptr) return out;
  const auto* table = node->as_table();
  if (table == nullptr) return bad(key, " must be a table of NAME = \"value\"");
  for (const auto& [name, value] : *table) {
    const auto v = value.value<std::string>();
    if (!v || !is_variable_name(name.str())) return bad(key, " must be a table of NAME = \"value\"");
    out.emplace(std::string(name.str()), *v);
  }
  return out;
}

result<std::string> table_reader::absolute_path(std::string_view key) const {
  auto v = text(key, "");
  if (!v) return v.error();
  if (!v->empty() && !std::filesystem::path(*v).is_absolute())
    return bad(key, fmt::format(": \"{}\" is not an absolute path", *v));
  return v;
}

result<std::string> table_reader::url(std::string_view key) const {
  auto v = text(key, "");
  if (!v) return v.error();
  if (!v->empty() && !v->starts_with("http://") && !v->starts_with("https://"))
    return bad(key, " must start with http:// or https://");
  return v;
}

bool is_variable_name(std::string_view n) {
  if (n.empty() || (n[0] >= '0' && n[0] <= '9')) return false;
  for (const char c : n)
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

}  // namespace tether::config
