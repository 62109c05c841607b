#include "wire_client.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace tether::mock::test {

namespace json = boost::json;

namespace {

json::object obj(std::string_view text) { return json::parse(text).as_object(); }

std::string str(const json::value* v) {
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
}

std::uint64_t num(const json::value* v) {
  if (v == nullptr) return 0;
  if (v->is_uint64()) return v->as_uint64();
  if (v->is_int64()) return static_cast<std::uint64_t>(v->as_int64());
  return 0;
}

const json::value* at(const json::value& v, std::initializer_list<std::string_view> path) {
  const json::value* cur = &v;
  for (const auto key : path) {
    if (!cur->is_object()) return nullptr;
    cur = cur->as_object().if_contains(key);
    if (cur == nullptr) return nullptr;
  }
  return cur;
}

json::array chat_messages(const std::vector<turn>& history, const std::string& system) {
  json::array out;
  if (!system.empty()) out.push_back(json::object{{"role", "system"}, {"content", system}});
  for (const auto& t : history) {
    if (t.r == role::user) {
      out.push_back(json::object{{"role", "user"}, {"content", t.text}});
    } else if (t.r == role::assistant && t.call) {
      json::object fn{{"name", t.call->name}, {"arguments", t.call->arguments}};
      json::object call{{"id", t.call->id}, {"type", "function"}, {"function", fn}};
      out.push_back(json::object{{"role", "assistant"}, {"content", nullptr}, {"tool_calls", json::array{call}}});
    } else if (t.r == role::assistant) {
      out.push_back(json::object{{"role", "assistant"}, {"content", t.text}});
    } else if (t.r == role::tool_result) {
      out.push_back(json::object{{"role", "tool"}, {"tool_call_id", t.call_id}, {"content", t.text}});
    }
  }
  return out;
}

json::array responses_input(const std::vector<turn>& history) {
  json::array out;
  for (const auto& t : history) {
    if (t.r == role::user) {
      json::object part{{"type", "input_text"}, {"text", t.text}};
      out.push_back(json::object{{"type", "message"}, {"role", "user"}, {"content", json::array{part}}});
    } else if (t.r == role::assistant && t.call) {
      out.push_back(json::object{{"type", "function_call"},
                                 {"call_id", t.call->id},
                                 {"name", t.call->name},
                                 {"arguments", t.call->arguments}});
    } else if (t.r == role::assistant) {
      json::object part{{"type", "output_text"}, {"text", t.text}};
      out.push_back(json::object{{"type", "message"}, {"role", "assistant"}, {"content", json::array{part}}});
    } else if (t.r == role::tool_result) {
      out.push_back(json::object{{"type", "function_call_output"}, {"call_id", t.call_id}, {"output", t.text}});
    }
  }
  return out;
}

json::array anthropic_messages(const std::vector<turn>& history) {
  json::array out;
  for (const auto& t : history) {
    if (t.r == role::user) {
      out.push_back(json::object{{"role", "user"}, {"content", t.text}});
    } else if (t.r == role::assistant && t.call) {
      json::object block{
          {"type", "tool_use"}, {"id", t.call->id}, {"name", t.call->name}, {"input", json::parse(t.call->arguments)}};
      out.push_back(json::object{{"role", "assistant"}, {"content", json::array{block}}});
    } else if (t.r == role::assistant) {
      json::object block{{"type", "text"}, {"text", t.text}};
      out.push_back(json::object{{"role", "assistant"}, {"content", json::array{block}}});
    } else if (t.r == role::tool_result) {
      json::object block{
          {"type", "tool_result"}, {"tool_use_id", t.call_id}, {"content", t.text}, {"is_error", t.is_error}};
      out.push_back(json::object{{"role", "user"}, {"content", json::array{block}}});
    }
  }
  return out;
}

void read_chat_stream(reply_view& v) {
  for (const auto& e : v.events) {
    if (e.data == "[DONE]") {
      v.complete = true;
      continue;
    }
    const auto chunk = json::parse(e.data);
    if (const auto* u = at(chunk, {"usage"}); u != nullptr && u->is_object()) {
      v.usage.input_tokens = num(at(*u, {"prompt_tokens"}));
      v.usage.output_tokens = num(at(*u, {"completion_tokens"}));
      v.usage.cached_tokens = num(at(*u, {"prompt_tokens_details", "cached_tokens"}));
    }
    const auto& choices = chunk.as_object().at("choices").as_array();
    if (choices.empty()) continue;
    const auto& choice = choices[0];
    if (const auto* f = at(choice, {"finish_reason"}); f != nullptr && f->is_string()) v.stop = str(f);
    const auto* delta = at(choice, {"delta"});
    if (const auto* c = at(*delta, {"content"}); c != nullptr && c->is_string() && !c->as_string().empty()) {
      v.text += str(c);
      ++v.deltas;
    }
    if (const auto* calls = at(*delta, {"tool_calls"}); calls != nullptr) {
      const auto& call = calls->as_array()[0];
      if (!v.call) v.call.emplace();
      if (const auto* id = at(call, {"id"})) v.call->id = str(id);
      if (const auto* name = at(call, {"function", "name"})) v.call->name = str(name);
      if (const auto* args = at(call, {"function", "arguments"}); args != nullptr && !args->as_string().empty()) {
        v.call->arguments += str(args);
        ++v.deltas;
      }
    }
  }
}

void read_responses_item(reply_view& v, const json::value& item) {
  const auto type = str(at(item, {"type"}));
  if (type == "message") {
    v.text = str(at(item.as_object().at("content").as_array()[0], {"text"}));
  } else if (type == "function_call" || type == "custom_tool_call") {
    tool_call c;
    c.id = str(at(item, {"call_id"}));
    c.name = str(at(item, {"name"}));
    c.arguments = type == "function_call" ? str(at(item, {"arguments"})) : str(at(item, {"input"}));
    v.call = c;
  }
}

void read_responses_usage(reply_view& v, const json::value& response) {
  v.stop = str(at(response, {"status"}));
  v.usage.input_tokens = num(at(response, {"usage", "input_tokens"}));
  v.usage.cached_tokens = num(at(response, {"usage", "input_tokens_details", "cached_tokens"}));
  v.usage.output_tokens = num(at(response, {"usage", "output_tokens"}));
}

void read_responses_stream(reply_view& v) {
  for (const auto& e : v.events) {
    const auto data = json::parse(e.data);
    if (e.event == "response.output_text.delta" || e.event == "response.function_call_arguments.delta") ++v.deltas;
    if (e.event == "response.output_text.delta") v.text += str(at(data, {"delta"}));
    if (e.event == "response.output_item.done") read_responses_item(v, *at(data, {"item"}));
    if (e.event == "response.completed") {
      read_responses_usage(v, *at(data, {"response"}));
      v.complete = true;
    }
  }
}

void read_anthropic_usage(reply_view& v, const json::value& usage) {
  if (const auto* in = at(usage, {"input_tokens"}))
    v.usage.input_tokens = num(in) + num(at(usage, {"cache_read_input_tokens"}));
  if (const auto* c = at(usage, {"cache_read_input_tokens"})) v.usage.cached_tokens = num(c);
  if (const auto* out = at(usage, {"output_tokens"})) v.usage.output_tokens = num(out);
}

void read_anthropic_stream(reply_view& v) {
  for (const auto& e : v.events) {
    const auto data = json::parse(e.data);
    if (e.event == "message_start") read_anthropic_usage(v, *at(data, {"message", "usage"}));
    if (e.event == "content_block_start") {
      const auto* block = at(data, {"content_block"});
      if (str(at(*block, {"type"})) == "tool_use") {
        v.call.emplace();
        v.call->id = str(at(*block, {"id"}));
        v.call->name = str(at(*block, {"name"}));
      }
    }
    if (e.event == "content_block_delta") {
      ++v.deltas;
      const auto* d = at(data, {"delta"});
      if (str(at(*d, {"type"})) == "text_delta")
        v.text += str(at(*d, {"text"}));
      else
        v.call->arguments += str(at(*d, {"partial_json"}));
    }
    if (e.event == "message_delta") {
      v.stop = str(at(data, {"delta", "stop_reason"}));
      read_anthropic_usage(v, *at(data, {"usage"}));
    }
    if (e.event == "message_stop") v.complete = true;
  }
}

void read_json_body(wire_format w, reply_view& v) {
  const auto& j = v.json;
  if (w == wire_format::chat) {
    const auto& choice = j.as_object().at("choices").as_array()[0];
    v.stop = str(at(choice, {"finish_reason"}));
    v.text = str(at(choice, {"message", "content"}));
    if (const auto* calls = at(choice, {"message", "tool_calls"})) {
      const auto& call = calls->as_array()[0];
      v.call = tool_call{str(at(call, {"id"})), str(at(call, {"function", "name"})),
                         str(at(call, {"function", "arguments"}))};
    }
    v.usage.input_tokens = num(at(j, {"usage", "prompt_tokens"}));
    v.usage.output_tokens = num(at(j, {"usage", "completion_tokens"}));
    v.usage.cached_tokens = num(at(j, {"usage", "prompt_tokens_details", "cached_tokens"}));
  } else if (w == wire_format::responses) {
    read_responses_item(v, j.as_object().at("output").as_array()[0]);
    read_responses_usage(v, j);
  } else {
    const auto& block = j.as_object().at("content").as_array()[0];
    if (str(at(block, {"type"})) == "tool_use")
      v.call = tool_call{str(at(block, {"id"})), str(at(block, {"name"})), json::serialize(*at(block, {"input"}))};
    else
      v.text = str(at(block, {"text"}));
    v.stop = str(at(j, {"stop_reason"}));
    read_anthropic_usage(v, *at(j, {"usage"}));
  }
  v.complete = true;
}

}  // namespace

std::string route_of(wire_format w) {
  switch (w) {
    case wire_format::chat:
      return "/v1/chat/completions";
    case wire_format::responses:
      return "/v1/responses";
    case wire_format::anthropic:
      return "/v1/messages?beta=true";
  }
  return {};
}

json::value build_request(wire_format w, const std::vector<turn>& history, const std::vector<tool_def>& tools,
                          bool stream, const std::string& system) {
  json::object body{{"model", "test-model"}, {"stream", stream}};
  json::array tool_list;
  if (w == wire_format::chat) {
    body["messages"] = chat_messages(history, system);
    if (stream) body["stream_options"] = json::object{{"include_usage", true}};
    for (const auto& t : tools)
      tool_list.push_back(
          json::object{{"type", "function"}, {"function", json::object{{"name", t.name}, {"parameters", t.schema}}}});
  } else if (w == wire_format::responses) {
    if (!system.empty()) body["instructions"] = system;
    body["input"] = responses_input(history);
    for (const auto& t : tools)
      tool_list.push_back(json::object{{"type", "function"}, {"name", t.name}, {"parameters", t.schema}});
  } else {
    if (!system.empty()) body["system"] = system;
    body["max_tokens"] = 4096;
    body["messages"] = anthropic_messages(history);
    for (const auto& t : tools) tool_list.push_back(json::object{{"name", t.name}, {"input_schema", t.schema}});
  }
  if (!tool_list.empty()) body["tools"] = std::move(tool_list);
  return body;
}

reply_view read_reply(wire_format w, bool stream, const http_response& r) {
  reply_view v;
  v.status = r.status;
  v.headers = r.headers;
  if (r.status != 200) {
    boost::system::error_code ec;
    v.json = json::parse(r.body, ec);
    return v;
  }
  if (!stream) {
    boost::system::error_code ec;
    v.json = json::parse(r.body, ec);
    if (!ec) read_json_body(w, v);
    return v;
  }
  v.events = parse_sse(r.body);
  if (w == wire_format::chat)
    read_chat_stream(v);
  else if (w == wire_format::responses)
    read_responses_stream(v);
  else
    read_anthropic_stream(v);
  if (!r.complete) v.complete = false;
  return v;
}

void scripted_client::user(std::string text) {
  turn t;
  t.r = role::user;
  t.text = std::move(text);
  history.push_back(std::move(t));
}

reply_view scripted_client::step() {
  const auto body = json::serialize(build_request(format_, history, tools, stream_, system));
  auto v = read_reply(format_, stream_, http_call(port_, "POST", route_of(format_), body));
  if (v.status == 200 && v.complete) {
    turn t;
    t.r = role::assistant;
    t.text = v.text;
    t.call = v.call;
    history.push_back(std::move(t));
  }
  return v;
}

void scripted_client::tool_result(std::string text, bool is_error) {
  std::string id;
  for (auto it = history.rbegin(); it != history.rend(); ++it)
    if (it->call) {
      id = it->call->id;
      break;
    }
  turn t;
  t.r = role::tool_result;
  t.text = std::move(text);
  t.call_id = id;
  t.is_error = is_error;
  history.push_back(std::move(t));
}

std::pair<std::string, std::vector<std::string>> scripted_client::run_to_text(const std::string& result,
                                                                              int max_steps) {
  std::vector<std::string> called;
  for (int i = 0; i < max_steps; ++i) {
    const auto v = step();
    if (v.status != 200 || !v.complete) return {"<status " + std::to_string(v.status) + ">", called};
    if (!v.call) return {v.text, called};
    called.push_back(v.call->name);
    tool_result(result);
  }
  return {"<too many steps>", called};
}

tool_def bash_tool() {
  return {"bash", obj(R"j({"type":"object","properties":{"command":{"type":"string"}},"required":["command"]})j")};
}
tool_def exec_command_tool() {
  return {"exec_command", obj(R"j({"type":"object","properties":{"cmd":{"type":"string"},"workdir":{"type":"string"},
                  "yield_time_ms":{"type":"number"},"max_output_tokens":{"type":"number"}},
                  "required":["cmd"],"additionalProperties":false})j")};
}
tool_def array_shell_tool() {
  return {"shell", obj(R"j({"type":"object","properties":{"command":{"type":"array","items":{"type":"string"}},
                          "workdir":{"type":"string"},"timeout_ms":{"type":"number"}},"required":["command"]})j")};
}
tool_def write_tool() {
  return {"write",
          obj(R"j({"type":"object","properties":{"path":{"type":"string","description":"relative to the workspace"},
                          "content":{"type":"string"}},"required":["path","content"]})j")};
}
tool_def claude_write_tool() {
  return {"Write", obj(R"j({"type":"object","properties":{"file_path":{"type":"string",
                          "description":"The absolute path to the file to write (must be absolute, not relative)"},
                          "content":{"type":"string"}},"required":["file_path","content"]})j")};
}
tool_def opencode_write_tool() {
  return {"write", obj(R"j({"type":"object","properties":{"content":{"type":"string"},"filePath":{"type":"string",
                          "description":"The absolute path to the file to write (must be absolute, not relative)"}},
                          "required":["content","filePath"]})j")};
}
tool_def ask_user_tool() {
  return {"ask_user", obj(R"j({"type":"object","properties":{"question":{"type":"string"},
                             "options":{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"},
                             "label":{"type":"string"}},"required":["id","label"]}},
                             "multi_select":{"type":"boolean"},"allow_other":{"type":"boolean"}},
                             "required":["question","options"]})j")};
}
tool_def claude_ask_tool() {
  return {"AskUserQuestion",
          obj(R"j({"type":"object","properties":{"questions":{"type":"array","items":{"type":"object","properties":{
                  "question":{"type":"string"},"header":{"type":"string"},
                  "options":{"type":"array","items":{"type":"object","properties":{"label":{"type":"string"},
                  "description":{"type":"string"}},"required":["label","description"]}},
                  "multiSelect":{"type":"boolean"}},"required":["question","header","options","multiSelect"]}}},
                  "required":["questions"]})j")};
}
tool_def write_plan_tool() {
  return {"write_plan", obj(R"j({"type":"object","properties":{"steps":{"type":"array","items":{"type":"string"}}},
                               "required":["steps"]})j")};
}
tool_def update_plan_tool() {
  return {"update_plan", obj(R"j({"type":"object","properties":{"explanation":{"type":"string"},
                                "plan":{"type":"array","items":{"type":"object","properties":{"step":{"type":"string"},
                                "status":{"type":"string","description":"One of: pending, in_progress, completed"}},
                                "required":["step","status"]}}},"required":["plan"]})j")};
}
tool_def todowrite_tool() {
  return {"todowrite", obj(R"j({"type":"object","properties":{"todos":{"type":"array","items":{"type":"object",
                              "properties":{"content":{"type":"string"},"status":{"type":"string"},
                              "priority":{"type":"string"},"id":{"type":"string"}},
                              "required":["content","status","priority","id"]}}},"required":["todos"]})j")};
}
tool_def opencode_bash_tool() {
  return {"bash", obj(R"j({"type":"object","properties":{"command":{"type":"string"},"timeout":{"type":"number",
                         "description":"Optional timeout in milliseconds"},"workdir":{"type":"string"},
                         "description":{"type":"string"}},"required":["command","description"]})j")};
}

}  // namespace tether::mock::test
