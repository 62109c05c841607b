#include "runtime/native/providers/wire.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "util/json_finite.h"
#include "util/text.h"

namespace tether::runtime::native {

namespace json = boost::json;

wire_mapper::wire_mapper(provider_options options, stream_sink sink)
    : options_(std::move(options)), sink_(std::move(sink)) {
  model_ = options_.model;
}

void wire_mapper::emit(stream_event e) {
  std::visit(
      [this](const auto& ev) {
        using T = std::decay_t<decltype(ev)>;
        if constexpr (std::is_same_v<T, text_delta_event>) {
          done_.text += ev.text;
          output_seen_ = true;
        } else if constexpr (std::is_same_v<T, reasoning_delta_event>) {
          done_.reasoning += ev.text;
        } else if constexpr (std::is_same_v<T, tool_input_delta_event>) {
          output_seen_ = true;
        } else if constexpr (std::is_same_v<T, tool_call_event>) {
          done_.calls.push_back(ev.call);
          output_seen_ = true;
        } else if constexpr (std::is_same_v<T, hosted_result_event>) {
          done_.hosted_results.push_back(ev.result);
        } else if constexpr (std::is_same_v<T, reasoning_state_event>) {
          done_.reasoning_meta = ev.state;
        }
      },
      e);
  if (sink_) sink_(e);
}

http::http_request wire_mapper::sse_post(std::string_view default_base, std::string_view path,
                                         const json::object& body) const {
  http::http_request req;
  req.url = url(default_base, path);
  req.headers.push_back({"Content-Type", "application/json"});
  req.headers.push_back({"Accept", "text/event-stream"});
  req.body = json::serialize(body);
  return req;
}

std::string wire_mapper::url(std::string_view default_base, std::string_view path) const {
  std::string base = options_.base_url.empty() ? std::string(default_base) : options_.base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base + std::string(path);
}

const json::value* wire_mapper::own_reasoning(const chat_message& m, std::string_view provider) const {
  if (!m.reasoning_meta || m.reasoning_meta->provider != provider || m.reasoning_meta->model != model_) return nullptr;
  return &m.reasoning_meta->data;
}

std::unique_ptr<wire_mapper> make_wire_mapper(provider_options options, stream_sink sink) {
  switch (options.api) {
    case wire_api::openai_chat:
      return make_openai_chat(std::move(options), std::move(sink));
    case wire_api::openai_responses:
      return make_openai_responses(std::move(options), std::move(sink));
    case wire_api::anthropic:
      return make_anthropic(std::move(options), std::move(sink));
  }
  return make_openai_chat(std::move(options), std::move(sink));
}

failure_info bad_response(std::string message) {
  failure_info f;
  f.kind = provider_errc::bad_response;
  f.request_sent = true;
  f.message = std::move(message);
  return f;
}

std::optional<failure_info> parse_payload(const sse_event& e, json::object& out) {
  boost::system::error_code ec;
  auto v = json::parse(e.data, ec);
  const bool broken = ec || !v.is_object();
  if (broken || !all_numbers_finite(v)) {
    // The event's name is raw stream bytes: it is named only when it can be
    // stored and shown (step.failed's error is JSON text).
    const bool named = !e.event.empty() && e.event.size() <= 64 && is_valid_utf8(e.event);
    return bad_response(fmt::format("a stream event{}{} {}", named ? " " : "",
                                    named ? std::string_view(e.event) : std::string_view(),
                                    broken ? "is not a JSON object" : "holds a number out of range"));
  }
  out = std::move(v.get_object());
  return std::nullopt;
}

std::optional<failure_info> parse_arguments(std::string_view json_text, std::string_view tool, json::value& out) {
  std::string_view t = json_text;
  while (!t.empty() && (t.front() == ' ' || t.front() == '\n' || t.front() == '\t' || t.front() == '\r'))
    t.remove_prefix(1);
  if (t.empty()) {
    out = json::object();
    return std::nullopt;
  }
  boost::system::error_code ec;
  out = json::parse(t, ec);
  if (ec) return bad_response(fmt::format("the arguments of the tool call {} are not valid JSON", tool));
  if (!all_numbers_finite(out))
    return bad_response(fmt::format("the arguments of the tool call {} hold a number out of range", tool));
  return std::nullopt;
}

std::string str(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

std::int64_t integer(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  if (v == nullptr) return 0;
  if (v->is_int64()) return v->get_int64();
  // A count no model reports, but one a server may send: saturate instead of
  // converting out of range (undefined for a double).
  constexpr auto most = std::numeric_limits<std::int64_t>::max();
  if (v->is_uint64())
    return v->get_uint64() > static_cast<std::uint64_t>(most) ? most : static_cast<std::int64_t>(v->get_uint64());
  if (v->is_double()) {
    const double d = v->get_double();
    if (std::isnan(d)) return 0;
    if (d >= 9.2e18) return most;
    if (d <= -9.2e18) return std::numeric_limits<std::int64_t>::min();
    return static_cast<std::int64_t>(d);
  }
  return 0;
}

const json::object* object(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_object() ? &v->get_object() : nullptr;
}

std::string data_url(const image_part& image) { return "data:" + image.media_type + ";base64," + image.base64; }

bool ends_tool_run(const model_request& r, std::size_t i) {
  return i + 1 >= r.messages.size() || r.messages[i + 1].role != chat_role::tool_result;
}

boost::json::array take_tool_images(boost::json::array& images, std::string_view text_type) {
  boost::json::array parts;
  parts.push_back(boost::json::object{{"type", text_type}, {"text", "Images returned by the tool calls above:"}});
  for (auto& p : images) parts.push_back(std::move(p));
  images.clear();
  return parts;
}

}  // namespace tether::runtime::native
