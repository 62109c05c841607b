// OpenAI Chat Completions (POST {base}/chat/completions, stream: true), as
// OpenAI, OpenRouter, vLLM, llama.cpp and most gateways speak it.
//
// Stream: `data: {chat.completion.chunk}` lines, then `data: [DONE]`.
// Tool calls arrive as delta.tool_calls[{index, id?, function{name?,
// arguments}}] pieces and are complete when the choice's finish_reason
// arrives (or at [DONE]). Usage comes in a last chunk with `choices: []`
// (stream_options.include_usage); OpenRouter adds usage.cost. Reasoning
// deltas are delta.reasoning_content (DeepSeek, vLLM) or delta.reasoning
// (OpenRouter). An error in the stream is a chunk with an "error" object.
#include <map>

#include <boost/json/serialize.hpp>

#include "model/reported.h"
#include "runtime/native/providers/classify.h"
#include "runtime/native/providers/wire.h"

namespace tether::runtime::native {

namespace json = boost::json;

namespace {

finish_reason normalize_finish(std::string_view raw) {
  if (raw == "stop" || raw == "end_turn") return finish_reason::stop;
  if (raw == "tool_calls" || raw == "function_call") return finish_reason::tool_calls;
  if (raw == "length") return finish_reason::length;
  if (raw == "content_filter") return finish_reason::content_filter;
  return finish_reason::other;
}

class openai_chat final : public wire_mapper {
 public:
  using wire_mapper::wire_mapper;

  http::http_request build(const model_request& r) override {
    set_model(r);
    json::object body;
    body["model"] = model();
    json::array messages;
    json::array tool_images;  // images of the current run of tool results
    for (std::size_t i = 0; i < r.messages.size(); ++i) {
      const auto& m = r.messages[i];
      switch (m.role) {
        case chat_role::system:
          messages.push_back(json::object{{"role", "system"}, {"content", m.text}});
          break;
        case chat_role::user:
          messages.push_back(json::object{{"role", "user"}, {"content", user_content(m.text, m.images)}});
          break;
        case chat_role::assistant:
          if (auto a = assistant(m)) messages.push_back(std::move(*a));
          break;
        case chat_role::tool_result:
          messages.push_back(json::object{{"role", "tool"}, {"tool_call_id", m.call_id}, {"content", m.text}});
          for (const auto& img : m.images) tool_images.push_back(image(img));
          if (ends_tool_run(r, i) && !tool_images.empty())
            messages.push_back(json::object{{"role", "user"}, {"content", take_tool_images(tool_images, "text")}});
          break;
      }
    }
    body["messages"] = std::move(messages);
    if (r.tools_enabled && !r.tools.empty()) {
      json::array tools;
      for (const auto& t : r.tools) {
        tools.push_back(json::object{
            {"type", "function"},
            {"function",
             json::object{{"name", t.name}, {"description", t.description}, {"parameters", t.parameters}}}});
      }
      body["tools"] = std::move(tools);
    }
    if (r.max_output_tokens) body["max_completion_tokens"] = *r.max_output_tokens;
    if (!r.reasoning_effort.empty()) body["reasoning_effort"] = r.reasoning_effort;
    body["stream"] = true;
    body["stream_options"] = json::object{{"include_usage", true}};

    auto req = sse_post("https://api.openai.com/v1", "/chat/completions", body);
    if (!options_.api_key.empty()) req.headers.push_back({"Authorization", "Bearer " + options_.api_key});
    return req;
  }

  std::optional<failure_info> on_event(const sse_event& e) override {
    if (ended_) return std::nullopt;
    if (e.data == "[DONE]") {
      if (auto f = flush_calls()) return f;
      ended_ = true;
      return std::nullopt;
    }
    json::object chunk;
    if (auto f = parse_payload(e, chunk)) return f;
    if (const auto* err = chunk.if_contains("error"); err != nullptr && !err->is_null())
      return classify_error_object(*err);
    if (done_.response_id.empty()) done_.response_id = str(chunk, "id");
    if (const auto* choices = chunk.if_contains("choices"); choices != nullptr && choices->is_array()) {
      for (const auto& c : choices->get_array()) {
        if (!c.is_object() || integer(c.get_object(), "index") != 0) continue;
        if (auto f = on_choice(c.get_object())) return f;
      }
    }
    if (const auto* u = object(chunk, "usage")) on_usage(*u);
    return std::nullopt;
  }

 private:
  struct pending_call {
    std::string id;
    std::string name;
    std::string arguments;
  };

  static json::object image(const image_part& img) {
    return json::object{{"type", "image_url"}, {"image_url", json::object{{"url", data_url(img)}}}};
  }

  static json::value user_content(const std::string& text, const std::vector<image_part>& images) {
    if (images.empty()) return json::value(text);
    json::array parts;
    if (!text.empty()) parts.push_back(json::object{{"type", "text"}, {"text", text}});
    for (const auto& img : images) parts.push_back(image(img));
    return parts;
  }

  static std::optional<json::object> assistant(const chat_message& m) {
    json::array calls;
    for (const auto& c : m.calls) {
      if (c.hosted) continue;  // Chat has no hosted tools: nothing to send back
      calls.push_back(
          json::object{{"id", c.id},
                       {"type", "function"},
                       {"function", json::object{{"name", c.name}, {"arguments", json::serialize(c.input)}}}});
    }
    if (m.text.empty() && calls.empty()) return std::nullopt;
    json::object msg{{"role", "assistant"}};
    msg["content"] = m.text.empty() ? json::value(nullptr) : json::value(m.text);
    if (!calls.empty()) msg["tool_calls"] = std::move(calls);
    return msg;
  }

  std::optional<failure_info> on_choice(const json::object& choice) {
    if (const auto* delta = object(choice, "delta")) {
      if (auto t = str(*delta, "reasoning_content"); !t.empty()) emit(reasoning_delta_event{std::move(t)});
      if (auto t = str(*delta, "reasoning"); !t.empty()) emit(reasoning_delta_event{std::move(t)});
      if (auto t = str(*delta, "content"); !t.empty()) emit(text_delta_event{std::move(t)});
      if (auto t = str(*delta, "refusal"); !t.empty()) emit(text_delta_event{std::move(t)});
      if (const auto* tcs = delta->if_contains("tool_calls"); tcs != nullptr && tcs->is_array()) {
        for (const auto& tc : tcs->get_array())
          if (tc.is_object()) on_tool_delta(tc.get_object());
      }
    }
    if (auto raw = str(choice, "finish_reason"); !raw.empty()) {
      done_.raw_finish = raw;
      done_.finish = normalize_finish(raw);
      return flush_calls();
    }
    return std::nullopt;
  }

  void on_tool_delta(const json::object& tc) {
    const int index = static_cast<int>(integer(tc, "index"));
    const bool first = !calls_.contains(index);
    auto& call = calls_[index];
    tool_input_delta_event ev;
    ev.index = index;
    if (auto id = str(tc, "id"); !id.empty() && call.id.empty()) {
      call.id = id;
      ev.id = std::move(id);
    }
    if (const auto* fn = object(tc, "function")) {
      if (auto name = str(*fn, "name"); !name.empty() && call.name.empty()) {
        call.name = name;
        ev.name = std::move(name);
      }
      ev.json_fragment = str(*fn, "arguments");
      call.arguments += ev.json_fragment;
    }
    if (first || !ev.id.empty() || !ev.name.empty() || !ev.json_fragment.empty()) emit(std::move(ev));
  }

  std::optional<failure_info> flush_calls() {
    for (auto& [index, call] : calls_) {
      tool_use use;
      use.id = call.id;
      use.name = call.name;
      if (auto f = parse_arguments(call.arguments, call.name, use.input)) return f;
      emit(tool_call_event{std::move(use)});
    }
    // Some servers end a tool-calling turn with "stop".
    if (!calls_.empty() && done_.finish == finish_reason::stop) done_.finish = finish_reason::tool_calls;
    calls_.clear();
    return std::nullopt;
  }

  void on_usage(const json::object& u) {
    done_.usage.input_tokens = model::token_count(u, "prompt_tokens");
    done_.usage.output_tokens = model::token_count(u, "completion_tokens");
    if (const auto* d = object(u, "prompt_tokens_details"))
      done_.usage.cached_input_tokens = model::token_count(*d, "cached_tokens");
    done_.reported_cost_usd = model::cost_at(u, "cost");
  }

  std::map<int, pending_call> calls_;
};

}  // namespace

std::unique_ptr<wire_mapper> make_openai_chat(provider_options options, stream_sink sink) {
  return std::make_unique<openai_chat>(std::move(options), std::move(sink));
}

}  // namespace tether::runtime::native
