// OpenAI Responses: request mapping and cassette replays.
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

tool_spec read_tool() {
  return tool_spec{
      "read", "Read a file",
      json::parse(
          R"({"type":"object","properties":{"path":{"type":"string","description":"File to read"}},"required":["path"]})")
          .as_object()};
}

model_request user_says(std::string model, std::string text) {
  model_request r;
  r.model = std::move(model);
  r.messages.push_back(chat_message{.role = chat_role::user, .text = std::move(text)});
  return r;
}

TEST(openai_responses_cassette, a_text_stream_with_cached_usage) {
  auto r = user_says("gpt-4.1", "Say hello.");
  r.messages.insert(r.messages.begin(), chat_message{.role = chat_role::system, .text = "You are a terse assistant."});
  const auto run = play("openai_responses_text", wire_api::openai_responses, r);
  TETHER_SKIP_IF_RECORDED(run);
  ASSERT_TRUE(run.outcome) << run.outcome.failure.message;
  const auto& done = *run.outcome.done;
  EXPECT_THAT(run.events, ElementsAre(R"(text "Hello")", R"(text "!")", R"(text " How can I")", R"(text " help?")"));
  EXPECT_EQ(done.finish, finish_reason::stop);
  EXPECT_EQ(done.raw_finish, "completed");
  EXPECT_EQ(done.usage.input_tokens, 2006);
  EXPECT_EQ(done.usage.cached_input_tokens, 1920);
  EXPECT_EQ(done.usage.output_tokens, 9);
  EXPECT_EQ(done.response_id, "resp_68406b6e2f1c8191a1b3c5d7e9f0a2b40c8e6d4f2a1b3c5d");
  EXPECT_FALSE(run.request->body.find("\"reasoning\"") != std::string::npos);  // gpt-4.1 does not reason
}

TEST(openai_responses_cassette, a_function_call_streams_its_arguments_then_completes) {
  auto r = user_says("gpt-4.1", "Show me src/main.cpp.");
  r.tools.push_back(read_tool());
  const auto run = play("openai_responses_tool_call", wire_api::openai_responses, r);
  TETHER_SKIP_IF_RECORDED(run);
  ASSERT_TRUE(run.outcome) << run.outcome.failure.message;
  const auto& done = *run.outcome.done;
  ASSERT_EQ(done.calls.size(), 1U);
  EXPECT_EQ(done.calls[0].id, "call_x4R8kLmN2pQ6sT0vW3yZ7bC1");
  EXPECT_EQ(done.calls[0].input, json::parse(R"({"path":"src/main.cpp"})"));
  EXPECT_EQ(done.finish, finish_reason::tool_calls);
  EXPECT_EQ(run.events.front(), R"(tool_delta 0 call_x4R8kLmN2pQ6sT0vW3yZ7bC1 read "")");
  EXPECT_EQ(run.events[1], R"(tool_delta 0   "{\"")");
  EXPECT_EQ(run.events.back(), R"(call call_x4R8kLmN2pQ6sT0vW3yZ7bC1 read {"path":"src/main.cpp"})");
}

TEST(openai_responses_cassette, reasoning_summaries_and_encrypted_reasoning_state) {
  const auto run = play("openai_responses_reasoning", wire_api::openai_responses,
                        user_says("o4-mini", "How many r's are in strawberry?"));
  TETHER_SKIP_IF_RECORDED(run);
  ASSERT_TRUE(run.outcome) << run.outcome.failure.message;
  const auto& done = *run.outcome.done;
  EXPECT_EQ(done.reasoning,
            "**Counting letters**\n\nI spell strawberry: s-t-r-a-w-b-e-r-r-y.\n\n**Answer**\n\nThere are three r's.");
  EXPECT_EQ(done.text, "There are 3 r's in \"strawberry\".");
  ASSERT_TRUE(done.reasoning_meta);
  EXPECT_EQ(done.reasoning_meta->provider, "openai-responses");
  EXPECT_EQ(done.reasoning_meta->model, "o4-mini");
  const auto& items = done.reasoning_meta->data.as_array();
  ASSERT_EQ(items.size(), 1U);
  EXPECT_EQ(items[0].at("id"), "rs_68406d3d1e4c81918b0d2f4a6c8e0a2c0f2e4d6c8b0a2f4e");
  EXPECT_TRUE(items[0].at("encrypted_content").as_string().starts_with("gAAAAAB"));
  EXPECT_EQ(done.usage.output_tokens, 214);
}

TEST(openai_responses_cassette, a_hosted_web_search_is_a_hosted_call_with_its_result) {
  play_options opts;
  opts.record = testing::recordable::no;
  const auto run = play("openai_responses_web_search", wire_api::openai_responses,
                        user_says("gpt-4.1", "When was Boost 1.81 released?"), opts);
  ASSERT_TRUE(run.outcome) << run.outcome.failure.message;
  const auto& done = *run.outcome.done;
  ASSERT_EQ(done.calls.size(), 1U);
  EXPECT_TRUE(done.calls[0].hosted);
  EXPECT_EQ(done.calls[0].name, "web_search");
  EXPECT_EQ(done.calls[0].input, json::parse(R"({"type":"search","query":"Boost 1.81 release date"})"));
  ASSERT_EQ(done.hosted_results.size(), 1U);
  EXPECT_EQ(done.hosted_results[0].call_id, "ws_68406e5e7f2c8191a4b6c8d0e2f4a6b80d1f3b5d7f9a1c3e");
  EXPECT_EQ(done.hosted_results[0].content.at("status"), "completed");
  EXPECT_EQ(done.finish, finish_reason::stop);  // hosted calls need nothing from Tether
  EXPECT_TRUE(done.text.starts_with("Boost 1.81 was released on December 14, 2022"));
}

TEST(openai_responses_cassette, a_failed_response_is_classified_like_an_http_error) {
  play_options opts;
  opts.record = testing::recordable::no;
  const auto run = play("openai_responses_failed", wire_api::openai_responses, user_says("gpt-4.1", "hi"), opts);
  ASSERT_FALSE(run.outcome);
  EXPECT_EQ(run.outcome.failure.kind, provider_errc::server_error);
  EXPECT_TRUE(run.outcome.failure.provider_message.starts_with("An error occurred while processing your request."));
  EXPECT_FALSE(run.outcome.failure.output_seen);
}

TEST(openai_responses_mapping, incomplete_responses_end_with_length_and_error_events_fail) {
  const std::string incomplete =
      "event: response.output_text.delta\n"
      R"(data: {"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hal"})"
      "\n\nevent: response.incomplete\n"
      R"(data: {"type":"response.incomplete","response":{"id":"resp_1","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":5,"output_tokens":16}}})"
      "\n\n";
  const auto fed = feed_mapper(wire_api::openai_responses, incomplete);
  EXPECT_TRUE(fed.ended);
  EXPECT_EQ(fed.done.finish, finish_reason::length);
  EXPECT_EQ(fed.done.raw_finish, "max_output_tokens");

  const std::string error =
      "event: error\n"
      R"(data: {"type":"error","sequence_number":3,"code":"rate_limit_exceeded","message":"Rate limit reached","param":null})"
      "\n\n";
  const auto failed = feed_mapper(wire_api::openai_responses, error);
  ASSERT_TRUE(failed.failure);
  EXPECT_EQ(failed.failure->kind, provider_errc::rate_limited);
}

TEST(openai_responses_mapping, a_conversation_maps_to_stateless_input_items) {
  model_request r;
  r.model = "o4-mini";
  r.messages.push_back(chat_message{.role = chat_role::system, .text = "sys"});
  r.messages.push_back(chat_message{.role = chat_role::user, .text = "look", .images = {{"image/png", "QUJD"}}});
  chat_message a{.role = chat_role::assistant, .text = "Reading."};
  a.reasoning_meta =
      reasoning_state{"openai-responses", "o4-mini",
                      json::parse(R"([{"type":"reasoning","id":"rs_1","encrypted_content":"gAAA","summary":[]}])")};
  a.calls.push_back(tool_use{"ws_1", "web_search", json::object{}, true});
  a.hosted_results.push_back(hosted_result{
      "ws_1",
      json::parse(
          R"({"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"q"}})")});
  a.calls.push_back(tool_use{"call_1", "read", json::parse(R"({"path":"a"})"), false});
  r.messages.push_back(a);
  r.messages.push_back(
      chat_message{.role = chat_role::tool_result, .text = "contents", .call_id = "call_1", .is_error = true});
  r.tools.push_back(read_tool());
  r.max_output_tokens = 500;
  const auto body = build_body(wire_api::openai_responses, r);
  const auto expected = json::parse(R"({
    "model": "o4-mini",
    "instructions": "sys",
    "input": [
      {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "look"},
                                                      {"type": "input_image", "image_url": "data:image/png;base64,QUJD"}]},
      {"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAA", "summary": []},
      {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "q"}},
      {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Reading."}]},
      {"type": "function_call", "call_id": "call_1", "name": "read", "arguments": "{\"path\":\"a\"}"},
      {"type": "function_call_output", "call_id": "call_1", "output": "contents"}
    ],
    "tools": [{"type": "function", "name": "read", "description": "Read a file", "strict": false,
               "parameters": {"type":"object","properties":{"path":{"type":"string","description":"File to read"}},"required":["path"]}}],
    "max_output_tokens": 500,
    "reasoning": {"summary": "auto"},
    "include": ["reasoning.encrypted_content"],
    "store": false,
    "stream": true
  })");
  EXPECT_EQ(json::value(body), expected) << json::serialize(body);
}

TEST(openai_responses_mapping, reasoning_of_another_model_or_provider_is_not_sent_back) {
  model_request r;
  r.model = "o3";
  chat_message a{.role = chat_role::assistant, .text = "x"};
  a.reasoning_meta =
      reasoning_state{"openai-responses", "o4-mini", json::parse(R"([{"type":"reasoning","id":"rs_1"}])")};
  a.calls.push_back(tool_use{"srvtoolu_1", "web_search", json::object{}, true});
  a.hosted_results.push_back(hosted_result{"srvtoolu_1", json::parse(R"({"type":"web_search_tool_result"})")});
  r.messages.push_back(a);
  const auto body = build_body(wire_api::openai_responses, r);
  ASSERT_EQ(body.at("input").as_array().size(), 1U);  // only the assistant text
  EXPECT_EQ(body.at("input").as_array()[0].at("role"), "assistant");
}

}  // namespace
}  // namespace tether::runtime::native
