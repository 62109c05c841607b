// OpenAI Chat Completions: request mapping and cassette replays.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "runtime/native/providers/provider.h"
#include "runtime/native/providers/cassette.h"

namespace tether::runtime::native {
namespace {

namespace json = boost::json;
using testing::build_body;
using ::testing::ElementsAre;
using testing::feed_mapper;
using testing::play;
using testing::play_options;

tool_spec tool(std::string name, std::string description, std::string what) {
  return tool_spec{std::move(name), std::move(description),
                   json::parse(R"({"type":"object","properties":{"path":{"type":"string","description":")" + what +
                               R"("}},"required":["path"]})")
                       .as_object()};
}

model_request text_request() {
  model_request r;
  r.model = "gpt-4o-mini";
  r.messages.push_back(chat_message{.role = chat_role::system, .text = "You are a terse assistant."});
  r.messages.push_back(chat_message{.role = chat_role::user, .text = "Say hello."});
  return r;
}

TEST(openai_chat_cassette, a_text_stream_with_cached_usage) {
  const auto run = play("openai_chat_text", wire_api::openai_chat, text_request());
  TETHER_SKIP_IF_RECORDED(run);
  ASSERT_TRUE(run.outcome) << run.outcome.failure.message;
  const auto& done = *run.outcome.done;
  EXPECT_THAT(run.events, ElementsAre(R"(text "Hello")", R"(text "!")", R"(text " How can I help")", R"(text "?")"));
  EXPECT_EQ(done.text, "Hello! How can I help?");
  EXPECT_EQ(done.finish, finish_reason::stop);
  EXPECT_EQ(done.raw_finish, "stop");
  EXPECT_EQ(done.usage.input_tokens, 1536);
  EXPECT_EQ(done.usage.cached_input_tokens, 1280);
  EXPECT_EQ(done.usage.output_tokens, 7);
  EXPECT_FALSE(done.reported_cost_usd);
  EXPECT_EQ(done.response_id, "chatcmpl-BeFh3kLq9XzYw2VtUa1sR0pQnMoLk");
  EXPECT_EQ(run.request->header("authorization"), "Bearer sk-test-0123456789");
}

TEST(openai_chat_cassette, tool_call_arguments_split_across_chunks_become_parsed_calls) {
  model_request r;
  r.model = "gpt-4o";
  r.messages.push_back(chat_message{.role = chat_role::system, .text = "You are a coding agent."});
  r.messages.push_back(chat_message{.role = chat_role::user, .text = "Show me src/main.cpp and list src."});
  r.tools.push_back(tool("read", "Read a file", "File to read"));
  r.tools.push_back(tool("list", "List a directory", "Directory to list"));
  const auto run = play("openai_chat_tool_call", wire_api::openai_chat, r);
  TETHER_SKIP_IF_RECORDED(run);
  ASSERT_TRUE(run.outcome) << run.outcome.failure.message;
  const auto& done = *run.outcome.done;
  ASSERT_EQ(done.calls.size(), 2U);
  EXPECT_EQ(done.calls[0].id, "call_DdmO9pD3xa9XTPNJ32zg2hcA");
  EXPECT_EQ(done.calls[0].name, "read");
  EXPECT_EQ(done.calls[0].input, json::parse(R"({"path":"src/main.cpp"})"));
  EXPECT_EQ(done.calls[1].name, "list");
  EXPECT_EQ(done.calls[1].input, json::parse(R"({"path":"src"})"));
  EXPECT_FALSE(done.calls[0].hosted);
  EXPECT_EQ(done.finish, finish_reason::tool_calls);
  EXPECT_EQ(run.events.front(), R"(tool_delta 0 call_DdmO9pD3xa9XTPNJ32zg2hcA read "")");
  EXPECT_EQ(run.events[1], R"(tool_delta 0   "{\"")");
  EXPECT_EQ(run.events[7], R"(tool_delta 1 call_Q8vZl3mXkF2pR7sT1uW4yA6b list "")");
  EXPECT_EQ(run.events[run.events.size() - 2], R"(call call_DdmO9pD3xa9XTPNJ32zg2hcA read {"path":"src/main.cpp"})");
  EXPECT_EQ(run.events.back(), R"(call call_Q8vZl3mXkF2pR7sT1uW4yA6b list {"path":"src"})");
  EXPECT_EQ(done.usage.input_tokens, 212);
}

TEST(openai_chat_cassette, openrouter_reasoning_and_a_reported_cost) {
  model_request r;
  r.model = "deepseek/deepseek-r1";
  r.messages.push_back(chat_message{.role = chat_role::user, .text = "What is 17 * 23?"});
  play_options opts;
  opts.record = testing::recordable::no;
  const auto run = play("openai_chat_reasoning", wire_api::openai_chat, r, opts);
  ASSERT_TRUE(run.outcome) << run.outcome.failure.message;
  const auto& done = *run.outcome.done;
  EXPECT_EQ(done.reasoning, "The user asks for 17 × 23. 17 × 20 = 340, 17 × 3 = 51, so 391.");
  EXPECT_EQ(done.text, "17 × 23 = **391**.");
  EXPECT_EQ(run.events.front(), R"(reasoning "The user asks")");
  ASSERT_TRUE(done.reported_cost_usd);
  EXPECT_DOUBLE_EQ(*done.reported_cost_usd, 0.00026838);
  EXPECT_EQ(done.usage.output_tokens, 96);
  EXPECT_EQ(done.response_id, "gen-1748945702-AbCdEfGhIjKlMnOpQrSt");
}

TEST(openai_chat_cassette, a_stream_cut_before_any_output_is_incomplete_without_output) {
  play_options opts;
  opts.cut_after = 100;  // inside the first (role-only) chunk
  opts.record = testing::recordable::no;
  const auto run = play("openai_chat_text", wire_api::openai_chat, text_request(), opts);
  ASSERT_FALSE(run.outcome);
  EXPECT_EQ(run.outcome.failure.kind, provider_errc::incomplete_stream);
  EXPECT_FALSE(run.outcome.failure.output_seen);
  EXPECT_TRUE(run.outcome.failure.request_sent);
  EXPECT_EQ(run.outcome.failure.http_status, 200);
}

TEST(openai_chat_cassette, a_stream_cut_after_output_is_incomplete_with_output_seen) {
  const auto body = testing::load_cassette("openai_chat_text").body;
  for (auto frame : {testing::framing::chunked, testing::framing::close}) {
    play_options opts;
    opts.frame = frame;
    opts.cut_after = body.find("data: [DONE]") - 10;  // mid usage chunk
    opts.record = testing::recordable::no;
    const auto run = play("openai_chat_text", wire_api::openai_chat, text_request(), opts);
    ASSERT_FALSE(run.outcome);
    EXPECT_EQ(run.outcome.failure.kind, provider_errc::incomplete_stream);
    EXPECT_TRUE(run.outcome.failure.output_seen);
  }
}

TEST(openai_chat_mapping, a_stream_that_ends_cleanly_without_done_is_incomplete) {
  auto body = testing::load_cassette("openai_chat_text").body;
  body = body.substr(0, body.find("data: [DONE]"));
  const auto fed = feed_mapper(wire_api::openai_chat, body);
  EXPECT_FALSE(fed.ended);
  EXPECT_TRUE(fed.output_seen);
}

TEST(openai_chat_mapping, unparsable_tool_arguments_are_a_bad_response) {
  const std::string body =
      R"(data: {"id":"x","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read","arguments":"{\"path\": "}}]},"finish_reason":null}]})"
      "\n\n"
      R"(data: {"id":"x","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]})"
      "\n\ndata: [DONE]\n\n";
  const auto fed = feed_mapper(wire_api::openai_chat, body);
  ASSERT_TRUE(fed.failure);
  EXPECT_EQ(fed.failure->kind, provider_errc::bad_response);
  EXPECT_NE(fed.failure->message.find("read"), std::string::npos);
}

TEST(openai_chat_mapping, reasoning_content_deltas_and_in_stream_errors) {
  const std::string body =
      R"(data: {"id":"x","choices":[{"index":0,"delta":{"reasoning_content":"think"},"finish_reason":null}]})"
      "\n\n"
      R"(data: {"error":{"message":"Provider returned error","code":502,"metadata":{"provider_name":"DeepSeek"}}})"
      "\n\n";
  const auto fed = feed_mapper(wire_api::openai_chat, body);
  EXPECT_EQ(fed.events.front(), R"(reasoning "think")");
  ASSERT_TRUE(fed.failure);
  EXPECT_EQ(fed.failure->kind, provider_errc::server_error);
  EXPECT_EQ(fed.failure->provider_message, "Provider returned error");
}

TEST(openai_chat_mapping, a_conversation_maps_to_chat_messages) {
  model_request r;
  r.model = "gpt-4o";
  r.messages.push_back(chat_message{.role = chat_role::system, .text = "sys"});
  r.messages.push_back(
      chat_message{.role = chat_role::user, .text = "look", .images = {{"image/png", "iVBORw0KGgo="}}});
  chat_message a{.role = chat_role::assistant, .text = "Reading."};
  a.reasoning = "hidden thoughts";
  a.reasoning_meta = reasoning_state{"anthropic", "gpt-4o", json::array{}};
  a.calls.push_back(tool_use{"call_1", "read", json::parse(R"({"path":"a.png"})"), false});
  a.calls.push_back(tool_use{"ws_1", "web_search", json::object{}, true});
  a.hosted_results.push_back(hosted_result{"ws_1", json::parse(R"({"type":"web_search_call","id":"ws_1"})")});
  r.messages.push_back(a);
  r.messages.push_back(chat_message{
      .role = chat_role::tool_result, .text = "an image", .images = {{"image/png", "AAAA"}}, .call_id = "call_1"});
  r.messages.push_back(chat_message{.role = chat_role::user, .text = "thanks"});
  r.tools.push_back(tool("read", "Read a file", "File"));
  r.max_output_tokens = 1000;
  r.reasoning_effort = "low";
  const auto body = build_body(wire_api::openai_chat, r);
  const auto expected = json::parse(R"({
    "model": "gpt-4o",
    "messages": [
      {"role": "system", "content": "sys"},
      {"role": "user", "content": [{"type": "text", "text": "look"},
                                   {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]},
      {"role": "assistant", "content": "Reading.",
       "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"a.png\"}"}}]},
      {"role": "tool", "tool_call_id": "call_1", "content": "an image"},
      {"role": "user", "content": [{"type": "text", "text": "Images returned by the tool calls above:"},
                                   {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]},
      {"role": "user", "content": "thanks"}
    ],
    "tools": [{"type": "function", "function": {"name": "read", "description": "Read a file",
               "parameters": {"type":"object","properties":{"path":{"type":"string","description":"File"}},"required":["path"]}}}],
    "max_completion_tokens": 1000,
    "reasoning_effort": "low",
    "stream": true,
    "stream_options": {"include_usage": true}
  })");
  EXPECT_EQ(json::value(body), expected) << json::serialize(body);
}

TEST(openai_chat_mapping, tools_disabled_sends_no_tools_and_keys_go_in_the_bearer_header) {
  auto r = text_request();
  r.tools.push_back(tool("read", "Read a file", "File"));
  r.tools_enabled = false;
  EXPECT_FALSE(build_body(wire_api::openai_chat, r).contains("tools"));
  r.tools_enabled = true;
  EXPECT_TRUE(build_body(wire_api::openai_chat, r).contains("tools"));
}

}  // namespace
}  // namespace tether::runtime::native
