// The wire formats behind make_provider (internal to the providers folder).
//
// A wire_mapper does both halves of one format: build() turns a
// model_request into the HTTP request, and on_event() turns each SSE event of
// a 2xx response into stream_events (passed to the sink as they come) while
// it fills in the completion. The provider (provider.cpp) owns the HTTP
// exchange and asks the mapper whether the stream reached its end marker.
//
// One mapper serves one request: it keeps the state of the stream it reads.
//
// Request rules shared by the formats:
//   - tools are sent only when tools_enabled and there are some;
//   - reasoning_meta goes back only when its provider and model are the
//     current ones; hosted calls go back only in the format that made them
//     (their results are kept exactly as received);
//   - a tool result's images follow the run of tool results as one user
//     message where the format cannot carry them in the result itself.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "http/client.h"
#include "http/sse_parser.h"
#include "runtime/native/providers/provider.h"
#include "runtime/native/providers/types.h"

namespace tether::runtime::native {

// The providers read their streams with the shared event-stream parser.
using ::tether::http::sse_event;
using ::tether::http::sse_parser;

class wire_mapper {
 public:
  wire_mapper(provider_options options, stream_sink sink);
  virtual ~wire_mapper() = default;

  [[nodiscard]] virtual http::http_request build(const model_request& request) = 0;
  // One event of a 2xx stream. A failure (an error event, a payload that does
  // not parse) ends the stream; events after the end marker are ignored.
  virtual std::optional<failure_info> on_event(const sse_event& event) = 0;

  [[nodiscard]] bool ended() const { return ended_; }              // the end marker was seen
  [[nodiscard]] bool output_seen() const { return output_seen_; }  // text or tool output was streamed
  completion take() { return std::move(done_); }

 protected:
  // Passes `e` to the sink and records it in the completion.
  void emit(stream_event e);
  [[nodiscard]] std::string url(std::string_view default_base, std::string_view path) const;
  // A streaming JSON POST to {base}{path} (the format adds its auth headers).
  [[nodiscard]] http::http_request sse_post(std::string_view default_base, std::string_view path,
                                            const boost::json::object& body) const;
  // The model of this request: the request's, else the options'.
  [[nodiscard]] const std::string& model() const { return model_; }
  void set_model(const model_request& r) { model_ = r.model.empty() ? options_.model : r.model; }
  // reasoning_meta of `m` when it belongs to this provider and model.
  [[nodiscard]] const boost::json::value* own_reasoning(const chat_message& m, std::string_view provider) const;

  provider_options options_;
  completion done_;
  bool ended_ = false;

 private:
  stream_sink sink_;
  std::string model_;
  bool output_seen_ = false;
};

std::unique_ptr<wire_mapper> make_openai_chat(provider_options options, stream_sink sink);
std::unique_ptr<wire_mapper> make_openai_responses(provider_options options, stream_sink sink);
std::unique_ptr<wire_mapper> make_anthropic(provider_options options, stream_sink sink);
std::unique_ptr<wire_mapper> make_wire_mapper(provider_options options, stream_sink sink);

// ---- helpers shared by the formats ----

// Parses one event's JSON payload (an object), or a bad_response failure.
std::optional<failure_info> parse_payload(const sse_event& e, boost::json::object& out);
// Parses a tool call's streamed arguments ("" is {}), or a bad_response failure.
std::optional<failure_info> parse_arguments(std::string_view json_text, std::string_view tool, boost::json::value& out);
failure_info bad_response(std::string message);

std::string str(const boost::json::object& o, std::string_view key);       // "" when absent or not a string
std::int64_t integer(const boost::json::object& o, std::string_view key);  // 0 when absent
const boost::json::object* object(const boost::json::object& o, std::string_view key);
std::string data_url(const image_part& image);
// Consecutive tool results are an unbroken run (Chat and Responses require it).
bool ends_tool_run(const model_request& r, std::size_t i);
// The content of the user message that carries a run's tool images (tool
// results hold text only in Chat and Responses): a text part of `text_type`
// introducing them, then the images, which are moved out of `images`.
boost::json::array take_tool_images(boost::json::array& images, std::string_view text_type);

}  // namespace tether::runtime::native
