#include "runtime/native/tools/args.h"

#include <cmath>
#include <limits>

#include <boost/json/parse.hpp>

#include "util/errors.h"

namespace tether::runtime::native::tool_detail {

namespace json = boost::json;

namespace {

tether::error bad(std::string message) { return {util_errc::invalid_argument, std::move(message)}; }

}  // namespace

std::string missing_argument(std::string_view name) {
  return "missing required argument '" + std::string(name) + "'";
}

std::string wrong_type(std::string_view name, std::string_view expected) {
  return "argument '" + std::string(name) + "' must be " + std::string(expected);
}

result<tool_args> tool_args::parse(const json::value& input, std::initializer_list<std::string_view> allowed) {
  tool_args out;
  if (input.is_null()) return out;
  if (input.is_string()) {
    // Some providers hand over the arguments as the JSON text they streamed.
    boost::system::error_code ec;
    json::value parsed = json::parse(input.get_string(), ec);
    if (ec || !parsed.is_object()) return bad("tool input must be a JSON object of arguments");
    out.object_ = std::move(parsed.as_object());
  } else if (input.is_object()) {
    out.object_ = input.get_object();
  } else {
    return bad("tool input must be a JSON object of arguments");
  }
  for (const auto& kv : out.object_) {
    bool known = false;
    for (const auto name : allowed) known = known || kv.key() == name;
    if (known) continue;
    std::string names;
    for (const auto name : allowed) names += (names.empty() ? "" : ", ") + std::string(name);
    return bad("unknown argument '" + std::string(kv.key()) + "'; expected " +
               (names.empty() ? std::string("no arguments") : "one of: " + names));
  }
  return out;
}

const json::value* tool_args::find(std::string_view name) const {
  const auto* v = object_.if_contains(name);
  if (v == nullptr || v->is_null()) return nullptr;
  return v;
}

result<std::string> tool_args::required_string(std::string_view name) const {
  const auto* v = find(name);
  if (v == nullptr) return bad(missing_argument(name));
  if (!v->is_string()) return bad(wrong_type(name, "a string"));
  return std::string(v->get_string());
}

result<std::optional<std::string>> tool_args::optional_string(std::string_view name) const {
  const auto* v = find(name);
  if (v == nullptr) return std::optional<std::string>{};
  if (!v->is_string()) return bad(wrong_type(name, "a string"));
  return std::optional<std::string>(std::string(v->get_string()));
}

result<std::optional<std::int64_t>> tool_args::optional_int(std::string_view name) const {
  const auto* v = find(name);
  if (v == nullptr) return std::optional<std::int64_t>{};
  if (v->is_int64()) return std::optional<std::int64_t>(v->get_int64());
  if (v->is_uint64()) {
    const auto u = v->get_uint64();
    const auto max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    return std::optional<std::int64_t>(static_cast<std::int64_t>(u > max ? max : u));
  }
  if (v->is_double()) {
    const double d = v->get_double();
    if (std::isfinite(d) && std::trunc(d) == d && std::fabs(d) < 9.0e15)
      return std::optional<std::int64_t>(static_cast<std::int64_t>(d));
  }
  return bad(wrong_type(name, "an integer"));
}

result<std::optional<bool>> tool_args::optional_bool(std::string_view name) const {
  const auto* v = find(name);
  if (v == nullptr) return std::optional<bool>{};
  if (!v->is_bool()) return bad(wrong_type(name, "a boolean (true or false)"));
  return std::optional<bool>(v->get_bool());
}

}  // namespace tether::runtime::native::tool_detail
