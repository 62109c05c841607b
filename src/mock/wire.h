// Rendering a response in each wire format: the non-streaming JSON body, the
// SSE stream (as whole events), and error bodies.
//
// Streams (what real clients need, docs/agent-clis.md):
//   chat       data: chat.completion.chunk … (role, content or tool_calls
//              deltas, finish_reason stop|tool_calls), a usage chunk with
//              choices [] when include_usage, then data: [DONE].
//   responses  event:/data: response.created, response.in_progress,
//              output_item.added, content_part.added, output_text.delta…,
//              output_text.done, content_part.done (or
//              function_call_arguments.delta…/.done, custom_tool_call_input
//              .delta…/.done), output_item.done with the whole item,
//              response.completed with usage; every event has
//              sequence_number.
//   anthropic  event:/data: message_start (usage), content_block_start,
//              ping, content_block_delta (text_delta | input_json_delta)…,
//              content_block_stop, message_delta (stop_reason, usage),
//              message_stop.
//
// Usage conventions: chat prompt_tokens and responses input_tokens include
// the cached tokens (reported in *_details.cached_tokens); Anthropic
// input_tokens excludes them (cache_read_input_tokens carries them), as the
// real APIs do.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <boost/json/object.hpp>

#include "mock/types.h"

namespace tether::mock {

// Ids and metadata of one response. `suffix` makes every id of the response
// (chatcmpl-…, resp_…, msg_…, fc_…) unique; tool call ids are in the output.
struct response_meta {
  std::string suffix;
  std::string model;
  std::int64_t created = 0;  // unix seconds
};

// One whole SSE event ("event: …\ndata: …\n\n"). `delta` marks text and
// argument deltas: `Stream slowly` pauses after each, `disconnect` cuts the
// stream after the first.
struct sse_event {
  std::string bytes;
  bool delta = false;
};

struct stream_options {
  bool include_usage = false;    // chat only
  std::size_t delta_chars = 24;  // code points per delta
};

boost::json::object render_json(wire_format w, const model_output& out, const usage_figures& u,
                                const response_meta& meta);
std::vector<sse_event> render_stream(wire_format w, const model_output& out, const usage_figures& u,
                                     const response_meta& meta, const stream_options& opts);

// An error answer: status, extra headers, JSON body in the format's words.
struct http_error {
  unsigned status = 500;
  std::vector<std::pair<std::string, std::string>> headers;
  boost::json::object body;
};

// `Fail with: KIND` (not disconnect). `input_tokens` feeds the overflow text.
http_error render_failure(wire_format w, fail_kind k, std::uint64_t input_tokens);
// Bad input (400 malformed, 404, 405, 413, …) in the format's error shape.
http_error render_bad_request(wire_format w, unsigned status, const std::string& message);

// ---- helpers shared by the wire_*.cpp files ----
namespace detail {
// `text` cut into pieces of at most `n` code points (never inside a UTF-8 sequence).
std::vector<std::string> split_deltas(const std::string& text, std::size_t n);
std::string sse(std::string_view event, const boost::json::object& data);  // event may be empty (chat)
std::string sse_raw(std::string_view data);                                // "data: …\n\n"

boost::json::object chat_json(const model_output& out, const usage_figures& u, const response_meta& meta);
std::vector<sse_event> chat_stream(const model_output& out, const usage_figures& u, const response_meta& meta,
                                   const stream_options& opts);
boost::json::object responses_json(const model_output& out, const usage_figures& u, const response_meta& meta);
std::vector<sse_event> responses_stream(const model_output& out, const usage_figures& u, const response_meta& meta,
                                        const stream_options& opts);
boost::json::object anthropic_json(const model_output& out, const usage_figures& u, const response_meta& meta);
std::vector<sse_event> anthropic_stream(const model_output& out, const usage_figures& u, const response_meta& meta,
                                        const stream_options& opts);
http_error openai_failure(wire_format w, fail_kind k, std::uint64_t input_tokens);
http_error anthropic_failure(fail_kind k, std::uint64_t input_tokens);
}  // namespace detail

}  // namespace tether::mock
