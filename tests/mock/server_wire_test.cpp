// Loopback tests of every directive in each wire format, streaming and not.
#include "mock/server.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "wire_client.h"

namespace tether::mock {
namespace {

namespace json = boost::json;

struct wire_case {
  wire_format format;
  bool stream;
};

void PrintTo(const wire_case& c, std::ostream* os) {
  *os << to_string(c.format) << (c.stream ? " stream" : " json");
}

std::string case_name(const ::testing::TestParamInfo<wire_case>& info) {
  return std::string(to_string(info.param.format)) + (info.param.stream ? "_stream" : "_json");
}

class wire_server : public ::testing::TestWithParam<wire_case> {
 protected:
  void SetUp() override { ASSERT_TRUE(server_.start()); }

  test::scripted_client client(std::vector<test::tool_def> tools = {test::bash_tool()}) {
    test::scripted_client c(server_.port(), GetParam().format, GetParam().stream);
    c.tools = std::move(tools);
    return c;
  }
  test::reply_view once(const std::string& text, std::vector<test::tool_def> tools = {test::bash_tool()}) {
    auto c = client(std::move(tools));
    c.user(text);
    return c.step();
  }
  [[nodiscard]] std::string text_stop() const {
    switch (GetParam().format) {
      case wire_format::chat:
        return "stop";
      case wire_format::responses:
        return "completed";
      case wire_format::anthropic:
        return "end_turn";
    }
    return {};
  }
  [[nodiscard]] std::string call_stop() const {
    switch (GetParam().format) {
      case wire_format::chat:
        return "tool_calls";
      case wire_format::responses:
        return "completed";
      case wire_format::anthropic:
        return "tool_use";
    }
    return {};
  }
  [[nodiscard]] static json::object args(const test::reply_view& v) {
    return json::parse(v.call->arguments).as_object();
  }

  server server_{server_options{}};
};

TEST_P(wire_server, reply_with_exactly_answers_the_text_and_nothing_else) {
  const auto v = once("Please do this.\nReply with exactly: hello, world!");
  ASSERT_EQ(v.status, 200U);
  EXPECT_TRUE(v.complete);
  EXPECT_EQ(v.text, "hello, world!");
  EXPECT_FALSE(v.call);
  EXPECT_EQ(v.stop, text_stop());
  EXPECT_GT(v.usage.input_tokens, 0U);
  EXPECT_EQ(v.usage.output_tokens, 4U);
}

TEST_P(wire_server, without_directives_the_answer_is_done) { EXPECT_EQ(once("just chatting").text, "Done."); }

TEST_P(wire_server, run_calls_the_shell_tool_and_the_result_advances_to_the_reply) {
  auto c = client();
  c.user("Run: echo hi\nReply with exactly: ran it");
  auto v = c.step();
  ASSERT_TRUE(v.call);
  EXPECT_EQ(v.call->name, "bash");
  EXPECT_FALSE(v.call->id.empty());
  EXPECT_EQ(args(v).at("command"), "echo hi");
  EXPECT_EQ(v.stop, call_stop());
  c.tool_result("hi");
  v = c.step();
  EXPECT_FALSE(v.call);
  EXPECT_EQ(v.text, "ran it");
}

TEST_P(wire_server, a_failed_tool_result_is_progress_too) {
  auto c = client();
  c.user("Run: false\nRun: true\nReply with exactly: end");
  c.step();
  c.tool_result("exit status 1", true);
  const auto v = c.step();
  ASSERT_TRUE(v.call);
  EXPECT_EQ(args(v).at("command"), "true");
}

TEST_P(wire_server, write_file_calls_the_write_tool_with_the_schemas_names) {
  auto c = client({test::bash_tool(), test::write_tool()});
  c.user("Write file out/a.txt: one\\ntwo");
  const auto v = c.step();
  ASSERT_TRUE(v.call);
  EXPECT_EQ(v.call->name, "write");
  EXPECT_EQ(args(v).at("path"), "out/a.txt");
  EXPECT_EQ(args(v).at("content"), "one\ntwo");
  c.tool_result("written");
  EXPECT_EQ(c.step().text, "Done.");
}

TEST_P(wire_server, append_line_and_wait_for_file_call_the_shell) {
  auto v = once("Append line hello there to notes.txt");
  ASSERT_TRUE(v.call);
  EXPECT_EQ(args(v).at("command"), "printf '%s\\n' 'hello there' >> 'notes.txt'");
  v = once("Wait for file ready.flag", {test::exec_command_tool()});
  ASSERT_TRUE(v.call);
  EXPECT_EQ(v.call->name, "exec_command");
  EXPECT_NE(args(v).at("cmd").as_string().find("'ready.flag'"), std::string::npos);
}

TEST_P(wire_server, ask_then_reply_with_the_answer_from_the_tool_result) {
  auto c = client({test::bash_tool(), test::ask_user_tool()});
  c.user("Ask: Favourite color? | Red | Blue\nReply with the answer.");
  auto v = c.step();
  ASSERT_TRUE(v.call);
  EXPECT_EQ(v.call->name, "ask_user");
  EXPECT_EQ(args(v).at("question"), "Favourite color?");
  EXPECT_EQ(args(v).at("options").at(1).at("id"), "blue");
  c.tool_result(R"({"answers":[{"question_id":"q1","option_ids":["blue"],"labels":[],"other_text":""}]})");
  EXPECT_EQ(c.step().text, "Blue");
}

TEST_P(wire_server, reply_with_the_answer_waits_until_an_answer_exists) {
  auto c = client({test::ask_user_tool()});
  c.user("Ask: Go? | Yes | No\nReply with the answer.");
  c.step();
  c.tool_result(R"({"status":"pending"})");
  EXPECT_EQ(c.step().text, "WAITING_FOR_ANSWER");
  c.user("answered: Yes");
  EXPECT_EQ(c.step().text, "Yes");
}

TEST_P(wire_server, plan_calls_the_plan_tool_with_the_steps) {
  const auto v = once("Plan: read ; change ; test", {test::update_plan_tool()});
  ASSERT_TRUE(v.call);
  EXPECT_EQ(v.call->name, "update_plan");
  EXPECT_EQ(args(v).at("plan").as_array().size(), 3U);
  EXPECT_EQ(args(v).at("plan").at(2).at("step"), "test");
}

TEST_P(wire_server, tool_calls_any_offered_tool_with_the_given_json) {
  const auto v = once(R"(Tool: bash {"command": "uname -a"})");
  ASSERT_TRUE(v.call);
  EXPECT_EQ(args(v).at("command"), "uname -a");
}

TEST_P(wire_server, a_missing_tool_is_named_in_a_text_answer) {
  const auto v = once("Ask: Why? | Because", {test::bash_tool()});
  EXPECT_FALSE(v.call);
  EXPECT_NE(v.text.find("no question tool"), std::string::npos);
}

TEST_P(wire_server, recall_answers_the_phrase_remembered_in_an_earlier_turn) {
  auto c = client();
  c.user("Remember the phrase: purple otter");
  EXPECT_EQ(c.step().text, "Noted.");
  c.user("Recall the phrase.");
  EXPECT_EQ(c.step().text, "purple otter");
}

TEST_P(wire_server, stream_slowly_delivers_many_small_deltas) {
  const auto v = once("Stream slowly: 1\nReply with exactly: abcdefghijklmnopqrstuvwxyz");
  EXPECT_EQ(v.text, "abcdefghijklmnopqrstuvwxyz");
  if (GetParam().stream) {
    EXPECT_GE(v.deltas, 6U);
  }
}

TEST_P(wire_server, failures_answer_with_each_kinds_status) {
  const bool anthropic = GetParam().format == wire_format::anthropic;
  auto v = once("Fail with: rate_limit");
  EXPECT_EQ(v.status, 429U);
  EXPECT_EQ(v.headers["retry-after"], "0");
  EXPECT_EQ(once("Fail with: server_error").status, 500U);
  EXPECT_EQ(once("Fail with: overloaded").status, anthropic ? 529U : 503U);
  v = once("Fail with: auth");
  EXPECT_EQ(v.status, 401U);
  if (anthropic) {
    EXPECT_EQ(v.json.at("error").at("type"), "authentication_error");
  } else {
    EXPECT_EQ(v.json.at("error").at("code"), "invalid_api_key");
  }
  v = once("Fail with: overflow");
  EXPECT_EQ(v.status, 400U);
  if (anthropic) {
    EXPECT_NE(v.json.at("error").at("message").as_string().find("prompt is too long"), std::string::npos);
  } else {
    EXPECT_EQ(v.json.at("error").at("code"), "context_length_exceeded");
  }
}

TEST_P(wire_server, fail_once_fails_only_the_first_request_with_that_message) {
  EXPECT_EQ(once("Fail with: server_error once\nReply with exactly: recovered").status, 500U);
  const auto v = once("Fail with: server_error once\nReply with exactly: recovered");
  EXPECT_EQ(v.status, 200U);
  EXPECT_EQ(v.text, "recovered");
  EXPECT_EQ(once("Fail with: server_error once\nReply with exactly: other").status, 500U);
  EXPECT_EQ(once("Fail with: server_error\nReply with exactly: always").status, 500U);
  EXPECT_EQ(once("Fail with: server_error\nReply with exactly: always").status, 500U);
}

TEST_P(wire_server, disconnect_cuts_the_response_and_the_server_serves_the_next) {
  const auto v = once("Fail with: disconnect once\nReply with exactly: whole answer");
  EXPECT_FALSE(v.complete);
  if (GetParam().stream) {
    EXPECT_EQ(v.status, 200U);
    EXPECT_EQ(v.deltas, 1U);
    EXPECT_FALSE(v.text.empty());
  } else {
    EXPECT_EQ(v.status, 0U);  // no answer at all
  }
  const auto again = once("Fail with: disconnect once\nReply with exactly: whole answer");
  EXPECT_TRUE(again.complete);
  EXPECT_EQ(again.text, "whole answer");
}

TEST_P(wire_server, a_repeated_prefix_is_reported_as_cached_input) {
  auto c = client();
  c.system = std::string(2000, 's');
  c.user("Run: ls\nReply with exactly: ok");
  const auto first = c.step();
  EXPECT_EQ(first.usage.cached_tokens, 0U);
  c.tool_result("a.txt");
  const auto second = c.step();
  EXPECT_EQ(second.text, "ok");
  EXPECT_GE(second.usage.cached_tokens, 500U);
  EXPECT_LT(second.usage.cached_tokens, second.usage.input_tokens);
}

INSTANTIATE_TEST_SUITE_P(formats, wire_server,
                         ::testing::Values(wire_case{wire_format::chat, true}, wire_case{wire_format::chat, false},
                                           wire_case{wire_format::responses, true},
                                           wire_case{wire_format::responses, false},
                                           wire_case{wire_format::anthropic, true},
                                           wire_case{wire_format::anthropic, false}),
                         case_name);

}  // namespace
}  // namespace tether::mock
