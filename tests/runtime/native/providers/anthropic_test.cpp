// Anthropic Messages: request mapping and cassette replays.
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

constexpr const char* sonnet = "claude-sonnet-4-20250514";

tool_spec read_tool() {
  return tool_spec{
      "read", "Read a file",
      json::parse(
          R"({"type":"object","properties":{"path":{"type":"string","description":"File to read"}},"required":["path"]})")
          .as_object()};
}

model_request user_says(std::string text) {
  model_request r;
  r.model = sonnet;
  r.messages.push_back(chat_message{.role = chat_role::user, .text = std::move(text)});
  return r;
}

TEST(anthropic_cassette, a_text_stream_with_pings_and_cache_read_usage) {
  auto r = user_says("Say hello.");
  r.messages.insert(r.messages.begin(), chat_message{.role = chat_role::system, .text = "You are a terse assistant."});
  const auto run = play("anthropic_text", wire_api::anthropic, r);
  TETHER_SKIP_IF_RECORDED(run);
  ASSERT_TRUE(run.outcome) << run.outcome.failure.message;
  const auto& done = *run.outcome.done;
  EXPECT_THAT(run.events, ElementsAre(R"(text "Hello")", R"(text "! How can I")", R"(text " help?")"));
  EXPECT_EQ(done.finish, finish_reason::stop);
  EXPECT_EQ(done.raw_finish, "end_turn");
  EXPECT_EQ(done.usage.input_tokens, 12 + 2048);  // uncached + cache reads
  EXPECT_EQ(done.usage.cached_input_tokens, 2048);
  EXPECT_EQ(done.usage.output_tokens, 9);
  EXPECT_EQ(done.response_id, "msg_01XFDUDYJgAACzvnptvVoYEL");
  EXPECT_EQ(run.request->header("x-api-key"), "sk-test-0123456789");
  EXPECT_FALSE(run.request->has_header("authorization"));
}

TEST(anthropic_cassette, tool_use_input_streams_as_json_deltas) {
  auto r = user_says("Show me src/main.cpp.");
  r.tools.push_back(read_tool());
  const auto run = play("anthropic_tool_call", wire_api::anthropic, r);
  TETHER_SKIP_IF_RECORDED(run);
  ASSERT_TRUE(run.outcome) << run.outcome.failure.message;
  const auto& done = *run.outcome.done;
  EXPECT_EQ(done.text, "I'll read the file.");
  ASSERT_EQ(done.calls.size(), 1U);
  EXPECT_EQ(done.calls[0].id, "toolu_01T1x1fJ34qAmk2tNTrN7Up6");
  EXPECT_EQ(done.calls[0].input, json::parse(R"({"path":"src/main.cpp"})"));
  EXPECT_EQ(done.finish, finish_reason::tool_calls);
  EXPECT_THAT(run.events, ElementsAre(R"(text "I'll read")", R"(text " the file.")",
                                      R"(tool_delta 0 toolu_01T1x1fJ34qAmk2tNTrN7Up6 read "")",
                                      R"(tool_delta 0   "{\"path\": \"sr")", R"(tool_delta 0   "c/main")",
                                      R"(tool_delta 0   ".cpp\"}")",
                                      R"(call toolu_01T1x1fJ34qAmk2tNTrN7Up6 read {"path":"src/main.cpp"})"));
  EXPECT_EQ(done.usage.output_tokens, 67);
}

TEST(anthropic_cassette, thinking_streams_as_reasoning_and_keeps_its_signature) {
  auto r = user_says("How many r's are in strawberry?");
  r.reasoning_effort = "low";
  const auto run = play("anthropic_thinking", wire_api::anthropic, r);
  TETHER_SKIP_IF_RECORDED(run);
  ASSERT_TRUE(run.outcome) << run.outcome.failure.message;
  const auto& done = *run.outcome.done;
  EXPECT_EQ(done.reasoning, "Let me count the r's in strawberry: s-t-r-a-w-b-e-r-r-y. Positions 3, 8 and 9: three.");
  EXPECT_EQ(done.text, "There are three r's in \"strawberry\".");
  ASSERT_TRUE(done.reasoning_meta);
  EXPECT_EQ(done.reasoning_meta->provider, "anthropic");
  EXPECT_EQ(done.reasoning_meta->model, sonnet);
  const auto& blocks = done.reasoning_meta->data.as_array();
  ASSERT_EQ(blocks.size(), 1U);
  EXPECT_EQ(blocks[0].at("type"), "thinking");
  EXPECT_EQ(std::string(blocks[0].at("thinking").as_string()), done.reasoning);
  EXPECT_TRUE(blocks[0].at("signature").as_string().starts_with("EqQBCgIYAhIM"));
}

TEST(anthropic_cassette, server_tool_use_and_its_result_are_hosted) {
  play_options opts;
  opts.record = testing::recordable::no;
  const auto run = play("anthropic_web_search", wire_api::anthropic, user_says("When was Boost 1.81 released?"), opts);
  ASSERT_TRUE(run.outcome) << run.outcome.failure.message;
  const auto& done = *run.outcome.done;
  ASSERT_EQ(done.calls.size(), 1U);
  EXPECT_TRUE(done.calls[0].hosted);
  EXPECT_EQ(done.calls[0].id, "srvtoolu_014hJH82Qum7Td6UV8gDXThB");
  EXPECT_EQ(done.calls[0].input, json::parse(R"({"query":"Boost 1.81 release date"})"));
  ASSERT_EQ(done.hosted_results.size(), 1U);
  EXPECT_EQ(done.hosted_results[0].call_id, "srvtoolu_014hJH82Qum7Td6UV8gDXThB");
  EXPECT_EQ(done.hosted_results[0].content.at("type"), "web_search_tool_result");
  EXPECT_EQ(done.text, "I'll search for that.Boost 1.81 was released on December 14, 2022.");
  EXPECT_EQ(done.usage.input_tokens, 2679);  // message_delta's final input count wins
  EXPECT_EQ(done.usage.output_tokens, 132);
}

TEST(anthropic_cassette, an_error_event_after_text_is_overloaded_with_output_seen) {
  play_options opts;
  opts.record = testing::recordable::no;
  const auto run = play("anthropic_stream_overloaded", wire_api::anthropic, user_says("hi"), opts);
  ASSERT_FALSE(run.outcome);
  EXPECT_EQ(run.outcome.failure.kind, provider_errc::overloaded);
  EXPECT_TRUE(run.outcome.failure.output_seen);
  EXPECT_EQ(run.outcome.failure.provider_message, "Overloaded");
  EXPECT_EQ(run.outcome.failure.http_status, 200);
}

TEST(anthropic_mapping, a_stream_without_message_stop_is_incomplete) {
  auto body = testing::load_cassette("anthropic_text").body;
  body = body.substr(0, body.find("event: message_stop"));
  const auto fed = feed_mapper(wire_api::anthropic, body);
  EXPECT_FALSE(fed.ended);
  EXPECT_TRUE(fed.output_seen);
  EXPECT_FALSE(fed.failure);
}

TEST(anthropic_mapping, unparsable_tool_input_is_a_bad_response) {
  const std::string body =
      "event: content_block_start\n"
      R"(data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"read","input":{}}})"
      "\n\nevent: content_block_delta\n"
      R"(data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"path\": tru"}})"
      "\n\nevent: content_block_stop\n"
      R"(data: {"type":"content_block_stop","index":0})"
      "\n\n";
  const auto fed = feed_mapper(wire_api::anthropic, body);
  ASSERT_TRUE(fed.failure);
  EXPECT_EQ(fed.failure->kind, provider_errc::bad_response);
}

TEST(anthropic_mapping, a_conversation_maps_to_alternating_messages_with_tool_result_blocks) {
  model_request r;
  r.model = sonnet;
  r.messages.push_back(chat_message{.role = chat_role::system, .text = "sys"});
  r.messages.push_back(chat_message{.role = chat_role::user, .text = "look", .images = {{"image/jpeg", "QUJD"}}});
  chat_message a{.role = chat_role::assistant, .text = "Reading both."};
  a.reasoning_meta =
      reasoning_state{"anthropic", sonnet, json::parse(R"([{"type":"thinking","thinking":"hmm","signature":"sig"}])")};
  a.calls.push_back(tool_use{"srvtoolu_1", "web_search", json::parse(R"({"query":"q"})"), true});
  a.hosted_results.push_back(hosted_result{
      "srvtoolu_1", json::parse(R"({"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]})")});
  a.calls.push_back(tool_use{"toolu_1", "read", json::parse(R"({"path":"a"})"), false});
  a.calls.push_back(tool_use{"toolu_2", "read", json::parse(R"({"path":"b.png"})"), false});
  r.messages.push_back(a);
  r.messages.push_back(
      chat_message{.role = chat_role::tool_result, .text = "no such file", .call_id = "toolu_1", .is_error = true});
  r.messages.push_back(chat_message{
      .role = chat_role::tool_result, .text = "", .images = {{"image/png", "UE5H"}}, .call_id = "toolu_2"});
  r.messages.push_back(chat_message{.role = chat_role::user, .text = "and now?"});
  r.tools.push_back(read_tool());
  r.max_output_tokens = 1024;
  const auto body = build_body(wire_api::anthropic, r, provider_options{.model = sonnet});
  const auto expected = json::parse(R"({
    "model": "claude-sonnet-4-20250514",
    "max_tokens": 1024,
    "system": [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}],
    "messages": [
      {"role": "user", "content": [{"type": "text", "text": "look"},
                                   {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "QUJD"}}]},
      {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "hmm", "signature": "sig"},
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "q"}},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
        {"type": "text", "text": "Reading both."},
        {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a"}},
        {"type": "tool_use", "id": "toolu_2", "name": "read", "input": {"path": "b.png"}}]},
      {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "no such file", "is_error": true},
        {"type": "tool_result", "tool_use_id": "toolu_2",
         "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "UE5H"}}]},
        {"type": "text", "text": "and now?", "cache_control": {"type": "ephemeral"}}]}
    ],
    "tools": [{"name": "read", "description": "Read a file",
               "input_schema": {"type":"object","properties":{"path":{"type":"string","description":"File to read"}},"required":["path"]}}],
    "stream": true
  })");
  EXPECT_EQ(json::value(body), expected) << json::serialize(body);
}

TEST(anthropic_mapping, thinking_of_another_model_is_dropped) {
  model_request r;
  r.model = "claude-opus-4-1-20250805";
  chat_message a{.role = chat_role::assistant, .text = "x"};
  a.reasoning_meta =
      reasoning_state{"anthropic", sonnet, json::parse(R"([{"type":"thinking","thinking":"t","signature":"s"}])")};
  r.messages.push_back(user_says("q").messages[0]);
  r.messages.push_back(a);
  const auto body = build_body(wire_api::anthropic, r);
  const auto& content = body.at("messages").as_array()[1].at("content").as_array();
  ASSERT_EQ(content.size(), 1U);
  EXPECT_EQ(content[0].at("type"), "text");
}

TEST(anthropic_mapping, tools_disabled_sends_none_unless_the_history_needs_them) {
  auto r = user_says("q");
  r.tools.push_back(read_tool());
  r.tools_enabled = false;
  EXPECT_FALSE(build_body(wire_api::anthropic, r).contains("tools"));
  chat_message a{.role = chat_role::assistant};
  a.calls.push_back(tool_use{"toolu_1", "read", json::parse(R"({"path":"a"})"), false});
  r.messages.push_back(a);
  r.messages.push_back(chat_message{.role = chat_role::tool_result, .text = "ok", .call_id = "toolu_1"});
  const auto body = build_body(wire_api::anthropic, r);
  EXPECT_TRUE(body.contains("tools"));
  EXPECT_EQ(body.at("tool_choice"), json::parse(R"({"type":"none"})"));
}

}  // namespace
}  // namespace tether::runtime::native
