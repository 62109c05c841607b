// request_handler: everything the server does with one HTTP request except
// the socket work: routing, recording, deciding, rendering. Tests call it
// directly; server.cpp feeds it requests read by Beast and writes its reply.
//
// Routes:
//   POST /v1/chat/completions   OpenAI Chat Completions   (query ignored)
//   POST /v1/responses          OpenAI Responses
//   POST /v1/messages           Anthropic Messages        (?beta=true ignored)
//   GET  /v1/models             a model list (OpenAI and Anthropic fields)
//   GET  /_mock/requests?after=N   {"requests":[{"seq","route","body","received_us","completed_us"}…]}, seq > N
//   GET  /_mock/health          {"status":"ok"}
//   HEAD|GET /                  200 (Claude Code probes it)
//   POST /v1/messages/count_tokens   {"input_tokens": N} (not recorded)
// A known path with another method is 405, anything else 404. A model route
// body that is not valid UTF-8 or not JSON, or has the wrong shape, is 400
// in that format's error shape (nothing is recorded); a well-formed request
// is recorded (seq from 1) before it is answered, failures included.
//
// State kept across requests (all behind one mutex, so handle() may be
// called from several threads and requests() from any thread): the recorded
// requests (the newest 10,000 within a byte budget in memory; every one in
// the --record file, one JSON line per request, flushed), the
// prompt cache (usage.h) and the hashes of the instructions whose
// `Fail with: KIND once` already failed.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json/value.hpp>

#include "mock/usage.h"
#include "mock/wire.h"
#include "util/result.h"

namespace tether::mock {

// What to send back. Either a whole body (`events` empty, `streaming`
// false), or an SSE stream of `events` (chunked, text/event-stream).
struct http_reply {
  unsigned status = 200;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  bool streaming = false;
  std::vector<sse_event> events;
  std::chrono::milliseconds delta_interval{0};  // pause after each delta event
  // Fail with: disconnect — stream: close after the first delta event;
  // non-streaming: close without answering.
  bool disconnect = false;
  bool close = false;            // close the connection after this reply
  std::size_t recorded_seq = 0;  // the recorded request it answers (0: none)
};

// The steady clock in microseconds: recorded requests carry `received_us`
// (when the request was read) and `completed_us` (when the last byte of its
// answer was written), so a benchmark in the same process can time what a
// client does between two requests.
std::int64_t steady_micros();

class request_handler {
 public:
  // Memory for the kept requests (their JSON text, roughly): the oldest are
  // dropped past it (the newest is always kept); the record file keeps all.
  static constexpr std::size_t default_max_kept_bytes = 64U << 20U;
  explicit request_handler(std::size_t max_kept_bytes = default_max_kept_bytes) : max_kept_bytes_(max_kept_bytes) {}
  request_handler(const request_handler&) = delete;
  request_handler& operator=(const request_handler&) = delete;

  // Opens (appends to) the record file; mock_errc::record_failed when it cannot.
  result<void> open_record(const std::filesystem::path& file);

  http_reply handle(std::string_view method, std::string_view target, std::string_view body);

  // The reply for a request whose body exceeded the limit (413).
  http_reply too_large(std::string_view target, std::size_t limit) const;

  std::vector<boost::json::value> requests(std::size_t after = 0) const;
  // Stamps the recorded request `seq` with completed_us (the server calls it
  // after writing the answer's last byte).
  void mark_completed(std::size_t seq);
  // What the kept requests count against max_kept_bytes.
  [[nodiscard]] std::size_t kept_bytes() const;

 private:
  http_reply model_request(wire_format w, std::string_view route, std::string_view body);
  http_reply list_requests(std::string_view query) const;

  mutable std::mutex mu_;
  // The most recent requests (the oldest are dropped past max_kept_requests
  // or max_kept_bytes_; seq numbers go on counting), with their sizes.
  static constexpr std::size_t max_kept_requests = 10'000;
  const std::size_t max_kept_bytes_;
  std::deque<boost::json::value> requests_;
  std::deque<std::size_t> sizes_;
  std::size_t kept_bytes_ = 0;
  std::size_t dropped_ = 0;
  std::optional<std::ofstream> record_;
  prompt_cache cache_;
  std::set<std::uint64_t> failed_once_;
};

// The reply to an HTTP request Beast could not parse (400, 431 for headers
// over the limit); the connection is closed after it.
http_reply malformed_http(unsigned status, const std::string& message);

// Splits "/path?query" into path and query.
std::pair<std::string_view, std::string_view> split_target(std::string_view target);

}  // namespace tether::mock
