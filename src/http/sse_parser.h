// An incremental parser of Server-Sent Events (the WHATWG "event stream"
// format), fed with byte chunks cut anywhere. The one parser of event streams
// in Tether: the model providers read their streams with it, and the API
// client (client/client.h) reads the server's. It depends on nothing but the
// standard library.
//
//   sse_parser p;
//   for (auto& chunk : body) for (auto& ev : p.feed(chunk)) handle(ev);
//   p.finish();
//
// Parsing follows the HTML standard's event-stream rules:
//   - lines end with "\r\n", "\n" or "\r" (a "\r\n" split across two chunks
//     is one line end); a leading UTF-8 BOM is skipped;
//   - "field: value" (one space after the colon is dropped), "field" alone
//     means an empty value; lines starting with ':' are comments;
//   - `data` lines are joined with "\n"; `event` sets the type; `id` sets the
//     last event id (kept for later events, as the standard says; an id with
//     a NUL is ignored); `retry` (digits only) is kept in retry_ms(); other
//     fields are ignored;
//   - an empty line dispatches the event, unless no data line was seen (then
//     the event is dropped and its type reset).
//
// End of stream: the standard says an event not closed by an empty line is
// discarded, and so does finish(). Every provider ends its streams with a
// blank line after the end marker, so a stream cut before it is incomplete.
// finish() returns true when such an unfinished event was dropped.
//
// `event` is left empty when the stream named no type (the standard's
// default type is "message").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tether::http {

struct sse_event {
  std::string event;  // the `event:` field, empty when none was given
  std::string data;   // the `data:` lines joined with "\n"
  std::string id;     // the last event id seen so far
  bool own_id = false;  // this event's own fields set the id (else it is an earlier event's)
  bool operator==(const sse_event&) const = default;
};

class sse_parser {
 public:
  // Parses `chunk` and returns the events it completed, in order.
  std::vector<sse_event> feed(std::string_view chunk);
  // The stream ended. Drops a partial event; true if there was one.
  bool finish();

  [[nodiscard]] std::optional<std::int64_t> retry_ms() const { return retry_ms_; }
  // Comment lines seen so far (a server's heartbeats).
  [[nodiscard]] std::size_t comments() const { return comments_; }
  // Bytes buffered in an unfinished line or event (for size limits).
  [[nodiscard]] std::size_t buffered() const { return line_.size() + data_.size(); }

 private:
  void on_line(std::string_view line, std::vector<sse_event>& out);

  std::string line_;
  std::string event_;
  std::string data_;
  std::string last_id_;
  bool have_data_ = false;
  bool own_id_ = false;       // an id line since the last dispatch
  bool pending_ = false;      // a field was seen since the last dispatch
  bool after_cr_ = false;     // the previous chunk ended with '\r'
  bool at_start_ = true;      // nothing fed yet (BOM check)
  std::size_t bom_seen_ = 0;  // BOM bytes matched so far
  std::optional<std::int64_t> retry_ms_;
  std::size_t comments_ = 0;
};

}  // namespace tether::http
