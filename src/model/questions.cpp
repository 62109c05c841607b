#include "model/questions.h"

#include <set>
#include <string_view>

#include <boost/json.hpp>

namespace tether::model {

namespace json = boost::json;

namespace {

error bad(std::string what) { return make_error(util_errc::invalid_argument, std::move(what)); }

bool blank(std::string_view s) { return s.find_first_not_of(" \t\r\n") == std::string_view::npos; }

std::string ascii_lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// Messages in the words a tool's argument checks use, so a model reads one
// style whichever argument it got wrong.
std::string missing(std::string_view name) { return "missing required argument '" + std::string(name) + "'"; }
std::string wrong_type(std::string_view name, std::string_view expected) {
  return "argument '" + std::string(name) + "' must be " + std::string(expected);
}

// One option of make_question: {"id"?, "label"}.
result<question_option> make_option(const json::value& v, std::size_t index) {
  const std::string where = "options[" + std::to_string(index) + "]";
  if (!v.is_object()) return bad(where + " must be an object with a label (and optionally an id)");
  const auto& o = v.get_object();
  for (const auto& kv : o)
    if (kv.key() != "id" && kv.key() != "label")
      return bad("unknown key '" + std::string(kv.key()) + "' in " + where + "; expected id and label");
  const auto* label = o.if_contains("label");
  if (label == nullptr || label->is_null()) return bad(missing(where + ".label"));
  if (!label->is_string()) return bad(wrong_type(where + ".label", "a string"));
  if (blank(label->get_string())) return bad(where + ".label is empty");
  if (label->get_string().size() > max_label_bytes)
    return bad(where + ".label is longer than " + std::to_string(max_label_bytes) + " bytes");
  question_option out;
  out.label = std::string(label->get_string());
  if (const auto* id = o.if_contains("id"); id != nullptr && !id->is_null()) {
    if (!id->is_string()) return bad(wrong_type(where + ".id", "a string"));
    if (blank(id->get_string())) return bad(where + ".id is empty; leave it out to use the lowercased label");
    out.id = std::string(id->get_string());
  } else {
    out.id = ascii_lowercase(out.label);
  }
  return out;
}

bool flag(const json::object& o, std::string_view name) {
  const auto* v = o.if_contains(name);
  return v != nullptr && v->is_bool() && v->as_bool();
}

const json::string* string_member(const json::object& o, std::string_view name) {
  const auto* v = o.if_contains(name);
  return v != nullptr && v->is_string() ? &v->as_string() : nullptr;
}

}  // namespace

const question_option* question::option(std::string_view option_id) const {
  for (const auto& o : options)
    if (o.id == option_id) return &o;
  return nullptr;
}

const question* question_payload::find(std::string_view question_id) const {
  for (const auto& q : questions)
    if (q.id == question_id) return &q;
  return nullptr;
}

result<question> make_question(std::string id, std::string text, const json::value* options,
                               std::optional<bool> multi_select, std::optional<bool> allow_other) {
  if (blank(text)) return bad("the question is empty");
  if (text.size() > max_question_bytes)
    return bad("the question is longer than " + std::to_string(max_question_bytes) + " bytes");
  question q;
  q.id = std::move(id);
  q.text = std::move(text);
  if (options != nullptr && !options->is_null()) {
    if (!options->is_array()) return bad(wrong_type("options", "an array of {id, label} objects"));
    const auto& items = options->get_array();
    if (items.size() > max_question_options)
      return bad("at most " + std::to_string(max_question_options) + " options are allowed; got " +
                 std::to_string(items.size()));
    for (std::size_t i = 0; i < items.size(); ++i) {
      auto option = make_option(items[i], i);
      if (!option) return option.error();
      if (q.option(option->id) != nullptr)
        return bad("duplicate option id '" + option->id + "'; give each option a distinct id or label");
      q.options.push_back(std::move(*option));
    }
  }
  q.multi_select = multi_select.value_or(false);
  q.allow_other = allow_other.value_or(q.options.empty());
  return q;
}

json::value to_json(const question_payload& p) {
  json::array questions;
  for (const auto& q : p.questions) {
    json::array options;
    for (const auto& o : q.options) options.push_back(json::object{{"id", o.id}, {"label", o.label}});
    json::object out;
    out["id"] = q.id;
    out["question"] = q.text;
    out["multi_select"] = q.multi_select;
    out["allow_other"] = q.allow_other;
    out["options"] = std::move(options);
    questions.push_back(std::move(out));
  }
  return json::object{{"questions", std::move(questions)}};
}

std::optional<question_payload> read_questions(const json::value& payload) {
  if (!payload.is_object()) return std::nullopt;
  const auto* qs = payload.as_object().if_contains("questions");
  if (qs == nullptr || !qs->is_array()) return std::nullopt;
  question_payload out;
  for (const auto& qv : qs->as_array()) {
    if (!qv.is_object()) continue;
    const auto& qo = qv.as_object();
    const auto* id = string_member(qo, "id");
    if (id == nullptr) continue;
    question q;
    q.id = std::string(*id);
    if (const auto* text = string_member(qo, "question")) q.text = std::string(*text);
    q.multi_select = flag(qo, "multi_select");
    q.allow_other = flag(qo, "allow_other");
    if (const auto* opts = qo.if_contains("options"); opts != nullptr && opts->is_array()) {
      for (const auto& ov : opts->as_array()) {
        if (!ov.is_object()) continue;
        const auto* oid = string_member(ov.as_object(), "id");
        if (oid == nullptr) continue;
        const auto* label = string_member(ov.as_object(), "label");
        q.options.push_back({std::string(*oid), label != nullptr ? std::string(*label) : std::string()});
      }
    }
    out.questions.push_back(std::move(q));
  }
  return out;
}

json::value to_json(const std::vector<answer>& answers) {
  json::array list;
  for (const auto& a : answers) {
    json::array ids;
    for (const auto& id : a.option_ids) ids.emplace_back(id);
    json::object o{{"question_id", a.question_id}, {"option_ids", std::move(ids)}};
    if (a.other_text) o["other_text"] = *a.other_text;
    list.push_back(std::move(o));
  }
  return json::object{{"answers", std::move(list)}};
}

result<json::value> check_answer(const json::value& question_payload, const json::value& body) {
  if (!body.is_object()) return bad("the request body must be a JSON object");
  const auto* answers = body.as_object().if_contains("answers");
  if (answers == nullptr || !answers->is_array()) return bad("field 'answers' must be an array");
  const auto questions = read_questions(question_payload);
  std::set<std::string, std::less<>> answered;
  for (std::size_t i = 0; i < answers->as_array().size(); ++i) {
    const auto& a = answers->as_array()[i];
    const std::string at = "answers[" + std::to_string(i) + "]";
    if (!a.is_object()) return bad("field '" + at + "' must be an object");
    const auto& ao = a.as_object();
    for (const auto& [key, v] : ao)
      if (key != "question_id" && key != "option_ids" && key != "other_text")
        return bad("field '" + at + "." + std::string(key) + "' is not known");
    const auto* qid = string_member(ao, "question_id");
    if (qid == nullptr) return bad("field '" + at + ".question_id' must be a string");
    const auto* ids = ao.if_contains("option_ids");
    if (ids == nullptr || !ids->is_array()) return bad("field '" + at + ".option_ids' must be an array");
    const auto* other = ao.if_contains("other_text");
    if (other != nullptr && !other->is_string() && !other->is_null())
      return bad("field '" + at + ".other_text' must be a string");
    const bool has_other = other != nullptr && other->is_string() && !other->as_string().empty();
    for (const auto& id : ids->as_array())
      if (!id.is_string()) return bad("field '" + at + ".option_ids' must hold strings");
    const std::string q_name(*qid);
    if (!answered.emplace(q_name).second)
      return bad("field '" + at + ".question_id': question '" + q_name + "' is answered twice");
    if (!questions) continue;
    const auto* q = questions->find(q_name);
    if (q == nullptr) return bad("field '" + at + ".question_id': no question '" + q_name + "'");
    for (const auto& id : ids->as_array())
      if (q->option(id.as_string()) == nullptr)
        return bad("field '" + at + ".option_ids': no option '" + std::string(id.as_string()) + "' in question '" +
                   q_name + "'");
    if (ids->as_array().size() > 1 && !q->multi_select)
      return bad("field '" + at + ".option_ids': question '" + q_name + "' takes one option");
    if (has_other && !q->allow_other)
      return bad("field '" + at + ".other_text': question '" + q_name + "' takes no free text");
    if (ids->as_array().empty() && !has_other)
      return bad("field '" + at + ".option_ids': choose an option" +
                 std::string(q->allow_other ? " or give other_text" : ""));
  }
  if (questions) {
    for (const auto& q : questions->questions)
      if (!answered.contains(q.id)) return bad("field 'answers': question '" + q.id + "' is not answered");
  }
  return json::value(json::object{{"answers", *answers}});
}

json::value with_labels(const json::value& question_payload, json::value answer) {
  auto* answers = answer.is_object() ? answer.as_object().if_contains("answers") : nullptr;
  const auto questions = read_questions(question_payload);
  if (answers == nullptr || !answers->is_array() || !questions) return answer;
  for (auto& a : answers->as_array()) {
    if (!a.is_object()) continue;
    auto& ao = a.as_object();
    const auto* qid = string_member(ao, "question_id");
    const auto* chosen = ao.if_contains("option_ids");
    if (qid == nullptr || chosen == nullptr || !chosen->is_array()) continue;
    json::array labels;
    if (const auto* q = questions->find(*qid)) {
      for (const auto& id : chosen->as_array()) {
        if (!id.is_string()) continue;
        if (const auto* o = q->option(id.as_string())) labels.emplace_back(o->label);
      }
    }
    ao["labels"] = std::move(labels);
  }
  return answer;
}

}  // namespace tether::model
