#include "mock/request.h"

#include <boost/json/serialize.hpp>

#include "mock/errors.h"

namespace tether::mock {

namespace json = boost::json;

namespace {

error bad(std::string message) { return {mock_errc::invalid_request, std::move(message)}; }

std::string string_field(const json::object& o, std::string_view key) {
  if (const auto* v = o.if_contains(key); v != nullptr && v->is_string()) return std::string(v->as_string());
  return {};
}

bool bool_field(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_bool() && v->as_bool();
}

// The text of a content value: a string, or parts/blocks whose `text` is
// joined by newlines (images and other media are skipped).
std::string text_of(const json::value& content) {
  if (content.is_string()) return std::string(content.as_string());
  std::string out;
  auto add = [&out](const json::object& part) {
    if (const auto* t = part.if_contains("text"); t != nullptr && t->is_string()) {
      if (!out.empty()) out.push_back('\n');
      out.append(t->as_string());
    }
  };
  if (content.is_array()) {
    for (const auto& p : content.as_array())
      if (p.is_object())
        add(p.as_object());
      else if (p.is_string()) {
        if (!out.empty()) out.push_back('\n');
        out.append(p.as_string());
      }
  } else if (content.is_object()) {
    add(content.as_object());
  }
  return out;
}

std::string text_field(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v == nullptr ? std::string() : text_of(*v);
}

// Tool arguments as JSON text: chat/responses send a string, Anthropic an object.
std::string arguments_text(const json::value* v) {
  if (v == nullptr || v->is_null()) return "{}";
  if (v->is_string()) return std::string(v->as_string());
  return json::serialize(*v);
}

result<const json::array*> optional_array(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  if (v == nullptr || v->is_null()) return static_cast<const json::array*>(nullptr);
  if (!v->is_array()) return bad(std::string(key) + " must be an array");
  return &v->as_array();
}

result<const json::object*> require_object(const json::value& body) {
  if (!body.is_object()) return bad("the request body must be a JSON object");
  return &body.as_object();
}

json::object schema_of(const json::value* v) {
  if (v != nullptr && v->is_object()) return v->as_object();
  return {};
}

message make(role r, std::string text) {
  message m;
  m.role = r;
  m.text = std::move(text);
  return m;
}

message tool_result(std::string call_id, std::string text, bool is_error) {
  message m = make(role::tool_result, std::move(text));
  m.call_id = std::move(call_id);
  m.is_error = is_error;
  return m;
}

// ---- chat ----

result<void> read_chat_message(const json::object& m, conversation& c) {
  const auto r = string_field(m, "role");
  if (r == "system" || r == "developer") {
    c.messages.push_back(make(role::system, text_field(m, "content")));
  } else if (r == "user") {
    c.messages.push_back(make(role::user, text_field(m, "content")));
  } else if (r == "assistant") {
    message a = make(role::assistant, text_field(m, "content"));
    auto calls = optional_array(m, "tool_calls");
    if (!calls) return calls.error();
    if (*calls != nullptr) {
      for (const auto& tc : **calls) {
        if (!tc.is_object()) return bad("tool_calls entries must be objects");
        tool_call call;
        call.id = string_field(tc.as_object(), "id");
        if (const auto* f = tc.as_object().if_contains("function"); f != nullptr && f->is_object()) {
          call.name = string_field(f->as_object(), "name");
          call.arguments = arguments_text(f->as_object().if_contains("arguments"));
        }
        a.calls.push_back(std::move(call));
      }
    }
    c.messages.push_back(std::move(a));
  } else if (r == "tool") {
    c.messages.push_back(tool_result(string_field(m, "tool_call_id"), text_field(m, "content"), false));
  } else if (r == "function") {
    c.messages.push_back(tool_result(string_field(m, "name"), text_field(m, "content"), false));
  } else {
    return bad("unknown message role '" + r + "'");
  }
  return ok();
}

// ---- responses ----

void read_responses_item(const json::object& item, conversation& c) {
  auto type = string_field(item, "type");
  if (type.empty() && item.contains("role")) type = "message";
  if (type == "message") {
    const auto r = string_field(item, "role");
    const auto text = text_field(item, "content");
    if (r == "assistant")
      c.messages.push_back(make(role::assistant, text));
    else if (r == "system" || r == "developer")
      c.messages.push_back(make(role::system, text));
    else
      c.messages.push_back(make(role::user, text));
    return;
  }
  tool_call call;
  call.id = string_field(item, "call_id");
  if (type == "function_call") {
    call.name = string_field(item, "name");
    call.tool_namespace = string_field(item, "namespace");
    call.arguments = arguments_text(item.if_contains("arguments"));
  } else if (type == "custom_tool_call") {
    call.name = string_field(item, "name");
    call.arguments = string_field(item, "input");
    call.kind = tool_kind::custom;
  } else if (type == "local_shell_call") {
    call.name = "local_shell";
    call.arguments = arguments_text(item.if_contains("action"));
    call.kind = tool_kind::local_shell;
  } else if (type == "function_call_output" || type == "custom_tool_call_output" || type == "local_shell_call_output") {
    c.messages.push_back(tool_result(std::move(call.id), text_field(item, "output"), false));
    return;
  } else {
    return;  // reasoning, web_search_call, …
  }
  message a = make(role::assistant, {});
  a.calls.push_back(std::move(call));
  c.messages.push_back(std::move(a));
}

// ---- anthropic ----

// Claude Code hands the model a message the user sent while a turn was
// running as a system entry starting so; it is the user's, so it counts as
// a user message (its directives become the latest instruction).
constexpr std::string_view claude_steer_marker = "The user sent a new message while you were working:";

// Claude Code puts the output of its own local commands (a `/model` it runs
// when it loads a session, say) into user messages as text blocks of their
// own, after a caveat telling the model not to consider them. They are not
// the user's words: the model skips them, so "answered: Blue" after them is
// still the user's answer.
bool claude_local_command_block(std::string_view text) {
  text.remove_prefix(std::min(text.size(), text.find_first_not_of(" \t\r\n")));
  for (std::string_view tag : {"<local-command-caveat>", "<command-name>", "<command-message>", "<local-command-stdout>",
                               "<local-command-stderr>"})
    if (text.starts_with(tag)) return true;
  return false;
}

void read_anthropic_message(const json::object& m, conversation& c) {
  const auto r = string_field(m, "role");
  const auto* content = m.if_contains("content");
  if (r == "system") {
    auto text = content == nullptr ? std::string() : text_of(*content);
    const bool steer = text.find(claude_steer_marker) != std::string::npos;
    c.messages.push_back(make(steer ? role::user : role::system, std::move(text)));
    return;
  }
  if (content == nullptr || !content->is_array()) {
    const auto text = content == nullptr ? std::string() : text_of(*content);
    c.messages.push_back(make(r == "assistant" ? role::assistant : role::user, text));
    return;
  }
  message main = make(r == "assistant" ? role::assistant : role::user, {});
  bool had_results = false;
  bool skipped_local_commands = false;
  for (const auto& b : content->as_array()) {
    if (!b.is_object()) continue;
    const auto& block = b.as_object();
    const auto type = string_field(block, "type");
    if (type == "text") {
      auto text = string_field(block, "text");
      if (main.role == role::user && claude_local_command_block(text)) {
        skipped_local_commands = true;
        continue;
      }
      if (!main.text.empty()) main.text.push_back('\n');
      main.text += text;
    } else if (type == "tool_use" || type == "server_tool_use") {
      tool_call call;
      call.id = string_field(block, "id");
      call.name = string_field(block, "name");
      call.arguments = arguments_text(block.if_contains("input"));
      main.calls.push_back(std::move(call));
    } else if (type == "tool_result") {
      had_results = true;
      c.messages.push_back(
          tool_result(string_field(block, "tool_use_id"), text_field(block, "content"), bool_field(block, "is_error")));
    }
  }
  if (skipped_local_commands && main.text.empty() && !had_results) return;  // nothing of the user's
  if (main.role == role::assistant || !main.text.empty() || !had_results) {
    main.beside_tool_results = had_results;
    c.messages.push_back(std::move(main));
  }
}

}  // namespace

result<conversation> parse_chat_request(const json::value& body) {
  auto o = require_object(body);
  if (!o) return o.error();
  const auto& obj = **o;
  conversation c;
  c.format = wire_format::chat;
  c.model = string_field(obj, "model");
  c.stream = bool_field(obj, "stream");
  if (const auto* so = obj.if_contains("stream_options"); so != nullptr && so->is_object())
    c.include_usage = bool_field(so->as_object(), "include_usage");
  auto messages = optional_array(obj, "messages");
  if (!messages) return messages.error();
  if (*messages == nullptr) return bad("messages is required");
  for (const auto& m : **messages) {
    if (!m.is_object()) return bad("messages entries must be objects");
    TETHER_TRY(read_chat_message(m.as_object(), c));
  }
  for (const auto* key : {"tools", "functions"}) {
    auto tools = optional_array(obj, key);
    if (!tools) return tools.error();
    if (*tools == nullptr) continue;
    for (const auto& t : **tools) {
      if (!t.is_object()) return bad(std::string(key) + " entries must be objects");
      const auto* f = t.as_object().if_contains("function");
      const auto& def = f != nullptr && f->is_object() ? f->as_object() : t.as_object();
      tool_offer offer;
      offer.name = string_field(def, "name");
      offer.description = string_field(def, "description");
      offer.schema = schema_of(def.if_contains("parameters"));
      if (!offer.name.empty()) c.tools.push_back(std::move(offer));
    }
  }
  return c;
}

// The tools of a Responses request; a `namespace` tool's functions are
// offered by their own names, remembering the namespace for the call.
result<void> read_responses_tools(const json::array& tools, const std::string& ns, conversation& c) {
  for (const auto& t : tools) {
    if (!t.is_object()) return bad("tools entries must be objects");
    const auto& def = t.as_object();
    const auto type = string_field(def, "type");
    if (type == "namespace" && ns.empty()) {
      const auto* inner = def.if_contains("tools");
      if (inner != nullptr && inner->is_array()) TETHER_TRY(read_responses_tools(inner->as_array(), string_field(def, "name"), c));
      continue;
    }
    tool_offer offer;
    offer.name = string_field(def, "name");
    offer.description = string_field(def, "description");
    offer.tool_namespace = ns;
    if (type == "function") {
      offer.schema = schema_of(def.if_contains("parameters"));
    } else if (type == "custom") {
      offer.kind = tool_kind::custom;
    } else if (type == "local_shell") {
      offer.name = "local_shell";
      offer.kind = tool_kind::local_shell;
    } else {
      continue;  // hosted tools (web_search, …)
    }
    if (!offer.name.empty()) c.tools.push_back(std::move(offer));
  }
  return ok();
}

result<conversation> parse_responses_request(const json::value& body) {
  auto o = require_object(body);
  if (!o) return o.error();
  const auto& obj = **o;
  conversation c;
  c.format = wire_format::responses;
  c.model = string_field(obj, "model");
  c.stream = bool_field(obj, "stream");
  if (auto instructions = string_field(obj, "instructions"); !instructions.empty())
    c.messages.push_back(make(role::system, std::move(instructions)));
  if (const auto* input = obj.if_contains("input"); input != nullptr) {
    if (input->is_string()) {
      c.messages.push_back(make(role::user, std::string(input->as_string())));
    } else if (input->is_array()) {
      for (const auto& item : input->as_array()) {
        if (!item.is_object()) return bad("input items must be objects");
        read_responses_item(item.as_object(), c);
      }
    } else if (!input->is_null()) {
      return bad("input must be a string or an array");
    }
  }
  auto tools = optional_array(obj, "tools");
  if (!tools) return tools.error();
  if (*tools != nullptr) {
    TETHER_TRY(read_responses_tools(**tools, "", c));
  }
  return c;
}

result<conversation> parse_anthropic_request(const json::value& body) {
  auto o = require_object(body);
  if (!o) return o.error();
  const auto& obj = **o;
  conversation c;
  c.format = wire_format::anthropic;
  c.model = string_field(obj, "model");
  c.stream = bool_field(obj, "stream");
  if (const auto* system = obj.if_contains("system"); system != nullptr && !system->is_null()) {
    if (!system->is_string() && !system->is_array()) return bad("system must be a string or an array of blocks");
    c.messages.push_back(make(role::system, text_of(*system)));
  }
  auto messages = optional_array(obj, "messages");
  if (!messages) return messages.error();
  if (*messages == nullptr) return bad("messages is required");
  for (const auto& m : **messages) {
    if (!m.is_object()) return bad("messages entries must be objects");
    read_anthropic_message(m.as_object(), c);
  }
  auto tools = optional_array(obj, "tools");
  if (!tools) return tools.error();
  if (*tools != nullptr) {
    for (const auto& t : **tools) {
      if (!t.is_object()) return bad("tools entries must be objects");
      tool_offer offer;
      offer.name = string_field(t.as_object(), "name");
      offer.description = string_field(t.as_object(), "description");
      offer.schema = schema_of(t.as_object().if_contains("input_schema"));
      if (!offer.name.empty()) c.tools.push_back(std::move(offer));
    }
  }
  return c;
}

result<conversation> parse_request(wire_format format, const json::value& body) {
  switch (format) {
    case wire_format::chat:
      return parse_chat_request(body);
    case wire_format::responses:
      return parse_responses_request(body);
    case wire_format::anthropic:
      return parse_anthropic_request(body);
  }
  return bad("unknown wire format");
}

}  // namespace tether::mock
