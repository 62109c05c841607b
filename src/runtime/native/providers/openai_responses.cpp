// OpenAI Responses (POST {base}/responses, stream: true, store: false).
//
// Tether keeps the conversation itself, so requests are stateless: the
// system prompt goes in `instructions`, every earlier item is sent again in
// `input`, and reasoning models are asked for `reasoning.encrypted_content`
// so their reasoning items can be sent back on the next request.
//
// Stream: typed events (`event: response.output_text.delta` + a JSON payload
// with the same `type`). Output items are announced by
// response.output_item.added and complete at response.output_item.done:
// function_call items (arguments streamed by
// response.function_call_arguments.delta), reasoning items (summaries by
// response.reasoning_summary_text.delta), message items (text by
// response.output_text.delta), and hosted tool items (web_search_call, …),
// which carry their own result. The end marker is response.completed (or
// response.incomplete, which ends with finish `length`); response.failed and
// `error` are stream errors.
#include <map>

#include <boost/json/serialize.hpp>

#include "model/reported.h"
#include "runtime/native/providers/classify.h"
#include "runtime/native/providers/wire.h"

namespace tether::runtime::native {

namespace json = boost::json;

namespace {

constexpr std::string_view provider_name = "openai-responses";

bool is_hosted_item(std::string_view type) {
  return type == "web_search_call" || type == "file_search_call" || type == "code_interpreter_call" ||
         type == "image_generation_call" || type == "mcp_call";
}

// Models that reason (and reject a `reasoning` parameter when they do not).
bool is_reasoning_model(std::string_view model) {
  if (const auto slash = model.rfind('/'); slash != std::string_view::npos) model = model.substr(slash + 1);
  return model.starts_with("o1") || model.starts_with("o3") || model.starts_with("o4") || model.starts_with("gpt-5") ||
         model.starts_with("codex");
}

class openai_responses final : public wire_mapper {
 public:
  using wire_mapper::wire_mapper;

  http::http_request build(const model_request& r) override {
    set_model(r);
    json::object body;
    body["model"] = model();
    std::string instructions;
    json::array input;
    json::array tool_images;
    for (std::size_t i = 0; i < r.messages.size(); ++i) {
      const auto& m = r.messages[i];
      switch (m.role) {
        case chat_role::system:
          if (!instructions.empty()) instructions += "\n\n";
          instructions += m.text;
          break;
        case chat_role::user: {
          json::array parts;
          if (!m.text.empty()) parts.push_back(json::object{{"type", "input_text"}, {"text", m.text}});
          for (const auto& img : m.images) parts.push_back(image(img));
          input.push_back(json::object{{"type", "message"}, {"role", "user"}, {"content", std::move(parts)}});
          break;
        }
        case chat_role::assistant:
          assistant(m, input);
          break;
        case chat_role::tool_result:
          input.push_back(json::object{{"type", "function_call_output"}, {"call_id", m.call_id}, {"output", m.text}});
          for (const auto& img : m.images) tool_images.push_back(image(img));
          if (ends_tool_run(r, i) && !tool_images.empty())
            input.push_back(json::object{
                {"type", "message"}, {"role", "user"}, {"content", take_tool_images(tool_images, "input_text")}});
          break;
      }
    }
    if (!instructions.empty()) body["instructions"] = instructions;
    body["input"] = std::move(input);
    if (r.tools_enabled && !r.tools.empty()) {
      json::array tools;
      for (const auto& t : r.tools) {
        tools.push_back(json::object{{"type", "function"},
                                     {"name", t.name},
                                     {"description", t.description},
                                     {"parameters", t.parameters},
                                     {"strict", false}});
      }
      body["tools"] = std::move(tools);
    }
    if (r.max_output_tokens) body["max_output_tokens"] = *r.max_output_tokens;
    if (is_reasoning_model(model()) || !r.reasoning_effort.empty()) {
      json::object reasoning{{"summary", "auto"}};
      if (!r.reasoning_effort.empty()) reasoning["effort"] = r.reasoning_effort;
      body["reasoning"] = std::move(reasoning);
      body["include"] = json::array{"reasoning.encrypted_content"};
    }
    body["store"] = false;
    body["stream"] = true;

    auto req = sse_post("https://api.openai.com/v1", "/responses", body);
    if (!options_.api_key.empty()) req.headers.push_back({"Authorization", "Bearer " + options_.api_key});
    return req;
  }

  std::optional<failure_info> on_event(const sse_event& e) override {
    if (ended_) return std::nullopt;
    json::object ev;
    if (auto f = parse_payload(e, ev)) return f;
    std::string type = str(ev, "type");
    if (type.empty()) type = e.event;

    if (type == "response.output_text.delta" || type == "response.refusal.delta") {
      if (auto t = str(ev, "delta"); !t.empty()) emit(text_delta_event{std::move(t)});
    } else if (type == "response.reasoning_summary_text.delta" || type == "response.reasoning_text.delta") {
      if (auto t = str(ev, "delta"); !t.empty()) emit(reasoning_delta_event{std::move(t)});
    } else if (type == "response.reasoning_summary_part.added") {
      if (!done_.reasoning.empty()) emit(reasoning_delta_event{"\n\n"});
    } else if (type == "response.function_call_arguments.delta") {
      on_arguments_delta(ev);
    } else if (type == "response.output_item.added") {
      if (const auto* item = object(ev, "item")) on_item_added(*item);
    } else if (type == "response.output_item.done") {
      if (const auto* item = object(ev, "item")) return on_item_done(*item);
    } else if (type == "response.created" || type == "response.in_progress") {
      if (const auto* resp = object(ev, "response")) done_.response_id = str(*resp, "id");
    } else if (type == "response.completed" || type == "response.incomplete") {
      if (const auto* resp = object(ev, "response")) on_final(*resp);
      ended_ = true;
    } else if (type == "response.failed") {
      const auto* resp = object(ev, "response");
      const auto* err = resp != nullptr ? resp->if_contains("error") : nullptr;
      if (err != nullptr && !err->is_null()) return classify_error_object(*err);
      return classify_error_object(json::object{{"code", "server_error"}, {"message", "the response failed"}});
    } else if (type == "error") {
      if (const auto* err = ev.if_contains("error"); err != nullptr && err->is_object())
        return classify_error_object(*err);
      return classify_error_object(ev);
    }
    return std::nullopt;
  }

 private:
  struct pending_call {
    int index = 0;
    std::string call_id;
    std::string name;
    std::string arguments;
  };

  static json::object image(const image_part& img) {
    return json::object{{"type", "input_image"}, {"image_url", data_url(img)}};
  }

  void assistant(const chat_message& m, json::array& input) const {
    if (const auto* items = own_reasoning(m, provider_name); items != nullptr && items->is_array())
      for (const auto& item : items->get_array()) input.push_back(item);
    for (const auto& c : m.calls) {
      if (!c.hosted) continue;
      for (const auto& h : m.hosted_results) {
        if (h.call_id != c.id || !h.content.is_object()) continue;
        if (is_hosted_item(str(h.content.get_object(), "type"))) input.push_back(h.content);  // made here: as received
        break;
      }
    }
    if (!m.text.empty()) {
      json::array content;
      content.push_back(json::object{{"type", "output_text"}, {"text", m.text}});
      input.push_back(json::object{{"type", "message"}, {"role", "assistant"}, {"content", std::move(content)}});
    }
    for (const auto& c : m.calls) {
      if (c.hosted) continue;
      input.push_back(json::object{
          {"type", "function_call"}, {"call_id", c.id}, {"name", c.name}, {"arguments", json::serialize(c.input)}});
    }
  }

  void on_item_added(const json::object& item) {
    if (str(item, "type") != "function_call") return;
    pending_call call;
    call.index = next_index_++;
    call.call_id = str(item, "call_id");
    call.name = str(item, "name");
    call.arguments = str(item, "arguments");
    tool_input_delta_event ev{call.index, call.call_id, call.name, call.arguments};
    calls_[str(item, "id")] = call;
    emit(std::move(ev));
  }

  void on_arguments_delta(const json::object& ev) {
    auto it = calls_.find(str(ev, "item_id"));
    if (it == calls_.end()) return;
    std::string fragment = str(ev, "delta");
    if (fragment.empty()) return;
    it->second.arguments += fragment;
    emit(tool_input_delta_event{it->second.index, {}, {}, std::move(fragment)});
  }

  std::optional<failure_info> on_item_done(const json::object& item) {
    const std::string type = str(item, "type");
    if (type == "function_call") {
      tool_use use;
      use.id = str(item, "call_id");
      use.name = str(item, "name");
      std::string args = str(item, "arguments");
      if (args.empty())
        if (auto it = calls_.find(str(item, "id")); it != calls_.end()) args = it->second.arguments;
      if (auto f = parse_arguments(args, use.name, use.input)) return f;
      emit(tool_call_event{std::move(use)});
      ++local_calls_;
    } else if (type == "reasoning") {
      reasoning_items_.push_back(item);
    } else if (is_hosted_item(type)) {
      tool_use use;
      use.id = str(item, "id");
      use.name = type.substr(0, type.size() - 5);  // "web_search_call" → "web_search"
      if (const auto* action = item.if_contains("action"))
        use.input = *action;
      else
        use.input = json::object();
      use.hosted = true;
      emit(tool_call_event{use});
      emit(hosted_result_event{hosted_result{use.id, item}});
    }
    return std::nullopt;
  }

  void on_final(const json::object& resp) {
    if (auto id = str(resp, "id"); !id.empty()) done_.response_id = id;
    if (const auto* u = object(resp, "usage")) {
      done_.usage.input_tokens = model::token_count(*u, "input_tokens");
      done_.usage.output_tokens = model::token_count(*u, "output_tokens");
      if (const auto* d = object(*u, "input_tokens_details"))
        done_.usage.cached_input_tokens = model::token_count(*d, "cached_tokens");
    }
    done_.reported_cost_usd = model::cost_at(resp, "cost");
    const std::string status = str(resp, "status");
    if (status == "incomplete") {
      const auto* details = object(resp, "incomplete_details");
      const std::string reason = details != nullptr ? str(*details, "reason") : "";
      done_.raw_finish = reason.empty() ? status : reason;
      done_.finish = reason == "max_output_tokens" ? finish_reason::length
                     : reason == "content_filter"  ? finish_reason::content_filter
                                                   : finish_reason::other;
    } else {
      done_.raw_finish = status.empty() ? "completed" : status;
      done_.finish = local_calls_ > 0 ? finish_reason::tool_calls : finish_reason::stop;
    }
    if (!reasoning_items_.empty()) {
      emit(reasoning_state_event{reasoning_state{std::string(provider_name), model(), std::move(reasoning_items_)}});
      reasoning_items_ = json::array();
    }
  }

  std::map<std::string, pending_call> calls_;  // by output item id
  int next_index_ = 0;
  int local_calls_ = 0;
  json::array reasoning_items_;
};

}  // namespace

std::unique_ptr<wire_mapper> make_openai_responses(provider_options options, stream_sink sink) {
  return std::make_unique<openai_responses>(std::move(options), std::move(sink));
}

}  // namespace tether::runtime::native
