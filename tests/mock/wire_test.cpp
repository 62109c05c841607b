#include "mock/wire.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include "http_client.h"

namespace tether::mock {
namespace {

namespace json = boost::json;

response_meta meta() { return {"ABC", "m1", 1700000000}; }

usage_figures usage() { return {100, 40, 7}; }

model_output text(std::string t) { return {std::move(t), std::nullopt}; }

model_output call(tool_kind k = tool_kind::function) {
  model_output o;
  o.call = tool_call{"call_1", "bash", R"({"command":"echo hello world"})", k};
  return o;
}

struct parsed {
  std::string event;
  json::value data;
  bool delta;
};

std::vector<parsed> parse(const std::vector<sse_event>& events) {
  std::vector<parsed> out;
  for (const auto& e : events) {
    const auto msgs = test::parse_sse(e.bytes);
    EXPECT_EQ(msgs.size(), 1U) << e.bytes;
    boost::system::error_code ec;
    auto v = json::parse(msgs.at(0).data, ec);
    out.push_back({msgs.at(0).event, ec ? json::value(msgs.at(0).data) : v, e.delta});
  }
  return out;
}

std::vector<std::string> names(const std::vector<parsed>& p) {
  std::vector<std::string> out;
  for (const auto& e : p) out.push_back(e.event);
  return out;
}

TEST(wire, deltas_split_by_code_points_never_inside_a_utf8_sequence) {
  const auto parts = detail::split_deltas("h\xC3\xA9llo w\xE2\x82\xAC", 3);
  ASSERT_EQ(parts.size(), 3U);
  EXPECT_EQ(parts[0], "h\xC3\xA9l");
  EXPECT_EQ(parts[2], "w\xE2\x82\xAC");
}

TEST(chat_wire, a_text_stream_has_role_content_finish_usage_then_done) {
  stream_options o;
  o.include_usage = true;
  o.delta_chars = 4;
  const auto p = parse(render_stream(wire_format::chat, text("hello world"), usage(), meta(), o));
  ASSERT_GE(p.size(), 6U);
  EXPECT_EQ(p.front().data.at("choices").at(0).at("delta").at("role"), "assistant");
  EXPECT_EQ(p.front().data.at("object"), "chat.completion.chunk");
  EXPECT_EQ(p.front().data.at("id"), "chatcmpl-ABC");
  std::string joined;
  for (const auto& e : p)
    if (e.delta) joined += e.data.at("choices").at(0).at("delta").at("content").as_string();
  EXPECT_EQ(joined, "hello world");
  EXPECT_EQ(p[p.size() - 3].data.at("choices").at(0).at("finish_reason"), "stop");
  const auto& u = p[p.size() - 2].data;
  EXPECT_TRUE(u.at("choices").as_array().empty());
  EXPECT_EQ(u.at("usage").at("prompt_tokens"), 100);
  EXPECT_EQ(u.at("usage").at("total_tokens"), 107);
  EXPECT_EQ(u.at("usage").at("prompt_tokens_details").at("cached_tokens"), 40);
  EXPECT_EQ(p.back().data, "[DONE]");
}

TEST(chat_wire, without_include_usage_there_is_no_usage_chunk) {
  const auto p = parse(render_stream(wire_format::chat, text("x"), usage(), meta(), {}));
  for (const auto& e : p) {
    if (e.data.is_object()) {
      EXPECT_FALSE(e.data.as_object().contains("usage"));
    }
  }
}

TEST(chat_wire, a_tool_call_streams_id_and_name_first_then_argument_pieces) {
  stream_options o;
  o.delta_chars = 5;
  const auto p = parse(render_stream(wire_format::chat, call(), usage(), meta(), o));
  const auto& first = p[0].data.at("choices").at(0).at("delta").at("tool_calls").at(0);
  EXPECT_EQ(first.at("id"), "call_1");
  EXPECT_EQ(first.at("type"), "function");
  EXPECT_EQ(first.at("function").at("name"), "bash");
  std::string args;
  for (const auto& e : p)
    if (e.delta)
      args += e.data.at("choices").at(0).at("delta").at("tool_calls").at(0).at("function").at("arguments").as_string();
  EXPECT_EQ(args, R"({"command":"echo hello world"})");
  EXPECT_EQ(p[p.size() - 2].data.at("choices").at(0).at("finish_reason"), "tool_calls");
}

TEST(chat_wire, the_json_answer_carries_message_finish_reason_and_usage) {
  const auto j = render_json(wire_format::chat, call(), usage(), meta());
  EXPECT_EQ(j.at("object"), "chat.completion");
  EXPECT_TRUE(j.at("choices").at(0).at("message").at("content").is_null());
  EXPECT_EQ(j.at("choices").at(0).at("message").at("tool_calls").at(0).at("function").at("name"), "bash");
  EXPECT_EQ(j.at("choices").at(0).at("finish_reason"), "tool_calls");
  EXPECT_EQ(j.at("usage").at("completion_tokens"), 7);
}

TEST(responses_wire, a_text_stream_has_the_typed_events_in_order_with_sequence_numbers) {
  const auto p = parse(render_stream(wire_format::responses, text("hi"), usage(), meta(), {}));
  EXPECT_EQ(names(p), (std::vector<std::string>{
                          "response.created", "response.in_progress", "response.output_item.added",
                          "response.content_part.added", "response.output_text.delta", "response.output_text.done",
                          "response.content_part.done", "response.output_item.done", "response.completed"}));
  for (std::size_t i = 0; i < p.size(); ++i) {
    EXPECT_EQ(std::string(p[i].data.at("type").as_string()), p[i].event);
    EXPECT_EQ(p[i].data.at("sequence_number"), static_cast<std::int64_t>(i));
  }
  const auto& item = p[7].data.at("item");
  EXPECT_EQ(item.at("type"), "message");
  EXPECT_EQ(item.at("content").at(0).at("type"), "output_text");
  EXPECT_EQ(item.at("content").at(0).at("text"), "hi");
  const auto& r = p.back().data.at("response");
  EXPECT_EQ(r.at("id"), "resp_ABC");
  EXPECT_EQ(r.at("status"), "completed");
  EXPECT_EQ(r.at("output").at(0).at("content").at(0).at("text"), "hi");
  EXPECT_EQ(r.at("usage").at("input_tokens"), 100);
  EXPECT_EQ(r.at("usage").at("input_tokens_details").at("cached_tokens"), 40);
  EXPECT_EQ(r.at("usage").at("output_tokens_details").at("reasoning_tokens"), 0);
  EXPECT_EQ(r.at("usage").at("total_tokens"), 107);
}

TEST(responses_wire, a_function_call_ends_with_the_whole_item) {
  const auto p = parse(render_stream(wire_format::responses, call(), usage(), meta(), {}));
  EXPECT_EQ(p[3].event, "response.function_call_arguments.delta");
  const auto& done = p[p.size() - 2];
  EXPECT_EQ(done.event, "response.output_item.done");
  EXPECT_EQ(done.data.at("item").at("type"), "function_call");
  EXPECT_EQ(done.data.at("item").at("call_id"), "call_1");
  EXPECT_EQ(done.data.at("item").at("id"), "fc_ABC");
  EXPECT_EQ(done.data.at("item").at("arguments"), R"({"command":"echo hello world"})");
}

TEST(responses_wire, a_call_of_a_namespaced_function_names_its_namespace) {
  auto out = call();
  out.call->tool_namespace = "mcp__tether";
  const auto p = parse(render_stream(wire_format::responses, out, usage(), meta(), {}));
  const auto& done = p[p.size() - 2];
  EXPECT_EQ(done.data.at("item").at("namespace"), "mcp__tether");
  const auto plain = parse(render_stream(wire_format::responses, call(), usage(), meta(), {}));
  EXPECT_FALSE(plain[plain.size() - 2].data.at("item").as_object().contains("namespace"));
}

TEST(responses_wire, custom_and_local_shell_calls_use_their_own_item_types) {
  auto p = parse(render_stream(wire_format::responses, call(tool_kind::custom), usage(), meta(), {}));
  EXPECT_EQ(p[3].event, "response.custom_tool_call_input.delta");
  EXPECT_EQ(p[p.size() - 2].data.at("item").at("type"), "custom_tool_call");
  model_output shell;
  shell.call = tool_call{"call_2", "local_shell", R"({"command":["bash","-lc","ls"]})", tool_kind::local_shell};
  const auto j = render_json(wire_format::responses, shell, usage(), meta());
  EXPECT_EQ(j.at("output").at(0).at("type"), "local_shell_call");
  EXPECT_EQ(j.at("output").at(0).at("action").at("command").at(2), "ls");
}

TEST(anthropic_wire, a_text_stream_has_every_event_clients_require) {
  const auto p = parse(render_stream(wire_format::anthropic, text("hi"), usage(), meta(), {}));
  EXPECT_EQ(names(p), (std::vector<std::string>{"message_start", "content_block_start", "ping", "content_block_delta",
                                                "content_block_stop", "message_delta", "message_stop"}));
  const auto& start = p[0].data.at("message");
  EXPECT_EQ(start.at("id"), "msg_ABC");
  EXPECT_EQ(start.at("usage").at("input_tokens"), 60);  // cache reads are counted apart
  EXPECT_EQ(start.at("usage").at("cache_read_input_tokens"), 40);
  EXPECT_EQ(p[3].data.at("delta").at("type"), "text_delta");
  EXPECT_EQ(p[5].data.at("delta").at("stop_reason"), "end_turn");
  EXPECT_EQ(p[5].data.at("usage").at("output_tokens"), 7);
}

TEST(anthropic_wire, a_tool_use_streams_input_json_deltas) {
  stream_options o;
  o.delta_chars = 4;
  const auto p = parse(render_stream(wire_format::anthropic, call(), usage(), meta(), o));
  const auto& block = p[1].data.at("content_block");
  EXPECT_EQ(block.at("type"), "tool_use");
  EXPECT_EQ(block.at("id"), "call_1");
  EXPECT_TRUE(block.at("input").as_object().empty());
  std::string args;
  for (const auto& e : p)
    if (e.delta) {
      EXPECT_EQ(e.data.at("delta").at("type"), "input_json_delta");
      args += e.data.at("delta").at("partial_json").as_string();
    }
  EXPECT_EQ(args, R"({"command":"echo hello world"})");
  EXPECT_EQ(p[p.size() - 2].data.at("delta").at("stop_reason"), "tool_use");
}

TEST(anthropic_wire, the_json_answer_carries_the_parsed_tool_input) {
  const auto j = render_json(wire_format::anthropic, call(), usage(), meta());
  EXPECT_EQ(j.at("type"), "message");
  EXPECT_EQ(j.at("content").at(0).at("input").at("command"), "echo hello world");
  EXPECT_EQ(j.at("stop_reason"), "tool_use");
}

TEST(failures, each_kind_has_its_status_and_body_in_each_format) {
  auto e = render_failure(wire_format::chat, fail_kind::rate_limit, 10);
  EXPECT_EQ(e.status, 429U);
  ASSERT_EQ(e.headers.size(), 1U);
  EXPECT_EQ(e.headers[0], (std::pair<std::string, std::string>{"retry-after", "0"}));
  EXPECT_EQ(render_failure(wire_format::anthropic, fail_kind::rate_limit, 1).body.at("error").at("type"),
            "rate_limit_error");
  EXPECT_EQ(render_failure(wire_format::chat, fail_kind::server_error, 1).status, 500U);
  EXPECT_EQ(render_failure(wire_format::anthropic, fail_kind::overloaded, 1).status, 529U);
  EXPECT_EQ(render_failure(wire_format::anthropic, fail_kind::overloaded, 1).body.at("error").at("type"),
            "overloaded_error");
  EXPECT_EQ(render_failure(wire_format::responses, fail_kind::overloaded, 1).status, 503U);
  e = render_failure(wire_format::chat, fail_kind::auth, 1);
  EXPECT_EQ(e.status, 401U);
  EXPECT_EQ(e.body.at("error").at("code"), "invalid_api_key");
  EXPECT_EQ(e.body.at("error").at("message"), "Incorrect API key provided");
  EXPECT_EQ(render_failure(wire_format::anthropic, fail_kind::auth, 1).body.at("error").at("type"),
            "authentication_error");
}

TEST(failures, overflow_speaks_each_formats_context_length_words) {
  auto e = render_failure(wire_format::chat, fail_kind::overflow, 12);
  EXPECT_EQ(e.status, 400U);
  EXPECT_EQ(e.body.at("error").at("code"), "context_length_exceeded");
  EXPECT_EQ(e.body.at("error").at("message"),
            "This model's maximum context length is 128000 tokens. However, your messages resulted in 128001 "
            "tokens. Please reduce the length of the messages.");
  e = render_failure(wire_format::responses, fail_kind::overflow, 12);
  EXPECT_EQ(e.body.at("error").at("code"), "context_length_exceeded");
  EXPECT_EQ(e.body.at("error").at("message"),
            "Your input exceeds the context window of this model. Please adjust your input and try again.");
  e = render_failure(wire_format::anthropic, fail_kind::overflow, 250000);
  EXPECT_EQ(e.body.at("type"), "error");
  EXPECT_EQ(e.body.at("error").at("type"), "invalid_request_error");
  EXPECT_EQ(e.body.at("error").at("message"), "prompt is too long: 250000 tokens > 200000 maximum");
}

}  // namespace
}  // namespace tether::mock
