// The provider stream mappers (runtime/native/providers/wire.h), all three
// wire formats, fed as provider.cpp feeds them: response bytes cut into
// chunks → sse_parser → wire_mapper::on_event until a failure or the end
// marker.
//
// Input: one byte picks the format (openai-chat, openai-responses,
// anthropic), one byte seeds where the body is cut, the rest is the body.
// Invariants:
//   - no exception escapes; a bad payload is a failure_info;
//   - every string that reaches the sink, the completion or a failure
//     message is valid UTF-8 (it is stored in events and sent as JSON);
//   - the completion's text and reasoning are the deltas joined;
//   - after the end marker nothing more is emitted.
#include <string>
#include <variant>
#include <vector>

#include "fuzz_support.h"
#include "http/sse_parser.h"
#include "runtime/native/providers/wire.h"

namespace {

namespace native = tether::runtime::native;
using tether::fuzz::valid_utf8;

struct seen {
  std::string text;
  std::string reasoning;
  std::size_t events = 0;
};

void check_event(const native::stream_event& e, seen& s) {
  ++s.events;
  if (const auto* t = std::get_if<native::text_delta_event>(&e)) {
    FUZZ_CHECK(valid_utf8(t->text));
    s.text += t->text;
  } else if (const auto* r = std::get_if<native::reasoning_delta_event>(&e)) {
    FUZZ_CHECK(valid_utf8(r->text));
    s.reasoning += r->text;
  } else if (const auto* d = std::get_if<native::tool_input_delta_event>(&e)) {
    FUZZ_CHECK(valid_utf8(d->id) && valid_utf8(d->name) && valid_utf8(d->json_fragment));
  } else if (const auto* c = std::get_if<native::tool_call_event>(&e)) {
    FUZZ_CHECK(valid_utf8(c->call.id) && valid_utf8(c->call.name));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tether::fuzz::input_reader in(data, size);
  const std::uint8_t format = in.byte() % 3;
  tether::fuzz::splitter cuts(in.byte());
  std::string_view body = in.rest();

  native::provider_options options;
  options.api = format == 0   ? native::wire_api::openai_chat
                : format == 1 ? native::wire_api::openai_responses
                              : native::wire_api::anthropic;
  options.base_url = "http://127.0.0.1:9/v1";
  options.model = "fuzz-model";
  seen s;
  auto mapper = native::make_wire_mapper(options, [&](const native::stream_event& e) { check_event(e, s); });

  native::model_request request;
  native::chat_message user;
  user.text = "hello";
  request.messages.push_back(user);
  (void)mapper->build(request);

  tether::http::sse_parser sse;
  std::optional<native::failure_info> failure;
  bool stopped = false;
  while (!body.empty() && !stopped) {
    const std::size_t n = std::min(cuts.next(64), body.size());
    for (const auto& ev : sse.feed(body.substr(0, n))) {
      failure = mapper->on_event(ev);
      if (failure || mapper->ended()) {
        stopped = true;
        break;
      }
    }
    body.remove_prefix(n);
  }
  sse.finish();

  if (failure) {
    FUZZ_CHECK(valid_utf8(failure->message));
    FUZZ_CHECK(valid_utf8(failure->provider_message));
    return 0;
  }
  if (!mapper->ended()) return 0;

  // Events after the end marker are ignored.
  const std::size_t before = s.events;
  tether::http::sse_event extra;
  extra.data = R"({"type":"response.output_text.delta","delta":"x","choices":[{"delta":{"content":"x"}}]})";
  FUZZ_CHECK(!mapper->on_event(extra));
  FUZZ_CHECK(s.events == before);

  const native::completion done = mapper->take();
  FUZZ_CHECK(done.text == s.text);
  FUZZ_CHECK(done.reasoning == s.reasoning);
  FUZZ_CHECK(valid_utf8(done.raw_finish) && valid_utf8(done.response_id));
  for (const auto& call : done.calls) FUZZ_CHECK(valid_utf8(call.id) && valid_utf8(call.name));
  return 0;
}
