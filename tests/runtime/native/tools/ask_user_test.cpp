#include "runtime/native/tools/tool.h"

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "fixture.h"

namespace tether::runtime::native::test {
namespace {

namespace json = boost::json;

using ask_user = tools_test;

TEST_F(ask_user, returns_waiting_with_a_question_interaction_payload) {
  const auto out = call_json("ask_user", R"({"question":"Which database?",
      "options":[{"id":"pg","label":"PostgreSQL"},{"id":"lite","label":"SQLite"}],
      "multi_select":true,"allow_other":false})");
  ASSERT_EQ(out.status, tool_status::waiting) << out.content;
  EXPECT_EQ(out.interaction_kind, "question");
  EXPECT_EQ(out.interaction_payload, json::parse(R"({"questions":[{"id":"q1","question":"Which database?",
      "options":[{"id":"pg","label":"PostgreSQL"},{"id":"lite","label":"SQLite"}],
      "multi_select":true,"allow_other":false}]})"));
}

TEST_F(ask_user, option_ids_default_to_the_lowercased_label) {
  const auto out = call_json("ask_user", R"({"question":"Proceed?","options":[{"label":"Yes"},{"label":"Not Now"}]})");
  ASSERT_EQ(out.status, tool_status::waiting) << out.content;
  const auto& q = out.interaction_payload.at("questions").at(0);
  EXPECT_EQ(q.at("options"), json::parse(R"([{"id":"yes","label":"Yes"},{"id":"not now","label":"Not Now"}])"));
  EXPECT_EQ(q.at("multi_select"), false);
  EXPECT_EQ(q.at("allow_other"), false);
}

TEST_F(ask_user, a_question_without_options_allows_a_free_answer) {
  const auto out = call_json("ask_user", R"({"question":"What should the service be called?"})");
  ASSERT_EQ(out.status, tool_status::waiting);
  const auto& q = out.interaction_payload.at("questions").at(0);
  EXPECT_EQ(q.at("options"), json::array());
  EXPECT_EQ(q.at("allow_other"), true);
}

TEST_F(ask_user, invalid_questions_fail_with_a_reason) {
  const auto fails_with = [&](std::string_view input, std::string_view reason) {
    const auto out = call_json("ask_user", input);
    EXPECT_EQ(out.status, tool_status::failed) << input;
    EXPECT_TRUE(contains(out.content, reason)) << input << " -> " << out.content;
  };
  fails_with(R"({})", "missing required argument 'question'");
  fails_with(R"({"question":"   "})", "the question is empty");
  fails_with(R"({"question":"q","options":"yes,no"})", "argument 'options' must be an array");
  fails_with(R"({"question":"q","options":[{"id":"a"}]})", "missing required argument 'options[0].label'");
  fails_with(R"({"question":"q","options":[{"label":""}]})", "options[0].label is empty");
  fails_with(R"({"question":"q","options":["yes"]})", "options[0] must be an object");
  fails_with(R"({"question":"q","options":[{"label":"Yes"},{"id":"yes","label":"Sure"}]})",
             "duplicate option id 'yes'");
  fails_with(R"({"question":"q","options":[{"label":"a","color":"red"}]})", "unknown key 'color'");
  fails_with(R"({"question":"q","multi_select":"yes"})", "argument 'multi_select' must be a boolean");
  std::string many = R"({"question":"q","options":[)";
  for (int i = 0; i < 21; ++i) many += (i > 0 ? "," : "") + std::string(R"({"label":"o)") + std::to_string(i) + "\"}";
  many += "]}";
  fails_with(many, "at most 20 options");
}

TEST_F(ask_user, twenty_options_are_allowed) {
  std::string input = R"({"question":"q","options":[)";
  for (int i = 0; i < 20; ++i) input += (i > 0 ? "," : "") + std::string(R"({"label":"o)") + std::to_string(i) + "\"}";
  input += "]}";
  EXPECT_EQ(call_json("ask_user", input).status, tool_status::waiting);
}

TEST_F(ask_user, the_schema_has_exactly_the_documented_properties) {
  const auto& params = tools_.find("ask_user")->spec().parameters;
  const auto& props = params.at("properties").as_object();
  std::vector<std::string> names;
  for (const auto& kv : props) names.emplace_back(kv.key());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"allow_other", "multi_select", "options", "question"}));
  EXPECT_EQ(params.at("required"), json::parse(R"(["question"])"));
  const auto& item = props.at("options").at("items").as_object();
  EXPECT_EQ(item.at("required"), json::parse(R"(["label"])"));
  EXPECT_EQ(item.at("additionalProperties"), false);
  EXPECT_EQ(props.at("options").at("maxItems"), 20);
}

}  // namespace
}  // namespace tether::runtime::native::test
