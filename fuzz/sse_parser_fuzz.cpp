// The SSE parser (http/sse_parser.h) on arbitrary bytes.
//
// Invariants:
//   - the events, retry_ms() and finish() do not depend on where the stream
//     is cut: whole, byte by byte (up to 1 KiB), at every single position
//     (up to 256 bytes) and at pseudo-random positions all agree;
//   - valid UTF-8 in, valid UTF-8 out (line ends are ASCII, so a split never
//     cuts a character);
//   - re-encoding the events as an event stream and parsing that gives the
//     same events (no field leaks into another);
//   - nothing is buffered after finish().
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "http/sse_parser.h"

namespace {

using tether::http::sse_event;
using tether::http::sse_parser;

struct parsed {
  std::vector<sse_event> events;
  bool partial = false;
  std::optional<std::int64_t> retry;
  bool operator==(const parsed&) const = default;
};

template <class Cut>
parsed parse(std::string_view in, Cut cut) {
  sse_parser p;
  parsed out;
  while (!in.empty()) {
    const std::size_t n = std::min(cut(in.size()), in.size());
    for (auto& e : p.feed(in.substr(0, n))) out.events.push_back(std::move(e));
    in.remove_prefix(n);
  }
  out.retry = p.retry_ms();
  out.partial = p.finish();
  FUZZ_CHECK(p.buffered() == 0);
  return out;
}

// Re-encoding writes an id line where the event carried one or where its id
// differs from the previous one (set by an event that was dropped), so the
// ids come back equal; `own_id` may then differ and is not compared.
std::string encode(const std::vector<sse_event>& events) {
  std::string s;
  std::string previous_id;
  for (const auto& e : events) {
    if (!e.event.empty()) s += "event: " + e.event + "\n";
    if (e.own_id || e.id != previous_id) s += "id: " + e.id + "\n";
    previous_id = e.id;
    std::string_view d = e.data;
    for (;;) {
      const auto nl = d.find('\n');
      s += "data: ";
      s += d.substr(0, nl);
      s += "\n";
      if (nl == std::string_view::npos) break;
      d.remove_prefix(nl + 1);
    }
    s += "\n";
  }
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const parsed whole = parse(in, [](std::size_t n) { return n; });
  if (size <= 1024) FUZZ_CHECK(parse(in, [](std::size_t) { return std::size_t{1}; }) == whole);
  if (size <= 256) {
    for (std::size_t at = 1; at < size; ++at) {
      bool first = true;
      FUZZ_CHECK(parse(in, [&](std::size_t n) {
                   if (!first) return n;
                   first = false;
                   return at;
                 }) == whole);
    }
  }
  for (std::uint64_t seed = 0; seed < 4; ++seed) {
    tether::fuzz::splitter s(seed + size);
    FUZZ_CHECK(parse(in, [&](std::size_t) { return s.next(16); }) == whole);
  }

  if (tether::fuzz::valid_utf8(in)) {
    for (const auto& e : whole.events) {
      FUZZ_CHECK(tether::fuzz::valid_utf8(e.event));
      FUZZ_CHECK(tether::fuzz::valid_utf8(e.data));
      FUZZ_CHECK(tether::fuzz::valid_utf8(e.id));
    }
  }

  const parsed again = parse(encode(whole.events), [](std::size_t n) { return n; });
  FUZZ_CHECK(again.events.size() == whole.events.size());
  for (std::size_t i = 0; i < again.events.size() && i < whole.events.size(); ++i) {
    FUZZ_CHECK(again.events[i].event == whole.events[i].event);
    FUZZ_CHECK(again.events[i].data == whole.events[i].data);
    FUZZ_CHECK(again.events[i].id == whole.events[i].id);
  }
  FUZZ_CHECK(!again.partial);
  return 0;
}
