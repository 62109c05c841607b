#include "runtime/agent/relay/meter.h"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include "model/reported.h"

namespace tether::runtime::agent {

namespace json = boost::json;

namespace {

const json::object* object_at(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr ? v->if_object() : nullptr;
}

bool is_event_stream(std::string_view content_type) {
  const auto semi = content_type.find(';');
  auto type = content_type.substr(0, semi);
  while (!type.empty() && type.back() == ' ') type.remove_suffix(1);
  if (type.size() != 17) return false;
  std::string lower(type);
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower == "text/event-stream";
}

}  // namespace

relay_meter::relay_meter(std::string_view content_type) : stream_(is_event_stream(content_type)) {}

void relay_meter::feed(std::string_view bytes) {
  if (!stream_) {
    if (overflow_ || body_.size() + bytes.size() > max_body_bytes) {
      overflow_ = true;
      body_.clear();
      return;
    }
    body_.append(bytes);
    return;
  }
  for (const auto& ev : sse_.feed(bytes))
    if (ev.data.size() <= max_event_bytes && !ev.data.empty() && ev.data.front() == '{') take(ev.data);
}

void relay_meter::take(std::string_view json_text) {
  boost::system::error_code ec;
  auto v = json::parse(json_text, ec);
  if (ec || !v.is_object()) return;
  const auto& o = v.get_object();
  const auto* type = o.if_contains("type");
  const std::string_view t = type != nullptr && type->is_string() ? std::string_view(type->get_string()) : "";
  // Anthropic: the input side in message_start's message, the output (and
  // again the input, in newer versions) in message_delta; a whole message's
  // body carries both.
  const json::object* anthropic = nullptr;
  if (t == "message_start") {
    if (const auto* m = object_at(o, "message")) anthropic = object_at(*m, "usage");
  } else if (t == "message_delta" || t == "message") {
    anthropic = object_at(o, "usage");
  }
  if (anthropic != nullptr) {
    const auto& u = *anthropic;
    if (u.contains("input_tokens")) input_ = model::token_count(u, "input_tokens");
    if (u.contains("cache_read_input_tokens")) cache_read_ = model::token_count(u, "cache_read_input_tokens");
    if (u.contains("cache_creation_input_tokens"))
      cache_write_ = model::token_count(u, "cache_creation_input_tokens");
    if (u.contains("output_tokens")) usage_.output_tokens = model::token_count(u, "output_tokens");
    usage_.input_tokens = input_ + cache_read_ + cache_write_;
    usage_.cached_input_tokens = cache_read_;
    seen_ = true;
    return;
  }
  // OpenAI Responses: the stream's last event carries the response; a
  // whole response is the body itself.
  const json::object* response = nullptr;
  if (t == "response.completed" || t == "response.incomplete" || t == "response.failed")
    response = object_at(o, "response");
  else if (o.contains("object") && o.at("object") == "response")
    response = &o;
  if (response != nullptr) {
    const auto* u = object_at(*response, "usage");
    if (u == nullptr) return;
    usage_.input_tokens = model::token_count(*u, "input_tokens");
    usage_.output_tokens = model::token_count(*u, "output_tokens");
    if (const auto* d = object_at(*u, "input_tokens_details"))
      usage_.cached_input_tokens = model::token_count(*d, "cached_tokens");
    seen_ = true;
    return;
  }
  // Chat Completions: the usage chunk (include_usage), or the body's usage.
  if (const auto* u = object_at(o, "usage"); u != nullptr && u->contains("prompt_tokens")) {
    usage_.input_tokens = model::token_count(*u, "prompt_tokens");
    usage_.output_tokens = model::token_count(*u, "completion_tokens");
    if (const auto* d = object_at(*u, "prompt_tokens_details"))
      usage_.cached_input_tokens = model::token_count(*d, "cached_tokens");
    seen_ = true;
  }
}

std::optional<model::usage> relay_meter::finish() {
  if (!stream_ && !overflow_ && !body_.empty()) take(body_);
  body_.clear();
  if (!seen_) return std::nullopt;
  return usage_;
}

}  // namespace tether::runtime::agent
