// Anthropic Messages (POST {base}/messages, stream: true).
//
// Request: the system prompt is the top-level `system` (one text block with
// a cache breakpoint), messages alternate user/assistant (consecutive
// messages of one role are merged: several tool results, then the next
// prompt, become one user message), tool results are user `tool_result`
// blocks (is_error, images inside), and the last user block gets a second
// cache breakpoint so the conversation prefix is read from the prompt cache.
// Thinking blocks (with their signatures) go back only to the same model;
// hosted calls go back as server_tool_use + their result blocks as received.
//
// tools_enabled=false: no tools are sent, except when the history holds
// tool_use/tool_result blocks, which Anthropic refuses without tool
// definitions; then the tools are sent with tool_choice {"type": "none"}.
//
// Stream: message_start (id, input usage) → content_block_start /
// content_block_delta (text_delta, thinking_delta, signature_delta,
// input_json_delta) / content_block_stop per block → message_delta
// (stop_reason, output usage) → message_stop, the end marker; ping events
// between; `event: error` is a stream error.
#include <algorithm>
#include <map>

#include <boost/json/serialize.hpp>

#include "model/reported.h"
#include "runtime/native/providers/classify.h"
#include "runtime/native/providers/wire.h"

namespace tether::runtime::native {

namespace json = boost::json;

namespace {

constexpr std::string_view provider_name = "anthropic";
constexpr int default_max_tokens = 8192;

finish_reason normalize_finish(std::string_view raw) {
  if (raw == "end_turn" || raw == "stop_sequence") return finish_reason::stop;
  if (raw == "tool_use") return finish_reason::tool_calls;
  if (raw == "max_tokens" || raw == "model_context_window_exceeded") return finish_reason::length;
  if (raw == "refusal") return finish_reason::content_filter;
  return finish_reason::other;
}

int thinking_budget(std::string_view effort) {
  if (effort == "low") return 2048;
  if (effort == "medium") return 8192;
  if (effort == "high") return 24576;
  return 0;
}

bool ends_with(std::string_view s, std::string_view suffix) { return s.ends_with(suffix); }

json::object image(const image_part& img) {
  return json::object{
      {"type", "image"},
      {"source", json::object{{"type", "base64"}, {"media_type", img.media_type}, {"data", img.base64}}}};
}

class anthropic final : public wire_mapper {
 public:
  using wire_mapper::wire_mapper;

  http::http_request build(const model_request& r) override {
    set_model(r);
    json::object body;
    body["model"] = model();
    const int budget = thinking_budget(r.reasoning_effort);
    int max_tokens = r.max_output_tokens.value_or(default_max_tokens);
    if (budget > 0 && max_tokens <= budget) max_tokens = budget + default_max_tokens;
    body["max_tokens"] = max_tokens;

    std::string system;
    json::array messages;
    bool has_tool_blocks = false;
    for (const auto& m : r.messages) {
      json::array blocks;
      std::string_view role = "user";
      switch (m.role) {
        case chat_role::system:
          if (!system.empty()) system += "\n\n";
          system += m.text;
          continue;
        case chat_role::user:
          if (!m.text.empty()) blocks.push_back(json::object{{"type", "text"}, {"text", m.text}});
          for (const auto& img : m.images) blocks.push_back(image(img));
          break;
        case chat_role::tool_result:
          blocks.push_back(tool_result(m));
          has_tool_blocks = true;
          break;
        case chat_role::assistant:
          role = "assistant";
          assistant(m, blocks);
          has_tool_blocks = has_tool_blocks ||
                            std::any_of(m.calls.begin(), m.calls.end(), [](const tool_use& c) { return !c.hosted; });
          break;
      }
      if (blocks.empty()) continue;
      if (!messages.empty() && messages.back().as_object().at("role").as_string() == role) {
        auto& content = messages.back().as_object().at("content").as_array();
        for (auto& b : blocks) content.push_back(std::move(b));
      } else {
        messages.push_back(json::object{{"role", role}, {"content", std::move(blocks)}});
      }
    }
    mark_cache_breakpoint(messages);
    if (!system.empty()) {
      json::array sys;
      sys.push_back(
          json::object{{"type", "text"}, {"text", system}, {"cache_control", json::object{{"type", "ephemeral"}}}});
      body["system"] = std::move(sys);
    }
    body["messages"] = std::move(messages);
    const bool send_tools = !r.tools.empty() && (r.tools_enabled || has_tool_blocks);
    if (send_tools) {
      json::array tools;
      for (const auto& t : r.tools)
        tools.push_back(json::object{{"name", t.name}, {"description", t.description}, {"input_schema", t.parameters}});
      body["tools"] = std::move(tools);
      if (!r.tools_enabled) body["tool_choice"] = json::object{{"type", "none"}};
    }
    if (budget > 0) body["thinking"] = json::object{{"type", "enabled"}, {"budget_tokens", budget}};
    body["stream"] = true;

    auto req = sse_post("https://api.anthropic.com/v1", "/messages", body);
    req.headers.push_back({"anthropic-version", options_.anthropic_version});
    if (!options_.api_key.empty()) req.headers.push_back({"x-api-key", options_.api_key});
    return req;
  }

  std::optional<failure_info> on_event(const sse_event& e) override {
    if (ended_) return std::nullopt;
    json::object ev;
    if (auto f = parse_payload(e, ev)) return f;
    std::string type = str(ev, "type");
    if (type.empty()) type = e.event;

    if (type == "content_block_delta") return on_delta(ev);
    if (type == "content_block_start") {
      on_block_start(ev);
    } else if (type == "content_block_stop") {
      return on_block_stop(static_cast<int>(integer(ev, "index")));
    } else if (type == "message_start") {
      if (const auto* msg = object(ev, "message")) {
        done_.response_id = str(*msg, "id");
        if (const auto* u = object(*msg, "usage")) on_usage(*u);
      }
    } else if (type == "message_delta") {
      if (const auto* d = object(ev, "delta")) {
        if (auto raw = str(*d, "stop_reason"); !raw.empty()) {
          done_.finish = normalize_finish(raw);
          done_.raw_finish = std::move(raw);
        }
      }
      if (const auto* u = object(ev, "usage")) on_usage(*u);
    } else if (type == "message_stop") {
      on_stop();
    } else if (type == "error") {
      if (const auto* err = ev.if_contains("error")) return classify_error_object(*err);
      return classify_error_object(ev);
    }
    return std::nullopt;
  }

 private:
  enum class block_kind { text, thinking, tool, server_tool, hosted_result, other };
  struct block {
    block_kind kind = block_kind::other;
    int call_index = 0;
    std::string id;
    std::string name;
    std::string text;  // thinking text or streamed tool input
    std::string signature;
    json::object raw;  // a result block, as received
  };

  static json::object tool_result(const chat_message& m) {
    json::object b{{"type", "tool_result"}, {"tool_use_id", m.call_id}};
    if (m.images.empty()) {
      b["content"] = m.text;
    } else {
      json::array content;
      if (!m.text.empty()) content.push_back(json::object{{"type", "text"}, {"text", m.text}});
      for (const auto& img : m.images) content.push_back(image(img));
      b["content"] = std::move(content);
    }
    if (m.is_error) b["is_error"] = true;
    return b;
  }

  void assistant(const chat_message& m, json::array& blocks) const {
    if (const auto* thinking = own_reasoning(m, provider_name); thinking != nullptr && thinking->is_array())
      for (const auto& b : thinking->get_array()) blocks.push_back(b);
    for (const auto& c : m.calls) {
      if (!c.hosted) continue;
      for (const auto& h : m.hosted_results) {
        if (h.call_id != c.id || !h.content.is_object()) continue;
        if (!ends_with(str(h.content.get_object(), "type"), "_tool_result")) break;  // another provider's
        json::value input = c.input.is_object() ? c.input : json::object();
        blocks.push_back(json::object{{"type", "server_tool_use"}, {"id", c.id}, {"name", c.name}, {"input", input}});
        blocks.push_back(h.content);
        break;
      }
    }
    if (!m.text.empty()) blocks.push_back(json::object{{"type", "text"}, {"text", m.text}});
    for (const auto& c : m.calls) {
      if (c.hosted) continue;
      json::value input = c.input.is_object() ? c.input : json::object();
      blocks.push_back(json::object{{"type", "tool_use"}, {"id", c.id}, {"name", c.name}, {"input", input}});
    }
  }

  static void mark_cache_breakpoint(json::array& messages) {
    if (messages.empty()) return;
    auto& last = messages.back().as_object();
    if (last.at("role").as_string() != "user") return;
    auto& content = last.at("content").as_array();
    if (content.empty()) return;
    content.back().as_object()["cache_control"] = json::object{{"type", "ephemeral"}};
  }

  void on_block_start(const json::object& ev) {
    const auto* cb = object(ev, "content_block");
    if (cb == nullptr) return;
    block b;
    const std::string type = str(*cb, "type");
    if (type == "text") {
      b.kind = block_kind::text;
      if (auto t = str(*cb, "text"); !t.empty()) emit(text_delta_event{std::move(t)});
    } else if (type == "thinking") {
      b.kind = block_kind::thinking;
      b.text = str(*cb, "thinking");
      b.signature = str(*cb, "signature");
      if (!b.text.empty()) emit(reasoning_delta_event{b.text});
    } else if (type == "redacted_thinking") {
      thinking_.push_back(*cb);
    } else if (type == "tool_use") {
      b.kind = block_kind::tool;
      b.call_index = next_call_++;
      b.id = str(*cb, "id");
      b.name = str(*cb, "name");
      emit(tool_input_delta_event{b.call_index, b.id, b.name, {}});
    } else if (type == "server_tool_use") {
      b.kind = block_kind::server_tool;
      b.id = str(*cb, "id");
      b.name = str(*cb, "name");
      if (const auto* input = object(*cb, "input"); input != nullptr && !input->empty())
        b.text = json::serialize(*input);
    } else if (ends_with(type, "_tool_result")) {
      b.kind = block_kind::hosted_result;
      b.id = str(*cb, "tool_use_id");
      b.raw = *cb;
    }
    blocks_[static_cast<int>(integer(ev, "index"))] = std::move(b);
  }

  std::optional<failure_info> on_delta(const json::object& ev) {
    const auto* d = object(ev, "delta");
    auto it = blocks_.find(static_cast<int>(integer(ev, "index")));
    if (d == nullptr || it == blocks_.end()) return std::nullopt;
    auto& b = it->second;
    const std::string type = str(*d, "type");
    if (type == "text_delta") {
      if (auto t = str(*d, "text"); !t.empty()) emit(text_delta_event{std::move(t)});
    } else if (type == "thinking_delta") {
      std::string t = str(*d, "thinking");
      b.text += t;
      if (!t.empty()) emit(reasoning_delta_event{std::move(t)});
    } else if (type == "signature_delta") {
      b.signature += str(*d, "signature");
    } else if (type == "input_json_delta") {
      std::string fragment = str(*d, "partial_json");
      b.text += fragment;
      if (b.kind == block_kind::tool && !fragment.empty())
        emit(tool_input_delta_event{b.call_index, {}, {}, std::move(fragment)});
    }
    return std::nullopt;
  }

  std::optional<failure_info> on_block_stop(int index) {
    auto it = blocks_.find(index);
    if (it == blocks_.end()) return std::nullopt;
    block b = std::move(it->second);
    blocks_.erase(it);
    switch (b.kind) {
      case block_kind::thinking:
        thinking_.push_back(json::object{{"type", "thinking"}, {"thinking", b.text}, {"signature", b.signature}});
        break;
      case block_kind::tool:
      case block_kind::server_tool: {
        tool_use use;
        use.id = b.id;
        use.name = b.name;
        use.hosted = b.kind == block_kind::server_tool;
        if (auto f = parse_arguments(b.text, b.name, use.input)) return f;
        emit(tool_call_event{std::move(use)});
        break;
      }
      case block_kind::hosted_result:
        emit(hosted_result_event{hosted_result{b.id, std::move(b.raw)}});
        break;
      case block_kind::text:
      case block_kind::other:
        break;
    }
    return std::nullopt;
  }

  void on_usage(const json::object& u) {
    // message_start carries the input side, message_delta the final output
    // count (and, in newer API versions, the input side again).
    if (u.contains("input_tokens")) input_ = model::token_count(u, "input_tokens");
    if (u.contains("cache_read_input_tokens")) cache_read_ = model::token_count(u, "cache_read_input_tokens");
    if (u.contains("cache_creation_input_tokens")) cache_write_ = model::token_count(u, "cache_creation_input_tokens");
    if (u.contains("output_tokens")) done_.usage.output_tokens = model::token_count(u, "output_tokens");
    done_.usage.input_tokens = input_ + cache_read_ + cache_write_;
    done_.usage.cached_input_tokens = cache_read_;
  }

  void on_stop() {
    if (!thinking_.empty()) {
      emit(reasoning_state_event{reasoning_state{std::string(provider_name), model(), std::move(thinking_)}});
      thinking_ = json::array();
    }
    ended_ = true;
  }

  std::map<int, block> blocks_;  // open content blocks by index
  int next_call_ = 0;
  json::array thinking_;
  std::int64_t input_ = 0;
  std::int64_t cache_read_ = 0;
  std::int64_t cache_write_ = 0;
};

}  // namespace

std::unique_ptr<wire_mapper> make_anthropic(provider_options options, stream_sink sink) {
  return std::make_unique<anthropic>(std::move(options), std::move(sink));
}

}  // namespace tether::runtime::native
