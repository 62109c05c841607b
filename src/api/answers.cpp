#include "api/answers.h"

#include <set>
#include <string>

#include <boost/json.hpp>

#include "api/errors.h"

namespace tether::api {

namespace json = boost::json;

namespace {

error bad(const std::string& what) { return make_error(api_errc::bad_request, what); }

const json::object* find_question(const json::array* questions, std::string_view id) {
  if (questions == nullptr) return nullptr;
  for (const auto& q : *questions) {
    if (!q.is_object()) continue;
    const auto* qid = q.as_object().if_contains("id");
    if (qid != nullptr && qid->is_string() && qid->as_string() == id) return &q.as_object();
  }
  return nullptr;
}

bool flag(const json::object& q, std::string_view name) {
  const auto* v = q.if_contains(name);
  return v != nullptr && v->is_bool() && v->as_bool();
}

bool has_option(const json::object& q, std::string_view id) {
  const auto* opts = q.if_contains("options");
  if (opts == nullptr || !opts->is_array()) return false;
  for (const auto& o : opts->as_array()) {
    if (!o.is_object()) continue;
    const auto* oid = o.as_object().if_contains("id");
    if (oid != nullptr && oid->is_string() && oid->as_string() == id) return true;
  }
  return false;
}

}  // namespace

result<json::value> check_answer(const json::value& question_payload, const json::value& body) {
  if (!body.is_object()) return bad("the request body must be a JSON object");
  const auto* answers = body.as_object().if_contains("answers");
  if (answers == nullptr || !answers->is_array()) return bad("field 'answers' must be an array");
  const json::array* questions = nullptr;
  if (question_payload.is_object()) {
    const auto* qs = question_payload.as_object().if_contains("questions");
    if (qs != nullptr && qs->is_array()) questions = &qs->as_array();
  }
  std::set<std::string, std::less<>> answered;
  json::array clean;
  for (std::size_t i = 0; i < answers->as_array().size(); ++i) {
    const auto& a = answers->as_array()[i];
    const std::string at = "answers[" + std::to_string(i) + "]";
    if (!a.is_object()) return bad("field '" + at + "' must be an object");
    const auto& ao = a.as_object();
    for (const auto& [key, v] : ao)
      if (key != "question_id" && key != "option_ids" && key != "other_text")
        return bad("field '" + at + "." + std::string(key) + "' is not known");
    const auto* qid = ao.if_contains("question_id");
    if (qid == nullptr || !qid->is_string()) return bad("field '" + at + ".question_id' must be a string");
    const auto* ids = ao.if_contains("option_ids");
    if (ids == nullptr || !ids->is_array()) return bad("field '" + at + ".option_ids' must be an array");
    const auto* other = ao.if_contains("other_text");
    if (other != nullptr && !other->is_string() && !other->is_null())
      return bad("field '" + at + ".other_text' must be a string");
    const bool has_other = other != nullptr && other->is_string() && !other->as_string().empty();
    for (const auto& id : ids->as_array())
      if (!id.is_string()) return bad("field '" + at + ".option_ids' must hold strings");
    if (!answered.emplace(qid->as_string()).second)
      return bad("field '" + at + ".question_id': question '" + std::string(qid->as_string()) + "' is answered twice");
    if (questions != nullptr) {
      const auto* q = find_question(questions, qid->as_string());
      if (q == nullptr)
        return bad("field '" + at + ".question_id': no question '" + std::string(qid->as_string()) + "'");
      for (const auto& id : ids->as_array())
        if (!has_option(*q, id.as_string()))
          return bad("field '" + at + ".option_ids': no option '" + std::string(id.as_string()) + "' in question '" +
                     std::string(qid->as_string()) + "'");
      if (ids->as_array().size() > 1 && !flag(*q, "multi_select"))
        return bad("field '" + at + ".option_ids': question '" + std::string(qid->as_string()) + "' takes one option");
      if (has_other && !flag(*q, "allow_other"))
        return bad("field '" + at + ".other_text': question '" + std::string(qid->as_string()) +
                   "' takes no free text");
      if (ids->as_array().empty() && !has_other)
        return bad("field '" + at + ".option_ids': choose an option" +
                   std::string(flag(*q, "allow_other") ? " or give other_text" : ""));
    }
    clean.push_back(a);
  }
  if (questions != nullptr) {
    for (const auto& q : *questions) {
      if (!q.is_object()) continue;
      const auto* qid = q.as_object().if_contains("id");
      if (qid != nullptr && qid->is_string() && !answered.contains(std::string_view(qid->as_string())))
        return bad("field 'answers': question '" + std::string(qid->as_string()) + "' is not answered");
    }
  }
  json::object out;
  out["answers"] = std::move(clean);
  return json::value(std::move(out));
}

}  // namespace tether::api
