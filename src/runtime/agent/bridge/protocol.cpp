#include "runtime/agent/bridge/protocol.h"

#include <boost/json/array.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "runtime/agent/errors.h"

namespace tether::runtime::agent::protocol {

namespace json = boost::json;

namespace {

tether::error malformed(std::string reason) { return {util_errc::malformed_json, std::move(reason)}; }
tether::error bad_reply(std::string reason) { return {agent_errc::bad_reply, std::move(reason)}; }

std::string line_of(const json::value& v) { return json::serialize(v) + "\n"; }

// The parsed object of a reply line, or why it is not one; `ok` says which kind.
result<json::object> reply_object(std::string_view line) {
  boost::system::error_code ec;
  auto v = json::parse(line, ec);
  if (ec) return bad_reply("the reply is not JSON: " + ec.message());
  if (!v.is_object()) return bad_reply("the reply is not a JSON object");
  const auto* ok = v.as_object().if_contains("ok");
  if (ok == nullptr || !ok->is_bool()) return bad_reply("the reply has no boolean \"ok\"");
  return std::move(v.as_object());
}

refused refusal_of(const json::object& o) {
  const auto* e = o.if_contains("error");
  return {e != nullptr && e->is_string() ? std::string(e->as_string()) : std::string("refused without a reason")};
}

}  // namespace

result<request> parse_request(std::string_view line) {
  boost::system::error_code ec;
  auto v = json::parse(line, ec);
  if (ec) return malformed("the request is not JSON: " + ec.message());
  if (!v.is_object()) return malformed("the request is not a JSON object");
  auto& o = v.as_object();
  request r;
  const auto* token = o.if_contains("token");
  if (token == nullptr || !token->is_string()) return malformed("the request has no string \"token\"");
  r.token = std::string(token->as_string());
  const auto* op_field = o.if_contains("op");
  if (op_field == nullptr || !op_field->is_string()) return malformed("the request has no string \"op\"");
  if (op_field->as_string() == "list") {
    r.kind = op::list;
    return r;
  }
  if (op_field->as_string() != "call") {
    return malformed("unknown op \"" + std::string(op_field->as_string()) + "\" (list or call)");
  }
  r.kind = op::call;
  const auto* tool = o.if_contains("tool");
  if (tool == nullptr || !tool->is_string()) return malformed("a call has no string \"tool\"");
  r.tool = std::string(tool->as_string());
  auto* arguments = o.if_contains("arguments");
  if (arguments == nullptr || !arguments->is_object()) return malformed("a call has no object \"arguments\"");
  r.arguments = std::move(arguments->as_object());
  return r;
}

std::string encode_request(const request& r) {
  json::object o;
  o["token"] = r.token;
  o["op"] = r.kind == op::list ? "list" : "call";
  if (r.kind == op::call) {
    o["tool"] = r.tool;
    o["arguments"] = r.arguments;
  }
  return line_of(o);
}

std::string list_reply(const std::vector<tool_spec>& tools) {
  json::array listed;
  listed.reserve(tools.size());
  for (const auto& t : tools) {
    listed.push_back(json::object{{"name", t.name}, {"description", t.description}, {"inputSchema", t.input_schema}});
  }
  return line_of(json::object{{"ok", true}, {"tools", std::move(listed)}});
}

std::string call_reply(const tool_reply& reply) {
  return line_of(json::object{{"ok", true}, {"content", reply.content}, {"is_error", reply.is_error}});
}

std::string refusal(std::string_view reason) { return line_of(json::object{{"ok", false}, {"error", reason}}); }

result<std::variant<std::vector<tool_spec>, refused>> parse_list_reply(std::string_view line) {
  auto o = reply_object(line);
  if (!o) return o.error();
  if (!o->at("ok").as_bool()) return {refusal_of(*o)};
  const auto* tools = o->if_contains("tools");
  if (tools == nullptr || !tools->is_array()) return bad_reply("a list reply has no array \"tools\"");
  std::vector<tool_spec> out;
  for (const auto& t : tools->as_array()) {
    const auto* name = t.is_object() ? t.as_object().if_contains("name") : nullptr;
    if (name == nullptr || !name->is_string()) return bad_reply("a listed tool has no string \"name\"");
    tool_spec spec;
    spec.name = std::string(name->as_string());
    if (const auto* d = t.as_object().if_contains("description"); d != nullptr && d->is_string()) {
      spec.description = std::string(d->as_string());
    }
    if (const auto* s = t.as_object().if_contains("inputSchema"); s != nullptr) spec.input_schema = *s;
    out.push_back(std::move(spec));
  }
  return {std::move(out)};
}

result<std::variant<tool_reply, refused>> parse_call_reply(std::string_view line) {
  auto o = reply_object(line);
  if (!o) return o.error();
  if (!o->at("ok").as_bool()) return {refusal_of(*o)};
  const auto* content = o->if_contains("content");
  if (content == nullptr || !content->is_string()) return bad_reply("a call reply has no string \"content\"");
  const auto* is_error = o->if_contains("is_error");
  if (is_error != nullptr && !is_error->is_bool()) return bad_reply("a call reply's \"is_error\" is not a boolean");
  return {tool_reply{std::string(content->as_string()), is_error != nullptr && is_error->as_bool()}};
}

}  // namespace tether::runtime::agent::protocol
