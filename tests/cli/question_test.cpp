#include "cli/question.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace tether::cli {
namespace {

namespace json = boost::json;

json::value color_question() {
  return json::parse(R"({"questions":[{"id":"q1","question":"Which color?",
    "options":[{"id":"red","label":"Red"},{"id":"blue","label":"Blue"}],"multi_select":false,"allow_other":false}]})");
}

json::value two_questions() {
  return json::parse(R"({"questions":[
    {"id":"q1","question":"Color?","options":[{"id":"red","label":"Red"},{"id":"blue","label":"Blue"}]},
    {"id":"q2","question":"Size?","options":[{"id":"s","label":"Small"},{"id":"l","label":"Large"}]}]})");
}

TEST(Question, OptionsAreNumberedFromOneInPayloadOrder) {
  const auto text = format_question("int_1", color_question());
  EXPECT_EQ(text, "question (int_1): Which color?\n    1. Red [red]\n    2. Blue [blue]\n");
}

TEST(Question, APayloadThatIsNotAQuestionListIsPrintedAsJson) {
  EXPECT_EQ(format_question("int_1", json::parse(R"({"plan":["a"]})")), "question (int_1): {\"plan\":[\"a\"]}\n");
}

TEST(Question, ANumberPicksTheOptionPrintedWithIt) {
  answer_choice c;
  c.options = {"2"};
  auto body = build_answer(color_question(), c);
  ASSERT_TRUE(body);
  EXPECT_EQ(json::serialize(*body), R"({"answers":[{"question_id":"q1","option_ids":["blue"]}]})");
}

TEST(Question, AnOptionIdIsTakenAsItIs) {
  answer_choice c;
  c.options = {"red"};
  c.other_text = "crimson";
  auto body = build_answer(color_question(), c);
  ASSERT_TRUE(body);
  EXPECT_EQ(json::serialize(*body),
            R"({"answers":[{"question_id":"q1","option_ids":["red"],"other_text":"crimson"}]})");
}

TEST(Question, AnUnknownOptionNamesTheChoices) {
  answer_choice c;
  c.options = {"3"};
  auto body = build_answer(color_question(), c);
  ASSERT_FALSE(body);
  EXPECT_NE(body.error().message.find("red (1), blue (2)"), std::string::npos) << body.error().message;
}

TEST(Question, SeveralQuestionsNeedOneNamed) {
  answer_choice c;
  c.options = {"1"};
  auto body = build_answer(two_questions(), c);
  ASSERT_FALSE(body);
  EXPECT_NE(body.error().message.find("--question"), std::string::npos);
  c.question_id = "q2";
  body = build_answer(two_questions(), c);
  ASSERT_TRUE(body);
  EXPECT_EQ(json::serialize(*body), R"({"answers":[{"question_id":"q2","option_ids":["s"]}]})");
}

TEST(Question, ATypedLineOfNumbersAnswersEveryQuestionInOrder) {
  auto one = answer_from_line(color_question(), " 2 ");
  ASSERT_TRUE(one);
  EXPECT_EQ(json::serialize(*one), R"({"answers":[{"question_id":"q1","option_ids":["blue"]}]})");
  auto both = answer_from_line(two_questions(), "2, 1");
  ASSERT_TRUE(both);
  EXPECT_EQ(json::serialize(*both),
            R"({"answers":[{"question_id":"q1","option_ids":["blue"]},{"question_id":"q2","option_ids":["s"]}]})");
}

TEST(Question, ATypedLineThatIsNotAnOptionIsNotAnAnswer) {
  EXPECT_FALSE(answer_from_line(color_question(), "blue is nice"));
  EXPECT_FALSE(answer_from_line(color_question(), "9"));
  EXPECT_FALSE(answer_from_line(two_questions(), "1"));
  EXPECT_FALSE(answer_from_line(json::parse("{}"), "1"));
}

}  // namespace
}  // namespace tether::cli
