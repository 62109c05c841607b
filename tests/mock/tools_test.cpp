#include "mock/tools.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include "wire_client.h"

namespace tether::mock {
namespace {

namespace json = boost::json;

conversation offering(std::vector<test::tool_def> defs) {
  conversation c;
  for (auto& d : defs) {
    tool_offer t;
    t.name = d.name;
    t.schema = d.schema;
    c.tools.push_back(std::move(t));
  }
  return c;
}

json::object args_of(const action_outcome& o) {
  const auto* call = std::get_if<tool_call>(&o);
  EXPECT_NE(call, nullptr) << (call == nullptr ? std::get<std::string>(o) : "");
  return call == nullptr ? json::object() : json::parse(call->arguments).as_object();
}

std::string name_of(const action_outcome& o) {
  const auto* call = std::get_if<tool_call>(&o);
  return call == nullptr ? std::string() : call->name;
}

TEST(tool_discovery, names_are_tried_in_the_documented_order) {
  auto c = offering({test::exec_command_tool(), test::bash_tool()});
  EXPECT_EQ(find_tool(c.tools, tool_role::shell)->name, "bash");
  c = offering({test::claude_write_tool(), test::write_tool()});
  EXPECT_EQ(find_tool(c.tools, tool_role::write)->name, "write");
}

TEST(tool_discovery, mcp_prefixed_and_differently_cased_names_are_found) {
  conversation c;
  for (const auto* n : {"mcp__tether__ask_user", "tether_write_plan", "TodoWrite", "mcp__other__question"}) {
    tool_offer t;
    t.name = n;
    c.tools.push_back(t);
  }
  EXPECT_EQ(find_tool(c.tools, tool_role::question)->name, "mcp__tether__ask_user");
  EXPECT_EQ(find_tool(c.tools, tool_role::plan)->name, "tether_write_plan");
  c.tools.erase(c.tools.begin() + 1);
  EXPECT_EQ(find_tool(c.tools, tool_role::plan)->name, "TodoWrite");
  EXPECT_TRUE(is_question_tool("mcp__tether__tether_ask_user"));
  EXPECT_TRUE(is_question_tool("AskUserQuestion"));
  EXPECT_FALSE(is_question_tool("bash"));
}

TEST(tool_discovery, a_single_word_name_does_not_match_a_longer_word) {
  conversation c;
  tool_offer t;
  t.name = "todo_write";
  c.tools.push_back(t);
  EXPECT_EQ(find_tool(c.tools, tool_role::write), nullptr);
}

TEST(shell_arguments, command_or_cmd_is_chosen_from_the_schema) {
  EXPECT_EQ(args_of(shell_call(offering({test::bash_tool()}), "ls")).at("command"), "ls");
  const auto codex = args_of(shell_call(offering({test::exec_command_tool()}), "ls"));
  EXPECT_EQ(codex.at("cmd"), "ls");
  EXPECT_FALSE(codex.contains("command"));
}

TEST(shell_arguments, an_array_command_runs_through_bash_lc) {
  const auto a = args_of(shell_call(offering({test::array_shell_tool()}), "echo hi"));
  EXPECT_EQ(a.at("command"), (json::array{"bash", "-lc", "echo hi"}));
}

TEST(shell_arguments, required_properties_are_filled_so_strict_clients_accept_the_call) {
  const auto a = args_of(shell_call(offering({test::opencode_bash_tool()}), "ls"));
  EXPECT_EQ(a.at("command"), "ls");
  ASSERT_TRUE(a.contains("description"));
  EXPECT_TRUE(a.at("description").is_string());
  EXPECT_FALSE(a.contains("timeout"));
}

TEST(shell_arguments, a_wait_asks_for_a_long_timeout_where_the_schema_has_one) {
  shell_hints h;
  h.long_wait = true;
  EXPECT_EQ(args_of(shell_call(offering({test::opencode_bash_tool()}), "x", h)).at("timeout"), 130000);
  EXPECT_EQ(args_of(shell_call(offering({test::exec_command_tool()}), "x", h)).at("yield_time_ms"), 130000);
  EXPECT_EQ(args_of(shell_call(offering({test::array_shell_tool()}), "x", h)).at("timeout_ms"), 130000);
}

TEST(shell_arguments, the_responses_local_shell_gets_an_exec_command_array) {
  conversation c;
  tool_offer t;
  t.name = "local_shell";
  t.kind = tool_kind::local_shell;
  c.tools.push_back(t);
  const auto o = shell_call(c, "ls");
  EXPECT_EQ(std::get<tool_call>(o).kind, tool_kind::local_shell);
  EXPECT_EQ(args_of(o).at("command"), (json::array{"bash", "-lc", "ls"}));
}

TEST(write_arguments, path_and_content_keys_come_from_the_schema) {
  auto a = args_of(write_call(offering({test::write_tool()}), "a.txt", "x"));
  EXPECT_EQ(a.at("path"), "a.txt");
  EXPECT_EQ(a.at("content"), "x");
  a = args_of(write_call(offering({test::opencode_write_tool()}), "/abs/a.txt", "x"));
  EXPECT_EQ(a.at("filePath"), "/abs/a.txt");
}

TEST(write_arguments, a_relative_path_becomes_absolute_when_the_schema_requires_it) {
  auto c = offering({test::claude_write_tool()});
  message sys;
  sys.role = role::system;
  sys.text = "You are Claude.\nPrimary working directory: /srv/project\nIs a git repo: no";
  c.messages.push_back(sys);
  EXPECT_EQ(args_of(write_call(c, "out/a.txt", "x")).at("file_path"), "/srv/project/out/a.txt");
  auto t = offering({test::write_tool()});
  t.messages.push_back(sys);
  EXPECT_EQ(args_of(write_call(t, "out/a.txt", "x")).at("path"), "out/a.txt");
  message env;
  env.role = role::user;
  env.text = "<environment_context>\n  <cwd>/tmp/codex</cwd>\n</environment_context>";
  conversation codex;
  codex.messages.push_back(env);
  EXPECT_EQ(working_directory(codex), "/tmp/codex");
}

TEST(write_arguments, without_a_write_tool_the_shell_writes_with_printf) {
  const auto a = args_of(write_call(offering({test::bash_tool()}), "dir/it's.txt", "a\nb"));
  EXPECT_EQ(a.at("command"), "mkdir -p 'dir' && printf '%s' 'a\nb' > 'dir/it'\\''s.txt'");
}

TEST(question_arguments, tether_ask_user_gets_question_options_with_ids_and_flags) {
  const auto a = args_of(question_call(offering({test::ask_user_tool()}), "Color?", {"Red", "Light Blue"}));
  EXPECT_EQ(a.at("question"), "Color?");
  const auto& opts = a.at("options").as_array();
  ASSERT_EQ(opts.size(), 2U);
  EXPECT_EQ(opts[1].as_object().at("id"), "light blue");
  EXPECT_EQ(opts[1].as_object().at("label"), "Light Blue");
  EXPECT_EQ(a.at("multi_select"), false);
  EXPECT_EQ(a.at("allow_other"), true);
}

TEST(question_arguments, claude_ask_user_question_gets_its_questions_shape) {
  const auto a = args_of(question_call(offering({test::claude_ask_tool()}), "Color?", {"Red", "Blue"}));
  const auto& q = a.at("questions").as_array().at(0).as_object();
  EXPECT_EQ(q.at("question"), "Color?");
  EXPECT_TRUE(q.at("header").is_string());
  EXPECT_EQ(q.at("multiSelect"), false);
  const auto& opt = q.at("options").as_array().at(0).as_object();
  EXPECT_EQ(opt.at("label"), "Red");
  EXPECT_TRUE(opt.at("description").is_string());
  EXPECT_FALSE(opt.contains("id"));
}

TEST(plan_arguments, steps_fill_each_plan_tool_shape) {
  const std::vector<std::string> steps = {"read", "write"};
  EXPECT_EQ(args_of(plan_call(offering({test::write_plan_tool()}), steps)).at("steps"), (json::array{"read", "write"}));
  const auto codex = args_of(plan_call(offering({test::update_plan_tool()}), steps));
  EXPECT_EQ(codex.at("plan").as_array().at(0).as_object().at("step"), "read");
  EXPECT_EQ(codex.at("plan").as_array().at(0).as_object().at("status"), "pending");
  const auto todo = args_of(plan_call(offering({test::todowrite_tool()}), steps)).at("todos").as_array().at(1);
  EXPECT_EQ(todo.as_object().at("content"), "write");
  EXPECT_EQ(todo.as_object().at("id"), "2");
  EXPECT_EQ(todo.as_object().at("priority"), "medium");
}

TEST(named_calls, the_tool_directive_calls_an_offered_tool_with_its_json) {
  const auto o = named_call(offering({test::bash_tool()}), "bash", json::parse(R"({"command":"pwd"})"));
  EXPECT_EQ(name_of(o), "bash");
  EXPECT_EQ(args_of(o).at("command"), "pwd");
  const auto missing = named_call(offering({test::bash_tool()}), "nope", json::object());
  ASSERT_TRUE(std::holds_alternative<std::string>(missing));
  EXPECT_NE(std::get<std::string>(missing).find("offered: bash"), std::string::npos);
}

TEST(missing_tools, each_role_names_what_it_looked_for) {
  const conversation none;
  EXPECT_NE(std::get<std::string>(question_call(none, "q", {})).find("AskUserQuestion"), std::string::npos);
  EXPECT_NE(std::get<std::string>(plan_call(none, {"a"})).find("todowrite"), std::string::npos);
  EXPECT_NE(std::get<std::string>(write_call(none, "a", "b")).find("create_file"), std::string::npos);
}

}  // namespace
}  // namespace tether::mock
