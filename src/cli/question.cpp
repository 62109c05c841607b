#include "cli/question.h"

#include <fmt/format.h>
#include <boost/json.hpp>

namespace tether::cli {

namespace {

namespace json = boost::json;

std::string str_of(const json::object& o, std::string_view key) {
  if (const auto* v = o.if_contains(key); v != nullptr && v->is_string()) return std::string(v->as_string());
  return {};
}

const json::array* questions_of(const json::value& payload) {
  if (!payload.is_object()) return nullptr;
  const auto* qs = payload.as_object().if_contains("questions");
  return qs != nullptr && qs->is_array() ? &qs->as_array() : nullptr;
}

// An option id given as itself or as its printed number.
result<std::string> resolve_option(const json::object& q, std::string_view token) {
  const auto* opts = q.if_contains("options");
  std::vector<std::string> ids;
  if (opts != nullptr && opts->is_array()) {
    for (const auto& o : opts->as_array())
      if (o.is_object()) ids.push_back(str_of(o.as_object(), "id"));
  }
  for (const auto& id : ids)
    if (id == token) return id;
  if (!token.empty() && token.find_first_not_of("0123456789") == std::string_view::npos && token.size() < 6) {
    const auto n = static_cast<std::size_t>(std::stoul(std::string(token)));
    if (n >= 1 && n <= ids.size()) return ids[n - 1];
  }
  std::string known;
  for (std::size_t i = 0; i < ids.size(); ++i) known += fmt::format("{}{} ({})", i == 0 ? "" : ", ", ids[i], i + 1);
  return make_error(util_errc::invalid_argument,
                    fmt::format("question {} has no option '{}' (options: {})", str_of(q, "id"), token, known));
}

}  // namespace

std::string format_question(std::string_view interaction, const json::value& payload) {
  const auto* qs = questions_of(payload);
  if (qs == nullptr || qs->empty()) return fmt::format("question ({}): {}\n", interaction, json::serialize(payload));
  std::string out;
  for (const auto& qv : *qs) {
    if (!qv.is_object()) continue;
    const auto& q = qv.as_object();
    out += fmt::format("question ({}", interaction);
    if (qs->size() > 1) out += ", " + str_of(q, "id");
    out += fmt::format("): {}\n", str_of(q, "question"));
    if (const auto* opts = q.if_contains("options"); opts != nullptr && opts->is_array()) {
      int n = 0;
      for (const auto& o : opts->as_array()) {
        if (!o.is_object()) continue;
        out += fmt::format("    {}. {} [{}]\n", ++n, str_of(o.as_object(), "label"), str_of(o.as_object(), "id"));
      }
    }
    const auto* multi = q.if_contains("multi_select");
    const auto* other = q.if_contains("allow_other");
    if (multi != nullptr && multi->is_bool() && multi->as_bool()) out += "    (several options may be chosen)\n";
    if (other != nullptr && other->is_bool() && other->as_bool()) out += "    (or answer in your own words)\n";
  }
  return out;
}

result<json::value> build_answer(const json::value& payload, const answer_choice& choice) {
  const auto* qs = questions_of(payload);
  if (qs == nullptr || qs->empty()) return make_error(util_errc::invalid_argument, "the interaction has no questions");
  const json::object* q = nullptr;
  std::string ids;
  for (const auto& qv : *qs) {
    if (!qv.is_object()) continue;
    const auto id = str_of(qv.as_object(), "id");
    ids += (ids.empty() ? "" : ", ") + id;
    if (choice.question_id && id == *choice.question_id) q = &qv.as_object();
  }
  if (!choice.question_id) {
    if (qs->size() != 1 || !qs->front().is_object())
      return make_error(util_errc::invalid_argument,
                        fmt::format("the interaction asks several questions ({}): name one with --question", ids));
    q = &qs->front().as_object();
  }
  if (q == nullptr)
    return make_error(util_errc::invalid_argument,
                      fmt::format("no question '{}' (questions: {})", *choice.question_id, ids));
  json::array option_ids;
  for (const auto& token : choice.options) {
    auto id = resolve_option(*q, token);
    if (!id) return id.error();
    option_ids.emplace_back(*id);
  }
  json::object a{{"question_id", str_of(*q, "id")}, {"option_ids", std::move(option_ids)}};
  if (choice.other_text) a["other_text"] = *choice.other_text;
  return json::value{{"answers", json::array{std::move(a)}}};
}

std::optional<json::value> answer_from_line(const json::value& payload, std::string_view line) {
  const auto* qs = questions_of(payload);
  if (qs == nullptr || qs->empty()) return std::nullopt;
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
  json::array answers;
  if (qs->size() == 1) {
    answer_choice choice;
    choice.options = tokens;
    auto body = build_answer(payload, choice);
    if (!body) return std::nullopt;
    return std::move(*body);
  }
  if (tokens.size() != qs->size()) return std::nullopt;
  for (std::size_t i = 0; i < qs->size(); ++i) {
    if (!(*qs)[i].is_object()) return std::nullopt;
    answer_choice choice;
    choice.question_id = str_of((*qs)[i].as_object(), "id");
    choice.options = {tokens[i]};
    auto body = build_answer(payload, choice);
    if (!body) return std::nullopt;
    answers.push_back(body->as_object()["answers"].as_array().front());
  }
  return json::value{{"answers", std::move(answers)}};
}

}  // namespace tether::cli
