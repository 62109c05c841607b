#include "cli/question.h"

#include <fmt/format.h>
#include <boost/json.hpp>

#include "model/questions.h"

namespace tether::cli {

namespace {

namespace json = boost::json;

// The questions of a payload that has at least one.
std::optional<model::question_payload> questions_of(const json::value& payload) {
  auto qs = model::read_questions(payload);
  if (!qs || qs->questions.empty()) return std::nullopt;
  return qs;
}

// An option id given as itself or as its printed number.
result<std::string> resolve_option(const model::question& q, std::string_view token) {
  if (const auto* o = q.option(token)) return o->id;
  if (!token.empty() && token.find_first_not_of("0123456789") == std::string_view::npos && token.size() < 6) {
    const auto n = static_cast<std::size_t>(std::stoul(std::string(token)));
    if (n >= 1 && n <= q.options.size()) return q.options[n - 1].id;
  }
  std::string known;
  for (std::size_t i = 0; i < q.options.size(); ++i)
    known += fmt::format("{}{} ({})", i == 0 ? "" : ", ", q.options[i].id, i + 1);
  return make_error(util_errc::invalid_argument,
                    fmt::format("question {} has no option '{}' (options: {})", q.id, token, known));
}

}  // namespace

std::string format_question(std::string_view interaction, const json::value& payload) {
  const auto qs = questions_of(payload);
  if (!qs) return fmt::format("question ({}): {}\n", interaction, json::serialize(payload));
  std::string out;
  for (const auto& q : qs->questions) {
    out += fmt::format("question ({}", interaction);
    if (qs->questions.size() > 1) out += ", " + q.id;
    out += fmt::format("): {}\n", q.text);
    int n = 0;
    for (const auto& o : q.options) out += fmt::format("    {}. {} [{}]\n", ++n, o.label, o.id);
    if (q.multi_select) out += "    (several options may be chosen)\n";
    if (q.allow_other) out += "    (or answer in your own words)\n";
  }
  return out;
}

result<json::value> build_answer(const json::value& payload, const answer_choice& choice) {
  const auto qs = questions_of(payload);
  if (!qs) return make_error(util_errc::invalid_argument, "the interaction has no questions");
  std::string ids;
  for (const auto& q : qs->questions) ids += (ids.empty() ? "" : ", ") + q.id;
  const model::question* q = nullptr;
  if (!choice.question_id) {
    if (qs->questions.size() != 1)
      return make_error(util_errc::invalid_argument,
                        fmt::format("the interaction asks several questions ({}): name one with --question", ids));
    q = &qs->questions.front();
  } else {
    q = qs->find(*choice.question_id);
  }
  if (q == nullptr)
    return make_error(util_errc::invalid_argument,
                      fmt::format("no question '{}' (questions: {})", *choice.question_id, ids));
  model::answer a;
  a.question_id = q->id;
  for (const auto& token : choice.options) {
    auto id = resolve_option(*q, token);
    if (!id) return id.error();
    a.option_ids.push_back(std::move(*id));
  }
  a.other_text = choice.other_text;
  return model::to_json(std::vector<model::answer>{std::move(a)});
}

std::optional<json::value> answer_from_line(const json::value& payload, std::string_view line) {
  const auto qs = questions_of(payload);
  if (!qs) return std::nullopt;
  std::vector<std::string> tokens;
  std::string cur;
  for (const char c : line) {
    if (c == ' ' || c == ',' || c == '\t') {
      if (!cur.empty()) tokens.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) tokens.push_back(std::move(cur));
  if (tokens.empty()) return std::nullopt;
  if (qs->questions.size() == 1) {
    answer_choice choice;
    choice.options = tokens;
    auto body = build_answer(payload, choice);
    if (!body) return std::nullopt;
    return std::move(*body);
  }
  if (tokens.size() != qs->questions.size()) return std::nullopt;
  std::vector<model::answer> answers;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const auto& q = qs->questions[i];
    auto id = resolve_option(q, tokens[i]);
    if (!id) return std::nullopt;
    answers.push_back(model::answer{q.id, {std::move(*id)}, std::nullopt});
  }
  return model::to_json(answers);
}

}  // namespace tether::cli
