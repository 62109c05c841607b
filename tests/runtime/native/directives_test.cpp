// Every directive of the scripted model (docs/mock-model.md), through each
// of the three wire formats, driven by Tether's own provider clients over
// loopback HTTP: the model server and the clients prove each other.
#include "runtime/native/providers/provider.h"

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json.hpp>

#include "mock/server.h"
#include "runtime/native/tools/tool.h"

namespace tether::runtime::native {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;

struct streamed {
  stream_outcome outcome;
  std::size_t text_deltas = 0;
};

class directives : public ::testing::TestWithParam<wire_api> {
 protected:
  directives() {
    auto r = mock_.start();
    EXPECT_TRUE(r) << r.error().describe();
    provider_options o;
    o.api = GetParam();
    o.base_url = mock_.base_url() + "/v1";
    o.model = "scripted";
    o.api_key = "k";
    provider_ = make_provider(o);
    tools_ = make_local_tools().specs();
  }

  static chat_message user(std::string text) {
    chat_message m;
    m.role = chat_role::user;
    m.text = std::move(text);
    return m;
  }
  static chat_message assistant_call(const tool_use& call) {
    chat_message m;
    m.role = chat_role::assistant;
    m.calls.push_back(call);
    return m;
  }
  static chat_message result(const tool_use& call, std::string text) {
    chat_message m;
    m.role = chat_role::tool_result;
    m.call_id = call.id;
    m.text = std::move(text);
    return m;
  }

  streamed send(std::vector<chat_message> messages) {
    model_request req;
    req.model = "scripted";
    chat_message system;
    system.role = chat_role::system;
    system.text = "You are a test agent.";
    req.messages.push_back(std::move(system));
    for (auto& m : messages) req.messages.push_back(std::move(m));
    req.tools = tools_;
    auto out = std::make_shared<streamed>();
    stream_sink sink = [out](const stream_event& e) {
      if (std::holds_alternative<text_delta_event>(e)) ++out->text_deltas;
    };
    auto fut =
        asio::co_spawn(io_, provider_->stream(std::move(req), std::move(sink), std::stop_token()), asio::use_future);
    io_.restart();
    io_.run();
    out->outcome = fut.get();
    return *out;
  }
  // The text of a successful answer ("" and a test failure otherwise).
  std::string text_of(std::vector<chat_message> messages) {
    auto s = send(std::move(messages));
    EXPECT_TRUE(s.outcome) << s.outcome.failure.message;
    return s.outcome ? s.outcome.done->text : std::string();
  }
  tool_use call_of(std::vector<chat_message> messages) {
    auto s = send(std::move(messages));
    EXPECT_TRUE(s.outcome) << s.outcome.failure.message;
    if (!s.outcome || s.outcome.done->calls.size() != 1) {
      ADD_FAILURE() << "expected one call";
      return {};
    }
    return s.outcome.done->calls[0];
  }

  mock::server mock_{mock::server_options{}};
  asio::io_context io_;
  std::unique_ptr<provider> provider_;
  std::vector<tool_spec> tools_;
};

TEST_P(directives, reply_with_exactly_is_the_whole_answer) {
  EXPECT_EQ(text_of({user("Please help.\nReply with exactly: forty two")}), "forty two");
}

TEST_P(directives, no_directive_answers_done) { EXPECT_EQ(text_of({user("hello there")}), "Done."); }

TEST_P(directives, remember_then_recall_the_phrase_from_an_earlier_message) {
  EXPECT_EQ(text_of({user("Remember the phrase: blue heron")}), "Noted.");
  chat_message noted;
  noted.role = chat_role::assistant;
  noted.text = "Noted.";
  EXPECT_EQ(text_of({user("Remember the phrase: blue heron"), noted, user("Recall the phrase.")}), "blue heron");
  EXPECT_EQ(text_of({user("Recall the phrase.")}), "NO_PHRASE");
}

TEST_P(directives, run_calls_the_shell_tool_with_the_command) {
  const auto c = call_of({user("Run: echo hi")});
  EXPECT_EQ(c.name, "bash");
  EXPECT_EQ(c.input.at("command"), "echo hi");
}

TEST_P(directives, write_file_calls_the_write_tool_with_newlines) {
  const auto c = call_of({user("Write file a/b.txt: one\\ntwo")});
  EXPECT_EQ(c.name, "write");
  EXPECT_EQ(c.input.at("path"), "a/b.txt");
  EXPECT_EQ(c.input.at("content"), "one\ntwo");
}

TEST_P(directives, append_line_and_wait_for_file_call_the_shell) {
  auto c = call_of({user("Append line hello to log.txt")});
  EXPECT_EQ(c.name, "bash");
  const std::string cmd(c.input.at("command").as_string());
  EXPECT_NE(cmd.find("hello"), std::string::npos);
  EXPECT_NE(cmd.find("log.txt"), std::string::npos);
  c = call_of({user("Wait for file ready.flag")});
  EXPECT_EQ(c.name, "bash");
  EXPECT_NE(std::string(c.input.at("command").as_string()).find("ready.flag"), std::string::npos);
}

TEST_P(directives, tool_calls_any_tool_with_the_given_json) {
  const auto c = call_of({user(R"(Tool: list {"path": "src"})")});
  EXPECT_EQ(c.name, "list");
  EXPECT_EQ(c.input.at("path"), "src");
}

TEST_P(directives, ask_then_reply_with_the_answer_uses_the_chosen_label) {
  const auto ask = call_of({user("Ask: Which color? | Red | Blue\nReply with the answer.")});
  EXPECT_EQ(ask.name, "ask_user");
  EXPECT_EQ(ask.input.at("question"), "Which color?");
  ASSERT_EQ(ask.input.at("options").as_array().size(), 2U);
  EXPECT_EQ(ask.input.at("options").at(1).at("id"), "blue");
  const std::string answer = R"({"answers":[{"question_id":"q1","option_ids":["blue"],"labels":["Blue"]}]})";
  EXPECT_EQ(text_of({user("Ask: Which color? | Red | Blue\nReply with the answer."), assistant_call(ask),
                     result(ask, answer)}),
            "Blue");
}

TEST_P(directives, plan_without_a_plan_tool_says_which_tool_is_missing) {
  const auto text = text_of({user("Plan: read ; write")});
  EXPECT_NE(text.find("plan"), std::string::npos) << text;
}

TEST_P(directives, tool_results_move_the_model_to_the_next_directive) {
  const std::string prompt = "Run: echo 1\nRun: echo 2\nReply with exactly: both";
  const auto first = call_of({user(prompt)});
  EXPECT_EQ(first.input.at("command"), "echo 1");
  const auto second = call_of({user(prompt), assistant_call(first), result(first, "1")});
  EXPECT_EQ(second.input.at("command"), "echo 2");
  EXPECT_EQ(
      text_of({user(prompt), assistant_call(first), result(first, "1"), assistant_call(second), result(second, "2")}),
      "both");
}

TEST_P(directives, stream_slowly_sends_many_small_deltas) {
  auto s = send({user("Stream slowly: 1\nReply with exactly: a somewhat longer answer")});
  ASSERT_TRUE(s.outcome);
  EXPECT_EQ(s.outcome.done->text, "a somewhat longer answer");
  EXPECT_GT(s.text_deltas, 3U);
}

TEST_P(directives, usage_counts_tokens_and_a_repeated_prefix_is_cached) {
  auto a = send({user("Reply with exactly: cache me")});
  ASSERT_TRUE(a.outcome);
  EXPECT_GT(a.outcome.done->usage.input_tokens, 0);
  EXPECT_GT(a.outcome.done->usage.output_tokens, 0);
  auto b = send({user("Reply with exactly: cache me")});
  ASSERT_TRUE(b.outcome);
  EXPECT_GT(b.outcome.done->usage.cached_input_tokens, 0);
}

TEST_P(directives, each_failure_kind_is_classified_as_the_retry_policy_expects) {
  struct expect {
    std::string kind;
    provider_errc code;
  };
  for (const auto& e :
       {expect{"rate_limit", provider_errc::rate_limited}, expect{"server_error", provider_errc::server_error},
        expect{"overloaded", provider_errc::overloaded}, expect{"auth", provider_errc::auth},
        expect{"overflow", provider_errc::context_overflow}, expect{"disconnect", provider_errc::incomplete_stream}}) {
    SCOPED_TRACE(e.kind);
    auto s = send({user("Fail with: " + e.kind + "\nReply with exactly: x")});
    ASSERT_FALSE(s.outcome);
    EXPECT_EQ(s.outcome.failure.kind, e.code);
    if (e.kind == "rate_limit") {
      ASSERT_TRUE(s.outcome.failure.retry_after.has_value());
      EXPECT_EQ(s.outcome.failure.retry_after->count(), 0);
    }
    if (e.kind == "disconnect") {
      EXPECT_TRUE(s.outcome.failure.output_seen);
    }
  }
}

TEST_P(directives, fail_once_fails_only_the_first_request) {
  const std::string prompt = "Fail with: server_error once\nReply with exactly: second time";
  EXPECT_FALSE(send({user(prompt)}).outcome);
  EXPECT_EQ(text_of({user(prompt)}), "second time");
}

INSTANTIATE_TEST_SUITE_P(wire, directives,
                         ::testing::Values(wire_api::openai_chat, wire_api::openai_responses, wire_api::anthropic),
                         [](const auto& info) {
                           std::string n(to_string(info.param));
                           for (auto& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

}  // namespace
}  // namespace tether::runtime::native
