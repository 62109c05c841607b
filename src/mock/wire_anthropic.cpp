// Anthropic Messages responses.
#include "mock/wire.h"

#include <boost/json/parse.hpp>

namespace tether::mock::detail {

namespace json = boost::json;

namespace {

// Anthropic counts cache reads apart from input_tokens.
json::object usage_json(const usage_figures& u, std::uint64_t output_tokens) {
  json::object o;
  o["input_tokens"] = u.input_tokens - std::min(u.cached_tokens, u.input_tokens);
  o["cache_creation_input_tokens"] = 0;
  o["cache_read_input_tokens"] = u.cached_tokens;
  o["output_tokens"] = output_tokens;
  return o;
}

json::value tool_input(const tool_call& call) {
  boost::system::error_code ec;
  auto v = json::parse(call.arguments, ec);
  if (ec) return json::object();
  return v;
}

json::object content_block(const model_output& out, bool complete) {
  json::object b;
  if (out.call) {
    b["type"] = "tool_use";
    b["id"] = out.call->id;
    b["name"] = out.call->name;
    b["input"] = complete ? tool_input(*out.call) : json::value(json::object());
  } else {
    b["type"] = "text";
    b["text"] = complete ? out.text : std::string();
  }
  return b;
}

json::object message_object(const model_output& out, const usage_figures& u, const response_meta& meta, bool complete) {
  json::object m;
  m["id"] = "msg_" + meta.suffix;
  m["type"] = "message";
  m["role"] = "assistant";
  m["model"] = meta.model;
  json::array content;
  if (complete) content.emplace_back(content_block(out, true));
  m["content"] = std::move(content);
  m["stop_reason"] = complete ? json::value(out.call ? "tool_use" : "end_turn") : json::value(nullptr);
  m["stop_sequence"] = nullptr;
  m["usage"] = usage_json(u, complete ? u.output_tokens : 0);
  return m;
}

json::object typed(std::string_view type) {
  json::object o;
  o["type"] = type;
  return o;
}

}  // namespace

json::object anthropic_json(const model_output& out, const usage_figures& u, const response_meta& meta) {
  return message_object(out, u, meta, true);
}

std::vector<sse_event> anthropic_stream(const model_output& out, const usage_figures& u, const response_meta& meta,
                                        const stream_options& opts) {
  std::vector<sse_event> events;
  auto add = [&events](std::string_view type, json::object data, bool delta = false) {
    json::object e = typed(type);  // "type" first, as the real API sends it
    for (auto& kv : data) e[kv.key()] = std::move(kv.value());
    events.push_back(sse_event{sse(type, e), delta});
  };
  json::object start;
  start["message"] = message_object(out, u, meta, false);
  add("message_start", std::move(start));
  json::object block_start;
  block_start["index"] = 0;
  block_start["content_block"] = content_block(out, false);
  add("content_block_start", std::move(block_start));
  add("ping", {});
  const bool call = out.call.has_value();
  for (const auto& piece : split_deltas(call ? out.call->arguments : out.text, opts.delta_chars)) {
    json::object delta = typed(call ? "input_json_delta" : "text_delta");
    delta[call ? "partial_json" : "text"] = piece;
    json::object d;
    d["index"] = 0;
    d["delta"] = std::move(delta);
    add("content_block_delta", std::move(d), true);
  }
  json::object block_stop;
  block_stop["index"] = 0;
  add("content_block_stop", std::move(block_stop));
  json::object stop;
  stop["stop_reason"] = call ? "tool_use" : "end_turn";
  stop["stop_sequence"] = nullptr;
  json::object message_delta;
  message_delta["delta"] = std::move(stop);
  message_delta["usage"] = usage_json(u, u.output_tokens);
  add("message_delta", std::move(message_delta));
  add("message_stop", {});
  return events;
}

}  // namespace tether::mock::detail
