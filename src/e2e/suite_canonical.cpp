#include "e2e/suite.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json.hpp>

#include "e2e/suite_internal.h"
#include "util/sha256.h"

namespace tether::e2e {

namespace {

namespace json = boost::json;
using detail::matcher_keys;

std::string_view mode_name(restart_mode m) { return m == restart_mode::kill ? "kill" : "graceful"; }

json::object step_json(const step& s) {
  json::object o;
  o["do"] = to_string(s.kind);
  switch (s.kind) {
    case step_kind::send:
      o["text"] = s.text;
      o["delivery"] = s.delivery;
      break;
    case step_kind::wait:
      o["for"] = to_string(s.target);
      o["timeout_ms"] = s.timeout.count();
      if (s.target == wait_target::runs) o["count"] = s.count;
      if (s.target == wait_target::file) o["path"] = s.path;
      if (s.target == wait_target::task || s.target == wait_target::children) o["status"] = s.status;
      break;
    case step_kind::answer:
      if (!s.option.empty() || s.other.empty()) o["option"] = s.option;
      if (!s.other.empty()) o["other"] = s.other;
      break;
    case step_kind::restart:
      o["mode"] = mode_name(s.mode);
      break;
    case step_kind::sleep:
      o["ms"] = s.duration.count();
      break;
    case step_kind::fork:
      o["run"] = s.run;
      break;
    case step_kind::create_project:
    case step_kind::update_project: {
      o["name"] = s.name;
      if (s.has_repositories) {
        json::array repos;
        for (const auto& r : s.repositories)
          repos.push_back(json::object{{"name", r.name}, {"branch", r.branch}, {"content", r.content}});
        o["repositories"] = std::move(repos);
      }
      if (s.has_setup) o["setup"] = json::array(s.setup.begin(), s.setup.end());
      break;
    }
    case step_kind::create_task:
      o["title"] = s.title;
      o["mode"] = s.work_mode;
      o["project"] = s.project;
      o["text"] = s.text;
      break;
    case step_kind::reject:
      o["reason"] = s.reason;
      break;
    case step_kind::create_repositories: {
      json::array repos;
      for (const auto& r : s.repositories)
        repos.push_back(json::object{{"name", r.name}, {"branch", r.branch}, {"content", r.content}});
      o["repositories"] = std::move(repos);
      break;
    }
    case step_kind::reconfigure:
      if (s.model) o["model"] = *s.model;
      if (s.instructions) o["instructions"] = *s.instructions;
      break;
    default:
      break;
  }
  return o;
}

json::object matcher_json(const matcher_spec& m) {
  json::object o;
  o["kind"] = to_string(m.kind);
  for (const auto key : matcher_keys(m.kind)) {
    if (key == "text") o["text"] = m.text;
    if (key == "texts") o["texts"] = json::array(m.texts.begin(), m.texts.end());
    if (key == "count") o["count"] = m.count;
    if (key == "path") o["path"] = m.path;
    if (key == "content") o["content"] = m.content;
    if (key == "status") o["status"] = m.status;
    if (key == "value") o["value"] = m.value;
    if (key == "run") o["run"] = m.run;
    if (key == "runs") o["runs"] = json::array(m.runs.begin(), m.runs.end());
    if (key == "repos" || key == "reasons" || key == "outcomes") o[key] = json::array(m.texts.begin(), m.texts.end());
    if (key == "of") o["of"] = m.of;
    if (key == "session") o["session"] = m.session;
    if (key == "workspace") o["workspace"] = m.workspace;
  }
  return o;
}

json::object case_json(const case_def& c) {
  json::array steps, matchers;
  for (const auto& s : c.steps) steps.push_back(step_json(s));
  for (const auto& m : c.matchers) matchers.push_back(matcher_json(m));
  json::object not_applicable;
  for (const auto& [kind, reason] : c.not_applicable) not_applicable[kind] = reason;
  return {{"id", c.id},     {"title", c.title},     {"mode", c.mode},
          {"steps", steps}, {"matchers", matchers}, {"not_applicable", not_applicable}};
}

// boost::json objects keep insertion order; canonical form wants keys sorted.
json::value sorted(const json::value& v) {
  if (const auto* o = v.if_object()) {
    std::vector<std::string_view> keys;
    for (const auto& kv : *o) keys.push_back(kv.key());
    std::sort(keys.begin(), keys.end());
    json::object out;
    for (const auto k : keys) out[k] = sorted(o->at(k));
    return out;
  }
  if (const auto* a = v.if_array()) {
    json::array out;
    for (const auto& el : *a) out.push_back(sorted(el));
    return out;
  }
  return v;
}

}  // namespace

std::string canonical_json(const suite_def& s) {
  json::array cases;
  for (const auto& c : s.cases) cases.push_back(case_json(c));
  const json::object o{{"id", s.id},
                       {"title", s.title},
                       {"description", s.description},
                       {"profiles", json::array(s.profiles.begin(), s.profiles.end())},
                       {"environments", json::array(s.environments.begin(), s.environments.end())},
                       {"cases", cases}};
  return json::serialize(sorted(o));
}

std::string definition_hash(const suite_def& s) {
  return sha256_hex(canonical_json(s));
}

}  // namespace tether::e2e
