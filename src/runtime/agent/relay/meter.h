// relay_meter — the usage a model server reports in one response, read from
// the bytes the model relay (model_relay.h) passes through, without
// changing them. One meter per response.
//
//   relay_meter m(content_type);          // the response's Content-Type
//   m.feed(piece) ... m.feed(piece);      // the body as it streams
//   if (auto u = m.finish()) total += *u; // what the response reported
//
// What counts, by wire format (the same fields the native providers read):
//   OpenAI Responses        response.completed / response.incomplete /
//                           response.failed (stream) or the body: usage
//                           {input_tokens, output_tokens,
//                           input_tokens_details.cached_tokens}
//   OpenAI Chat Completions a chunk's or the body's usage {prompt_tokens,
//                           completion_tokens,
//                           prompt_tokens_details.cached_tokens}
//   Anthropic Messages      message_start's message.usage and
//                           message_delta's usage (stream), or the body's:
//                           input = input_tokens + cache_read_input_tokens +
//                           cache_creation_input_tokens, cached = the reads
// A text/event-stream body is read event by event (each event's data at
// most max_event_bytes; a longer one is skipped); any other body is read
// whole up to max_body_bytes and parsed as JSON at the end. A response that
// reports nothing (an error, a models list, a chat stream without
// include_usage) gives nullopt.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "http/sse_parser.h"
#include "model/events.h"

namespace tether::runtime::agent {

class relay_meter {
 public:
  static constexpr std::size_t max_body_bytes = 16U << 20U;
  static constexpr std::size_t max_event_bytes = 16U << 20U;

  explicit relay_meter(std::string_view content_type);
  void feed(std::string_view bytes);
  std::optional<model::usage> finish();

 private:
  void take(std::string_view json_text);

  bool stream_ = false;
  http::sse_parser sse_;
  std::string body_;
  bool overflow_ = false;
  bool seen_ = false;
  model::usage usage_;
  // Anthropic's input parts, kept apart: message_start carries them, and a
  // message_delta may repeat them.
  std::int64_t input_ = 0;
  std::int64_t cache_read_ = 0;
  std::int64_t cache_write_ = 0;
};

}  // namespace tether::runtime::agent
