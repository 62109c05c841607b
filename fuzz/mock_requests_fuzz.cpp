// The scripted model (`tether mock-llm`): its request readers
// (mock/request.h), its directive parser (mock/directives.h) and everything
// between a request body and the reply (mock/handler.h).
//
// Input: one byte picks the mode — a model request body for one of the three
// routes (chat, responses, anthropic), taken through request_handler::handle
// (JSON → request reader → directives → script → wire reply), or a user
// message for parse_directives() alone; the rest is the body or message.
// Invariants:
//   - no exception escapes, the reply is 200 or a 4xx/5xx error;
//   - a JSON reply body is JSON; every SSE event of a streamed reply is
//     well-framed (`…\n\n`) and its data is JSON or [DONE];
//   - valid UTF-8 in, valid UTF-8 out of the directive parser.
#include <string>

#include <boost/json.hpp>

#include "fuzz_support.h"
#include "mock/directives.h"
#include "mock/handler.h"
#include "mock/request.h"

namespace {

namespace json = boost::json;
namespace mock = tether::mock;
using tether::fuzz::valid_utf8;

constexpr std::string_view routes[] = {"/v1/chat/completions", "/v1/responses", "/v1/messages"};
constexpr mock::wire_format formats[] = {mock::wire_format::chat, mock::wire_format::responses,
                                         mock::wire_format::anthropic};

bool is_json(std::string_view text) {
  boost::system::error_code ec;
  (void)json::parse(text, ec);
  return !ec;
}

void check_event(std::string_view bytes) {
  FUZZ_CHECK(bytes.size() >= 2 && bytes.ends_with("\n\n"));
  std::string data;
  std::size_t at = 0;
  while (at < bytes.size()) {
    const auto nl = bytes.find('\n', at);
    const std::string_view line = bytes.substr(at, nl == std::string_view::npos ? nl : nl - at);
    if (line.starts_with("data: ")) data += line.substr(6);
    if (nl == std::string_view::npos) break;
    at = nl + 1;
  }
  FUZZ_CHECK(data == "[DONE]" || is_json(data));
}

void check_directives(std::string_view text) {
  const bool utf8 = valid_utf8(text);
  for (const auto& d : mock::parse_directives(text)) {
    if (!utf8) continue;
    FUZZ_CHECK(valid_utf8(d.text) && valid_utf8(d.path) && valid_utf8(d.name));
    for (const auto& item : d.items) FUZZ_CHECK(valid_utf8(item));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tether::fuzz::input_reader in(data, size);
  const std::uint8_t mode = in.byte() % 5;
  const std::string_view body = in.rest();

  if (mode == 3) {
    check_directives(body);
    return 0;
  }
  if (mode == 4) {  // the readers alone, with the format the route would not pick
    boost::system::error_code ec;
    const json::value v = json::parse(body, ec);
    if (ec) return 0;
    for (auto f : formats) (void)mock::parse_request(f, v);
    return 0;
  }

  mock::request_handler handler;
  const mock::http_reply reply = handler.handle("POST", routes[mode], body);
  FUZZ_CHECK(reply.status == 200 || (reply.status >= 400 && reply.status < 600));
  if (reply.streaming) {
    for (const auto& e : reply.events) check_event(e.bytes);
  } else if (reply.content_type == "application/json" && !reply.disconnect) {
    FUZZ_CHECK(is_json(reply.body));
  }
  // The request, if it was well-formed, was recorded and reads back as JSON.
  for (const auto& r : handler.requests()) (void)json::serialize(r);
  return 0;
}
