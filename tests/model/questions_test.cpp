// The question and answer formats: questions are made strictly, stored
// payloads read leniently, and an answer is checked against the question it
// answers.
#include "model/questions.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace tether::model {
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
  EXPECT_EQ(r.error(), util_errc::invalid_argument);
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

TEST(MakeQuestion, OptionIdsDefaultToTheLowercasedLabelAndFreeTextIsAllowedOnlyWithoutOptions) {
  const json::value options = json::parse(R"([{"label":"Not Now"},{"id":"y","label":"Yes"}])");
  auto q = make_question("q1", "Proceed?", &options, std::nullopt, std::nullopt);
  ASSERT_TRUE(q) << q.error().message;
  ASSERT_EQ(q->options.size(), 2U);
  EXPECT_EQ(q->options[0].id, "not now");
  EXPECT_EQ(q->options[1].id, "y");
  EXPECT_FALSE(q->allow_other);
  EXPECT_FALSE(q->multi_select);
  auto open = make_question("q1", "Name?", nullptr, std::nullopt, std::nullopt);
  ASSERT_TRUE(open);
  EXPECT_TRUE(open->allow_other);
}

TEST(MakeQuestion, ABadQuestionIsRefusedNamingWhatIsWrong) {
  const auto refused = [](std::string text, std::string_view options) {
    const json::value o = json::parse(options);
    auto q = make_question("q1", std::move(text), &o, std::nullopt, std::nullopt);
    if (q) return std::string("accepted");
    EXPECT_EQ(q.error(), util_errc::invalid_argument);
    return q.error().message;
  };
  EXPECT_EQ(refused("  ", "[]"), "the question is empty");
  EXPECT_EQ(refused(std::string(max_question_bytes + 1, 'x'), "[]"), "the question is longer than 10000 bytes");
  EXPECT_NE(refused("q", R"("a,b")").find("argument 'options' must be an array"), std::string::npos);
  EXPECT_NE(refused("q", R"([{"label":"A"},{"id":"a","label":"B"}])").find("duplicate option id 'a'"),
            std::string::npos);
  EXPECT_NE(refused("q", R"([{"label":"A","colour":1}])").find("unknown key 'colour' in options[0]"),
            std::string::npos);
  std::string many = "[";
  for (std::size_t i = 0; i <= max_question_options; ++i)
    many += std::string(i == 0 ? "" : ",") + R"({"label":"o)" + std::to_string(i) + "\"}";
  many += "]";
  EXPECT_NE(refused("q", many).find("at most 20 options"), std::string::npos);
}

TEST(ReadQuestions, AMadeQuestionReadsBackAsItWasMade) {
  const json::value options = json::parse(R"([{"label":"Red"},{"label":"Blue"}])");
  auto q = make_question("q1", "Color?", &options, true, false);
  ASSERT_TRUE(q);
  const auto payload = to_json(question_payload{{*q}});
  auto back = read_questions(payload);
  ASSERT_TRUE(back);
  ASSERT_EQ(back->questions.size(), 1U);
  const auto& r = back->questions[0];
  EXPECT_EQ(r.id, "q1");
  EXPECT_EQ(r.text, "Color?");
  EXPECT_TRUE(r.multi_select);
  EXPECT_FALSE(r.allow_other);
  ASSERT_EQ(r.options.size(), 2U);
  EXPECT_EQ(r.options[1].id, "blue");
  EXPECT_EQ(r.options[1].label, "Blue");
}

TEST(ReadQuestions, APayloadWithoutAQuestionsArrayHasNoQuestionsAndOddEntriesAreSkipped) {
  EXPECT_FALSE(read_questions(json::parse(R"({"steps":[]})")));
  EXPECT_FALSE(read_questions(json::parse(R"("text")")));
  auto qs = read_questions(
      json::parse(R"({"questions":[1,{"question":"no id"},{"id":"q","options":[{"label":"x"},{"id":"a"}]}]})"));
  ASSERT_TRUE(qs);
  ASSERT_EQ(qs->questions.size(), 1U);
  ASSERT_EQ(qs->questions[0].options.size(), 1U);
  EXPECT_EQ(qs->questions[0].options[0].id, "a");
  EXPECT_EQ(qs->questions[0].options[0].label, "");
}

TEST(WithLabels, EachAnswerNamesItsChosenOptionsByLabel) {
  const auto body = json::parse(R"({"answers":[{"question_id":"q1","option_ids":["blue"]},
    {"question_id":"q2","option_ids":["a","b"]}]})");
  const auto labelled = with_labels(question, body);
  EXPECT_EQ(labelled.at("answers").at(0).at("labels"), json::parse(R"(["Blue"])"));
  EXPECT_EQ(labelled.at("answers").at(1).at("labels"), json::parse(R"(["A","B"])"));
  EXPECT_EQ(labelled.at("answers").at(1).at("option_ids"), json::parse(R"(["a","b"])"));
  EXPECT_EQ(with_labels(question, json::value("yes")), json::value("yes")) << "an answer of another shape is kept";
}

}  // namespace
}  // namespace tether::model
