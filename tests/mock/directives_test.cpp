#include "mock/directives.h"

#include <gtest/gtest.h>

namespace tether::mock {
namespace {

directive only(std::string_view text) {
  auto d = parse_directives(text);
  EXPECT_EQ(d.size(), 1U) << text;
  return d.empty() ? directive{} : d.front();
}

TEST(directives, lines_without_a_pattern_are_ignored) {
  EXPECT_TRUE(parse_directives("Please help me.\nThanks!").empty());
  EXPECT_TRUE(parse_directives("").empty());
  EXPECT_TRUE(parse_directives("Running: tests").empty());
}

TEST(directives, patterns_are_case_insensitive_and_arguments_keep_their_case) {
  const auto d = only("REPLY WITH EXACTLY: Hello World");
  EXPECT_EQ(d.kind, directive_kind::reply_exactly);
  EXPECT_EQ(d.text, "Hello World");
}

TEST(directives, leading_spaces_and_list_markers_are_ignored) {
  const auto d = parse_directives(
      "  - Run: echo a\n* Run: echo b\n1. Run: echo c\n2) Run: echo d\n> Run: echo e\n\xE2\x80\xA2 Run: echo f");
  ASSERT_EQ(d.size(), 6U);
  EXPECT_EQ(d[0].text, "echo a");
  EXPECT_EQ(d[2].text, "echo c");
  EXPECT_EQ(d[5].text, "echo f");
}

TEST(directives, directives_keep_their_order_among_other_text) {
  const auto d = parse_directives("Context from the client.\r\nRun: ls\r\nsome words\r\nReply with exactly: ok\r\n");
  ASSERT_EQ(d.size(), 2U);
  EXPECT_EQ(d[0].kind, directive_kind::run);
  EXPECT_EQ(d[0].text, "ls");
  EXPECT_EQ(d[1].kind, directive_kind::reply_exactly);
  EXPECT_EQ(d[1].text, "ok");
}

TEST(directives, write_file_splits_path_and_content_and_unescapes_newlines) {
  const auto d = only("Write file notes/a.txt: line one\\nline two");
  EXPECT_EQ(d.kind, directive_kind::write_file);
  EXPECT_EQ(d.path, "notes/a.txt");
  EXPECT_EQ(d.text, "line one\nline two");
  EXPECT_EQ(only("Write file empty.txt:").text, "");
}

TEST(directives, append_line_splits_at_the_last_to) {
  const auto d = only("Append line go to the store to list.txt");
  EXPECT_EQ(d.kind, directive_kind::append_line);
  EXPECT_EQ(d.text, "go to the store");
  EXPECT_EQ(d.path, "list.txt");
}

TEST(directives, ask_reads_question_and_options) {
  const auto d = only("Ask: Which color? | Red | Light Blue ");
  EXPECT_EQ(d.kind, directive_kind::ask);
  EXPECT_EQ(d.text, "Which color?");
  EXPECT_EQ(d.items, (std::vector<std::string>{"Red", "Light Blue"}));
}

TEST(directives, plan_splits_steps_at_semicolons) {
  const auto d = only("Plan: read the code ; write tests;ship");
  EXPECT_EQ(d.items, (std::vector<std::string>{"read the code", "write tests", "ship"}));
}

TEST(directives, tool_reads_name_and_json_input) {
  const auto d = only(R"(Tool: my_tool {"a": [1, 2]})");
  EXPECT_EQ(d.kind, directive_kind::tool);
  EXPECT_EQ(d.name, "my_tool");
  EXPECT_EQ(d.input.as_object().at("a").as_array().size(), 2U);
  EXPECT_TRUE(only("Tool: bare").input.as_object().empty());
}

TEST(directives, unreadable_lines_become_invalid_with_a_reason) {
  EXPECT_EQ(only("Tool: x {not json").kind, directive_kind::invalid);
  EXPECT_EQ(only("Fail with: nonsense").kind, directive_kind::invalid);
  EXPECT_EQ(only("Fail with: auth twice").kind, directive_kind::invalid);
  EXPECT_EQ(only("Stream slowly: soon").kind, directive_kind::invalid);
  EXPECT_NE(only("Fail with: nonsense").text.find("rate_limit"), std::string::npos);
}

TEST(directives, fail_reads_kind_and_once) {
  auto d = only("Fail with: rate_limit");
  EXPECT_EQ(d.kind, directive_kind::fail);
  EXPECT_EQ(d.fail, fail_kind::rate_limit);
  EXPECT_FALSE(d.once);
  d = only("fail with: Overloaded once");
  EXPECT_EQ(d.fail, fail_kind::overloaded);
  EXPECT_TRUE(d.once);
}

TEST(directives, stream_slowly_reads_milliseconds) {
  EXPECT_EQ(only("Stream slowly: 40").interval, std::chrono::milliseconds(40));
  EXPECT_EQ(only("Stream slowly: 15ms").interval, std::chrono::milliseconds(15));
}

TEST(directives, bare_directives_accept_a_final_period_only) {
  EXPECT_EQ(only("Recall the phrase.").kind, directive_kind::recall);
  EXPECT_EQ(only("recall the phrase").kind, directive_kind::recall);
  EXPECT_EQ(only("Reply with the answer.").kind, directive_kind::reply_answer);
  EXPECT_TRUE(parse_directives("Recall the phrase you like").empty());
}

TEST(directives, actions_are_the_tool_calling_directives) {
  EXPECT_TRUE(is_action(directive_kind::run));
  EXPECT_TRUE(is_action(directive_kind::ask));
  EXPECT_TRUE(is_action(directive_kind::wait_for_file));
  EXPECT_FALSE(is_action(directive_kind::reply_exactly));
  EXPECT_FALSE(is_action(directive_kind::fail));
  EXPECT_FALSE(is_action(directive_kind::remember));
}

}  // namespace
}  // namespace tether::mock
