// OpenAI Chat Completions responses.
#include "mock/wire.h"

namespace tether::mock::detail {

namespace json = boost::json;

namespace {

json::object usage_json(const usage_figures& u) {
  json::object details;
  details["cached_tokens"] = u.cached_tokens;
  json::object o;
  o["prompt_tokens"] = u.input_tokens;
  o["completion_tokens"] = u.output_tokens;
  o["total_tokens"] = u.input_tokens + u.output_tokens;
  o["prompt_tokens_details"] = std::move(details);
  return o;
}

json::object chunk(const response_meta& meta, json::object delta, json::value finish_reason) {
  json::object choice;
  choice["index"] = 0;
  choice["delta"] = std::move(delta);
  choice["logprobs"] = nullptr;
  choice["finish_reason"] = std::move(finish_reason);
  json::object c;
  c["id"] = "chatcmpl-" + meta.suffix;
  c["object"] = "chat.completion.chunk";
  c["created"] = meta.created;
  c["model"] = meta.model;
  json::array choices;
  choices.emplace_back(std::move(choice));
  c["choices"] = std::move(choices);
  return c;
}

json::object tool_call_delta(json::object fields) {
  fields["index"] = 0;
  json::array calls;
  calls.emplace_back(std::move(fields));
  json::object delta;
  delta["tool_calls"] = std::move(calls);
  return delta;
}

}  // namespace

json::object chat_json(const model_output& out, const usage_figures& u, const response_meta& meta) {
  json::object msg;
  msg["role"] = "assistant";
  if (out.call) {
    json::object function;
    function["name"] = out.call->name;
    function["arguments"] = out.call->arguments;
    json::object call;
    call["id"] = out.call->id;
    call["type"] = "function";
    call["function"] = std::move(function);
    json::array calls;
    calls.emplace_back(std::move(call));
    msg["content"] = nullptr;
    msg["tool_calls"] = std::move(calls);
  } else {
    msg["content"] = out.text;
  }
  json::object choice;
  choice["index"] = 0;
  choice["message"] = std::move(msg);
  choice["logprobs"] = nullptr;
  choice["finish_reason"] = out.call ? "tool_calls" : "stop";
  json::array choices;
  choices.emplace_back(std::move(choice));
  json::object o;
  o["id"] = "chatcmpl-" + meta.suffix;
  o["object"] = "chat.completion";
  o["created"] = meta.created;
  o["model"] = meta.model;
  o["choices"] = std::move(choices);
  o["usage"] = usage_json(u);
  return o;
}

std::vector<sse_event> chat_stream(const model_output& out, const usage_figures& u, const response_meta& meta,
                                   const stream_options& opts) {
  std::vector<sse_event> events;
  auto add = [&events](const json::object& c, bool delta) { events.push_back(sse_event{sse({}, c), delta}); };
  json::object first;
  first["role"] = "assistant";
  if (out.call) {
    json::object function;
    function["name"] = out.call->name;
    function["arguments"] = "";
    json::object fields;
    fields["id"] = out.call->id;
    fields["type"] = "function";
    fields["function"] = std::move(function);
    auto delta = tool_call_delta(std::move(fields));
    delta["role"] = "assistant";
    add(chunk(meta, std::move(delta), nullptr), false);
    for (const auto& piece : split_deltas(out.call->arguments, opts.delta_chars)) {
      json::object function_piece;
      function_piece["arguments"] = piece;
      json::object fields_piece;
      fields_piece["function"] = std::move(function_piece);
      add(chunk(meta, tool_call_delta(std::move(fields_piece)), nullptr), true);
    }
  } else {
    first["content"] = "";
    add(chunk(meta, std::move(first), nullptr), false);
    for (const auto& piece : split_deltas(out.text, opts.delta_chars)) {
      json::object delta;
      delta["content"] = piece;
      add(chunk(meta, std::move(delta), nullptr), true);
    }
  }
  add(chunk(meta, json::object(), out.call ? "tool_calls" : "stop"), false);
  if (opts.include_usage) {
    auto last = chunk(meta, json::object(), nullptr);
    last["choices"] = json::array();
    last["usage"] = usage_json(u);
    add(last, false);
  }
  events.push_back(sse_event{sse_raw("[DONE]"), false});
  return events;
}

}  // namespace tether::mock::detail
