#include "mock/wire.h"

#include <boost/json/serialize.hpp>

namespace tether::mock {

namespace json = boost::json;

namespace detail {

std::vector<std::string> split_deltas(const std::string& text, std::size_t n) {
  std::vector<std::string> out;
  if (n == 0) n = 1;
  std::size_t start = 0;
  std::size_t count = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto ch = static_cast<unsigned char>(text[i]);
    if ((ch & 0xC0U) == 0x80U) continue;  // continuation byte: same code point
    if (count == n) {
      out.push_back(text.substr(start, i - start));
      start = i;
      count = 0;
    }
    ++count;
  }
  if (start < text.size()) out.push_back(text.substr(start));
  return out;
}

std::string sse(std::string_view event, const json::object& data) {
  std::string out;
  if (!event.empty()) {
    out += "event: ";
    out += event;
    out += "\n";
  }
  out += "data: ";
  out += json::serialize(data);
  out += "\n\n";
  return out;
}

std::string sse_raw(std::string_view data) {
  std::string out = "data: ";
  out += data;
  out += "\n\n";
  return out;
}

}  // namespace detail

json::object render_json(wire_format w, const model_output& out, const usage_figures& u, const response_meta& meta) {
  switch (w) {
    case wire_format::chat:
      return detail::chat_json(out, u, meta);
    case wire_format::responses:
      return detail::responses_json(out, u, meta);
    case wire_format::anthropic:
      return detail::anthropic_json(out, u, meta);
  }
  return {};
}

std::vector<sse_event> render_stream(wire_format w, const model_output& out, const usage_figures& u,
                                     const response_meta& meta, const stream_options& opts) {
  switch (w) {
    case wire_format::chat:
      return detail::chat_stream(out, u, meta, opts);
    case wire_format::responses:
      return detail::responses_stream(out, u, meta, opts);
    case wire_format::anthropic:
      return detail::anthropic_stream(out, u, meta, opts);
  }
  return {};
}

http_error render_failure(wire_format w, fail_kind k, std::uint64_t input_tokens) {
  if (w == wire_format::anthropic) return detail::anthropic_failure(k, input_tokens);
  return detail::openai_failure(w, k, input_tokens);
}

http_error render_bad_request(wire_format w, unsigned status, const std::string& message) {
  http_error e;
  e.status = status;
  if (w == wire_format::anthropic) {
    std::string type = "invalid_request_error";
    if (status == 404) type = "not_found_error";
    if (status == 413) type = "request_too_large";
    json::object inner;
    inner["type"] = type;
    inner["message"] = message;
    e.body["type"] = "error";
    e.body["error"] = std::move(inner);
    return e;
  }
  json::object inner;
  inner["message"] = message;
  inner["type"] = "invalid_request_error";
  inner["param"] = nullptr;
  inner["code"] = status == 404   ? json::value("unknown_url")
                  : status == 413 ? json::value("request_too_large")
                                  : json::value(nullptr);
  e.body["error"] = std::move(inner);
  return e;
}

}  // namespace tether::mock
