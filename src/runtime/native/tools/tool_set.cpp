#include "runtime/native/tools/tool.h"

#include <boost/json/array.hpp>

#include "runtime/native/tools/local_tools.h"
#include "util/check.h"

namespace tether::runtime::native {

namespace json = boost::json;

void tool_set::add(std::unique_ptr<tool> t) {
  TETHER_CHECK(t != nullptr, "tool_set::add(nullptr)");
  TETHER_CHECK(find(t->spec().name) == nullptr, "tool_set::add: a tool named '" + t->spec().name + "' exists");
  tools_.push_back(std::move(t));
}

const tool* tool_set::find(std::string_view name) const {
  for (const auto& t : tools_)
    if (t->spec().name == name) return t.get();
  return nullptr;
}

std::vector<tool_spec> tool_set::specs() const {
  std::vector<tool_spec> out;
  out.reserve(tools_.size());
  for (const auto& t : tools_) out.push_back(t->spec());
  return out;
}

tool_set make_local_tools() {
  tool_set set;
  set.add(tool_detail::make_read_tool());
  set.add(tool_detail::make_write_tool());
  set.add(tool_detail::make_edit_tool());
  set.add(tool_detail::make_list_tool());
  set.add(tool_detail::make_glob_tool());
  set.add(tool_detail::make_grep_tool());
  set.add(tool_detail::make_bash_tool());
  set.add(tool_detail::make_ask_user_tool());
  return set;
}

namespace tool_detail {

json::object string_property(std::string_view description) {
  json::object o;
  o["type"] = "string";
  o["description"] = description;
  return o;
}

json::object integer_property(std::string_view description, std::int64_t minimum) {
  json::object o;
  o["type"] = "integer";
  o["minimum"] = minimum;
  o["description"] = description;
  return o;
}

json::object boolean_property(std::string_view description) {
  json::object o;
  o["type"] = "boolean";
  o["description"] = description;
  return o;
}

json::object object_schema(json::object properties, std::initializer_list<std::string_view> required) {
  json::object o;
  o["type"] = "object";
  o["properties"] = std::move(properties);
  json::array req;
  for (const auto r : required) req.emplace_back(r);
  o["required"] = std::move(req);
  o["additionalProperties"] = false;
  return o;
}

}  // namespace tool_detail

}  // namespace tether::runtime::native
