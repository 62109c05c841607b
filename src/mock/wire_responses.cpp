// OpenAI Responses API responses.
#include "mock/wire.h"

#include <boost/json/parse.hpp>

namespace tether::mock::detail {

namespace json = boost::json;

namespace {

json::object usage_json(const usage_figures& u) {
  json::object in_details;
  in_details["cached_tokens"] = u.cached_tokens;
  json::object out_details;
  out_details["reasoning_tokens"] = 0;
  json::object o;
  o["input_tokens"] = u.input_tokens;
  o["input_tokens_details"] = std::move(in_details);
  o["output_tokens"] = u.output_tokens;
  o["output_tokens_details"] = std::move(out_details);
  o["total_tokens"] = u.input_tokens + u.output_tokens;
  return o;
}

json::object response_object(const response_meta& meta, std::string_view status, json::array output,
                             const usage_figures* u) {
  json::object r;
  r["id"] = "resp_" + meta.suffix;
  r["object"] = "response";
  r["created_at"] = meta.created;
  r["status"] = status;
  r["model"] = meta.model;
  r["output"] = std::move(output);
  r["error"] = nullptr;
  r["incomplete_details"] = nullptr;
  r["usage"] = u != nullptr ? json::value(usage_json(*u)) : json::value(nullptr);
  return r;
}

json::object text_part(std::string_view text) {
  json::object p;
  p["type"] = "output_text";
  p["text"] = text;
  p["annotations"] = json::array();
  return p;
}

std::string item_id(const model_output& out, const response_meta& meta) {
  if (!out.call) return "msg_" + meta.suffix;
  switch (out.call->kind) {
    case tool_kind::custom:
      return "ctc_" + meta.suffix;
    case tool_kind::local_shell:
      return "lsh_" + meta.suffix;
    case tool_kind::function:
      break;
  }
  return "fc_" + meta.suffix;
}

// The output item; `done` false gives the in-progress shape of output_item.added.
json::object output_item(const model_output& out, const response_meta& meta, bool done) {
  json::object item;
  item["id"] = item_id(out, meta);
  item["status"] = done ? "completed" : "in_progress";
  if (!out.call) {
    item["type"] = "message";
    item["role"] = "assistant";
    json::array content;
    if (done) content.emplace_back(text_part(out.text));
    item["content"] = std::move(content);
    return item;
  }
  item["call_id"] = out.call->id;
  switch (out.call->kind) {
    case tool_kind::function:
      item["type"] = "function_call";
      item["name"] = out.call->name;
      if (!out.call->tool_namespace.empty()) item["namespace"] = out.call->tool_namespace;
      item["arguments"] = done ? out.call->arguments : std::string();
      break;
    case tool_kind::custom:
      item["type"] = "custom_tool_call";
      item["name"] = out.call->name;
      item["input"] = done ? out.call->arguments : std::string();
      break;
    case tool_kind::local_shell: {
      item["type"] = "local_shell_call";
      boost::system::error_code ec;
      auto args = json::parse(out.call->arguments, ec);
      json::object action;
      action["type"] = "exec";
      if (!ec && args.is_object()) {
        if (const auto* cmd = args.as_object().if_contains("command")) action["command"] = *cmd;
        if (const auto* t = args.as_object().if_contains("timeout_ms")) action["timeout_ms"] = *t;
      }
      action["env"] = json::object();
      action["working_directory"] = nullptr;
      action["user"] = nullptr;
      item["action"] = std::move(action);
      break;
    }
  }
  return item;
}

class event_writer {
 public:
  explicit event_writer(std::vector<sse_event>& out) : out_(out) {}
  void add(std::string_view type, json::object data, bool delta = false) {
    json::object e;
    e["type"] = type;
    e["sequence_number"] = seq_++;
    for (auto& kv : data) e[kv.key()] = std::move(kv.value());
    out_.push_back(sse_event{sse(type, e), delta});
  }

 private:
  std::vector<sse_event>& out_;
  std::int64_t seq_ = 0;
};

json::object located(const std::string& id) {
  json::object o;
  o["item_id"] = id;
  o["output_index"] = 0;
  return o;
}

}  // namespace

json::object responses_json(const model_output& out, const usage_figures& u, const response_meta& meta) {
  json::array output;
  output.emplace_back(output_item(out, meta, true));
  return response_object(meta, "completed", std::move(output), &u);
}

std::vector<sse_event> responses_stream(const model_output& out, const usage_figures& u, const response_meta& meta,
                                        const stream_options& opts) {
  std::vector<sse_event> events;
  event_writer w(events);
  auto wrap = [](json::object response) {
    json::object o;
    o["response"] = std::move(response);
    return o;
  };
  w.add("response.created", wrap(response_object(meta, "in_progress", {}, nullptr)));
  w.add("response.in_progress", wrap(response_object(meta, "in_progress", {}, nullptr)));
  const auto id = item_id(out, meta);
  json::object added;
  added["output_index"] = 0;
  added["item"] = output_item(out, meta, false);
  w.add("response.output_item.added", std::move(added));
  if (!out.call) {
    auto part_added = located(id);
    part_added["content_index"] = 0;
    part_added["part"] = text_part("");
    w.add("response.content_part.added", std::move(part_added));
    for (const auto& piece : split_deltas(out.text, opts.delta_chars)) {
      auto d = located(id);
      d["content_index"] = 0;
      d["delta"] = piece;
      d["logprobs"] = json::array();
      w.add("response.output_text.delta", std::move(d), true);
    }
    auto text_done = located(id);
    text_done["content_index"] = 0;
    text_done["text"] = out.text;
    text_done["logprobs"] = json::array();
    w.add("response.output_text.done", std::move(text_done));
    auto part_done = located(id);
    part_done["content_index"] = 0;
    part_done["part"] = text_part(out.text);
    w.add("response.content_part.done", std::move(part_done));
  } else if (out.call->kind == tool_kind::function) {
    for (const auto& piece : split_deltas(out.call->arguments, opts.delta_chars)) {
      auto d = located(id);
      d["delta"] = piece;
      w.add("response.function_call_arguments.delta", std::move(d), true);
    }
    auto done = located(id);
    done["name"] = out.call->name;
    done["arguments"] = out.call->arguments;
    w.add("response.function_call_arguments.done", std::move(done));
  } else if (out.call->kind == tool_kind::custom) {
    for (const auto& piece : split_deltas(out.call->arguments, opts.delta_chars)) {
      auto d = located(id);
      d["delta"] = piece;
      w.add("response.custom_tool_call_input.delta", std::move(d), true);
    }
    auto done = located(id);
    done["input"] = out.call->arguments;
    w.add("response.custom_tool_call_input.done", std::move(done));
  }
  json::object item_done;
  item_done["output_index"] = 0;
  item_done["item"] = output_item(out, meta, true);
  w.add("response.output_item.done", std::move(item_done));
  json::array output;
  output.emplace_back(output_item(out, meta, true));
  w.add("response.completed", wrap(response_object(meta, "completed", std::move(output), &u)));
  return events;
}

}  // namespace tether::mock::detail
