// check_answer: an answer is checked against the question it answers.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "api/answers.h"
#include "api/errors.h"

namespace tether::api {
namespace {

namespace json = boost::json;

const json::value question = json::parse(R"({"questions":[
  {"id":"q1","question":"Color?","options":[{"id":"red","label":"Red"},{"id":"blue","label":"Blue"}],
   "multi_select":false,"allow_other":false},
  {"id":"q2","question":"Extras?","options":[{"id":"a","label":"A"},{"id":"b","label":"B"}],
   "multi_select":true,"allow_other":true}]})");

std::string refusal(std::string_view body) {
  auto r = check_answer(question, json::parse(body));
  if (r) return "accepted";
  EXPECT_EQ(r.error().code, api_errc::bad_request);
  return r.error().message;
}

TEST(CheckAnswer, AValidAnswerIsReturnedAsGiven) {
  const auto body = json::parse(R"({"answers":[{"question_id":"q1","option_ids":["blue"]},
    {"question_id":"q2","option_ids":["a","b"],"other_text":"and C"}]})");
  auto r = check_answer(question, body);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, body);
}

TEST(CheckAnswer, EachMistakeNamesItsField) {
  EXPECT_NE(refusal(R"({"answers":{}})").find("'answers'"), std::string::npos);
  EXPECT_NE(refusal(R"({"answers":[{"option_ids":["red"]}]})").find("question_id"), std::string::npos);
  EXPECT_NE(refusal(R"({"answers":[{"question_id":"q1","option_ids":"red"}]})").find("option_ids"), std::string::npos);
  EXPECT_NE(refusal(R"({"answers":[{"question_id":"q1","option_ids":["red"],"colour":1}]})").find("colour"),
            std::string::npos);
  EXPECT_NE(
      refusal(R"({"answers":[{"question_id":"q9","option_ids":["red"]},{"question_id":"q2","option_ids":["a"]}]})")
          .find("no question 'q9'"),
      std::string::npos);
  EXPECT_NE(
      refusal(R"({"answers":[{"question_id":"q1","option_ids":["green"]},{"question_id":"q2","option_ids":["a"]}]})")
          .find("no option 'green'"),
      std::string::npos);
}

TEST(CheckAnswer, TheQuestionsRulesHold) {
  // One option unless multi_select.
  EXPECT_NE(
      refusal(
          R"({"answers":[{"question_id":"q1","option_ids":["red","blue"]},{"question_id":"q2","option_ids":["a"]}]})")
          .find("takes one option"),
      std::string::npos);
  // Free text only where allowed.
  EXPECT_NE(
      refusal(
          R"({"answers":[{"question_id":"q1","option_ids":[],"other_text":"green"},{"question_id":"q2","option_ids":["a"]}]})")
          .find("takes no free text"),
      std::string::npos);
  // Free text alone answers a question that allows it.
  EXPECT_EQ(
      refusal(
          R"({"answers":[{"question_id":"q1","option_ids":["red"]},{"question_id":"q2","option_ids":[],"other_text":"C"}]})"),
      "accepted");
  // Nothing chosen.
  EXPECT_NE(refusal(R"({"answers":[{"question_id":"q1","option_ids":[]},{"question_id":"q2","option_ids":["a"]}]})")
                .find("choose an option"),
            std::string::npos);
  // Every question answered, once.
  EXPECT_NE(refusal(R"({"answers":[{"question_id":"q1","option_ids":["red"]}]})").find("'q2' is not answered"),
            std::string::npos);
  EXPECT_NE(
      refusal(R"({"answers":[{"question_id":"q1","option_ids":["red"]},{"question_id":"q1","option_ids":["red"]}]})")
          .find("answered twice"),
      std::string::npos);
}

TEST(CheckAnswer, APayloadWithoutQuestionsOnlyGetsTheShapeChecked) {
  const json::value plan = json::parse(R"({"steps":["a","b"]})");
  EXPECT_TRUE(check_answer(plan, json::parse(R"({"answers":[{"question_id":"approve","option_ids":["yes"]}]})")));
  EXPECT_FALSE(check_answer(plan, json::parse(R"({"answers":[{"question_id":1,"option_ids":[]}]})")));
}

}  // namespace
}  // namespace tether::api
