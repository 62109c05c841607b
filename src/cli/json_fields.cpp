#include "cli/json_fields.h"

#include <boost/json.hpp>

namespace tether::cli {

namespace json = boost::json;

namespace {
const json::value* field(const json::value& v, std::string_view key) {
  return v.is_object() ? v.as_object().if_contains(key) : nullptr;
}
}  // namespace

std::string str_of(const json::value& v, std::string_view key) {
  const auto* f = field(v, key);
  if (f == nullptr || f->is_null()) return {};
  if (f->is_string()) return std::string(f->as_string());
  return json::serialize(*f);
}

std::int64_t int_of(const json::value& v, std::string_view key) {
  const auto* f = field(v, key);
  if (f == nullptr) return 0;
  if (f->is_int64()) return f->as_int64();
  if (f->is_uint64()) return static_cast<std::int64_t>(f->as_uint64());
  return 0;
}

const json::value& member(const json::value& v, std::string_view key) {
  static const json::value null;
  const auto* f = field(v, key);
  return f != nullptr ? *f : null;
}

const json::array* array_of(const json::value& v, std::string_view key) {
  const auto* f = field(v, key);
  return f != nullptr && f->is_array() ? &f->as_array() : nullptr;
}

}  // namespace tether::cli
