// Cassettes: recorded HTTP exchanges with a model provider, replayed through
// the real client and wire mappers (tests/fixtures/recordings/README.md).
//
//   auto run = play("openai_chat_text", wire_api::openai_chat, request);
//   TETHER_SKIP_IF_RECORDED(run);
//   EXPECT_EQ(run.outcome.done->text, "…");
//
// play() serves the cassette's response from a loopback_server, runs
// provider::stream() against it, and checks the request the client sent
// against the cassette's expected request (method, path, listed headers, and
// the expected JSON as a subset of the sent body).
//
// Recording: with TETHER_RECORD=1 and the provider's key in the environment
// (OPENAI_API_KEY, ANTHROPIC_API_KEY; OPENAI_BASE_URL / ANTHROPIC_BASE_URL
// optional), a recordable cassette is made by running the same request
// against the live API through an http_tap, and the file is rewritten from
// the real bytes (keys redacted). The test is then skipped: live answers do
// not match the hand-written assertions.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <boost/json/value.hpp>

#include "http/client.h"
#include "runtime/native/providers/loopback.h"
#include "runtime/native/providers/provider.h"
#include "runtime/native/providers/types.h"

namespace tether::runtime::native::testing {

struct cassette {
  // request
  std::string method;
  std::string path;
  std::vector<std::pair<std::string, std::string>> request_headers;
  std::string request_body;  // expected JSON (a subset), may be empty
  // response
  std::string status_line;                                            // "HTTP/1.1 200 OK"
  std::vector<std::pair<std::string, std::string>> response_headers;  // framing headers removed
  std::string body;                                                   // bytes exactly as recorded
};

std::filesystem::path recordings_dir();
cassette load_cassette(const std::string& name);  // recordings_dir()/<name>.http
cassette load_cassette_file(const std::filesystem::path& file);

// An http_tap that writes the exchange it saw as a cassette (API keys
// redacted, set-cookie and openai-organization dropped): TETHER_RECORD=1.
class cassette_recorder final : public http::http_tap {
 public:
  void on_request(const http::http_request& r) override;
  void on_head(const http::http_response_head& h) override;
  void on_body(std::string_view bytes) override;
  void write(const std::filesystem::path& file) const;

 private:
  std::string method_, path_, host_, headers_, body_, head_, response_;
};
// The response head for a loopback_server: status line + headers, CRLF each.
std::string response_head(const cassette& c);

// "" when every member of `expected` is in `actual` with an equal value
// (objects recursively; arrays element by element, same length); else the
// path of the first difference.
std::string json_subset_mismatch(const boost::json::value& actual, const boost::json::value& expected,
                                 const std::string& path = "$");

// One stream_event as a line, for comparing event sequences.
std::string describe(const stream_event& e);

enum class recordable { yes, no };

struct play_options {
  framing frame = framing::chunked;
  std::size_t piece = 7;  // small pieces: events and JSON split across reads
  std::optional<std::size_t> cut_after;
  recordable record = recordable::yes;
  std::string api_key = "sk-test-0123456789";
  std::size_t max_response_bytes = 64U << 20U;
};

struct play_result {
  stream_outcome outcome;
  std::vector<std::string> events;  // describe() of each streamed event
  std::optional<received_request> request;
  bool recorded = false;
};

play_result play(const std::string& name, wire_api api, model_request request, play_options opts = {});

// Runs one stream against `options` on a fresh io_context.
play_result run_stream(provider_options options, model_request request);

// The JSON body a wire format builds for `request` (no network).
boost::json::object build_body(wire_api api, const model_request& request, provider_options options = {});

// Feeds a response body to a wire mapper directly (no HTTP), cut into pieces
// at the given offsets, and reports what came out.
struct fed_stream {
  std::vector<std::string> events;
  std::optional<failure_info> failure;
  bool ended = false;
  bool output_seen = false;
  completion done;
};
fed_stream feed_mapper(wire_api api, std::string_view body, const std::vector<std::size_t>& cuts = {},
                       std::string model = "test-model");

}  // namespace tether::runtime::native::testing

#define TETHER_SKIP_IF_RECORDED(run)                                           \
  do {                                                                         \
    if ((run).recorded) GTEST_SKIP() << "cassette recorded from the live API"; \
  } while (0)
