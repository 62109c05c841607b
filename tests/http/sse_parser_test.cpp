#include "http/sse_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tether::http {
namespace {

std::vector<sse_event> parse_whole(std::string_view text) {
  sse_parser p;
  auto out = p.feed(text);
  p.finish();
  return out;
}

enum class id_line { absent, present };

sse_event ev(std::string event, std::string data, std::string id = {}, id_line own = id_line::absent) {
  return {std::move(event), std::move(data), std::move(id), own == id_line::present};
}

const std::string sample =
    "\xEF\xBB\xBF: a comment first\r\n"
    "event: message_start\r\n"
    "data: {\"a\":1}\r\n"
    "\r\n"
    "data: line one\n"
    "data:line two\n"
    "data\n"
    "id: 42\n"
    "\n"
    ":keep-alive\r\r"
    "event: ping\rdata: {}\r\r"
    "retry: 1500\n"
    "data: after id\n\n"
    "event: no data\n\n"
    "data: last\n\n";

TEST(sse_parser, follows_the_event_stream_rules) {
  const auto events = parse_whole(sample);
  ASSERT_EQ(events.size(), 5U);
  EXPECT_EQ(events[0], ev("message_start", "{\"a\":1}"));
  EXPECT_EQ(events[1], ev("", "line one\nline two\n", "42", id_line::present));
  EXPECT_EQ(events[2], ev("ping", "{}", "42"));
  EXPECT_EQ(events[3], ev("", "after id", "42"));
  EXPECT_EQ(events[4], ev("", "last", "42"));
}

TEST(sse_parser, comment_lines_are_counted_but_never_dispatched) {
  sse_parser p;
  auto out = p.feed(": heartbeat\n\n:\r\ndata: x\n: inside an event\n\n");
  ASSERT_EQ(out.size(), 1U);
  EXPECT_EQ(out[0].data, "x");
  EXPECT_EQ(p.comments(), 3U);
}

TEST(sse_parser, the_same_events_come_out_when_split_at_every_byte) {
  const auto whole = parse_whole(sample);
  for (std::size_t cut = 0; cut <= sample.size(); ++cut) {
    sse_parser p;
    auto out = p.feed(std::string_view(sample).substr(0, cut));
    for (auto& e : p.feed(std::string_view(sample).substr(cut))) out.push_back(std::move(e));
    EXPECT_EQ(out, whole) << "cut at " << cut;
  }
  sse_parser p;
  std::vector<sse_event> bytewise;
  for (const char c : sample)
    for (auto& e : p.feed(std::string_view(&c, 1))) bytewise.push_back(std::move(e));
  EXPECT_EQ(bytewise, whole);
}

TEST(sse_parser, a_crlf_split_between_chunks_is_one_line_end) {
  sse_parser p;
  EXPECT_TRUE(p.feed("data: x\r").empty());
  EXPECT_TRUE(p.feed("\n").empty());  // the \n completes the \r, it is not an empty line
  const auto out = p.feed("\r\n");
  ASSERT_EQ(out.size(), 1U);
  EXPECT_EQ(out[0].data, "x");
}

TEST(sse_parser, an_event_without_its_blank_line_is_dropped_at_the_end) {
  sse_parser p;
  EXPECT_TRUE(p.feed("data: [DONE]\n").empty());
  EXPECT_TRUE(p.finish());  // a partial event was pending and is discarded
  sse_parser q;
  EXPECT_EQ(q.feed("data: [DONE]\n\n").size(), 1U);
  EXPECT_FALSE(q.finish());
}

TEST(sse_parser, retry_and_unknown_fields) {
  sse_parser p;
  const auto out = p.feed("retry: 2500\nfoo: bar\nretry: x1\ndata: d\n\n");
  ASSERT_EQ(out.size(), 1U);
  EXPECT_EQ(p.retry_ms(), 2500);
}

TEST(sse_parser, one_leading_space_is_dropped_from_values) {
  const auto out = parse_whole("data:  two spaces\n\n");
  ASSERT_EQ(out.size(), 1U);
  EXPECT_EQ(out[0].data, " two spaces");
}

TEST(sse_parser, a_broken_bom_prefix_is_kept_as_data) {
  const std::string text =
      "\xEF\xBB"
      "data: x\n\n";  // not a full BOM: the bytes start the line
  const auto out = parse_whole(text);
  EXPECT_TRUE(out.empty());  // the field name is then "\xEF\xBBdata", unknown
}

}  // namespace
}  // namespace tether::http
