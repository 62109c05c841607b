#include "api/work_views.h"

#include <boost/json.hpp>

#include "api/views.h"

namespace tether::api {

namespace json = boost::json;

namespace {
template <class T>
json::value or_null(const std::optional<T>& v) {
  if (!v) return nullptr;
  if constexpr (std::is_same_v<T, time_ms>)
    return *v;
  else
    return json::value(v->str());
}
json::array setup_json(const std::vector<std::string>& setup) {
  json::array a;
  for (const auto& c : setup) a.emplace_back(c);
  return a;
}
}  // namespace

json::object preparation_view(const store::preparation_row& p) {
  json::object o = p.record;
  o["seq"] = p.seq.value;
  o["at"] = p.at;
  return o;
}

json::object project_view(const store::project_row& p) {
  return {{"id", p.id.str()},
          {"name", p.name},
          {"description", p.description},
          {"repositories", model::to_json(p.repositories)},
          {"setup", setup_json(p.setup)},
          {"revision", p.revision},
          {"created_at", p.created_at},
          {"updated_at", p.updated_at}};
}

json::object task_view(const store::task_row& t) {
  return {{"id", t.id.str()},
          {"session", t.session.str()},
          {"title", t.title},
          {"description", t.description},
          {"status", model::to_string(t.status)},
          {"mode", model::to_string(t.mode)},
          {"priority", t.priority},
          {"project_id", or_null(t.project)},
          {"parent_task_id", or_null(t.parent)},
          {"profile", t.profile.empty() ? std::string("default") : t.profile},
          {"created_by", t.created_by},
          {"accepted_plan", or_null(t.accepted_plan)},
          {"created_at", t.created_at},
          {"updated_at", t.updated_at},
          {"started_at", or_null(t.started_at)},
          {"completed_at", or_null(t.completed_at)},
          {"cancelled_at", or_null(t.cancelled_at)}};
}

json::object revision_view(const store::revision_row& r) {
  return {{"id", r.id.str()},
          {"task_id", r.task.str()},
          {"document", r.document},
          {"number", r.number},
          {"base_revision_id", or_null(r.base)},
          {"content", r.content},
          {"author", r.author},
          {"accepted", r.accepted},
          {"seq", r.seq.value},
          {"created_at", r.created_at}};
}

json::object comment_view(const store::comment_row& c) {
  return {{"id", c.id.str()},           {"task_id", c.task.str()}, {"author", c.author},
          {"text", c.text},             {"seq", c.seq.value},      {"created_at", c.created_at}};
}

json::object task_detail_view(const work::task_detail& d) {
  json::array plan;
  for (const auto& r : d.plan) plan.push_back(revision_view(r));
  json::array interactions;
  for (const auto& i : d.open_interactions) interactions.push_back(interaction_view(i));
  json::array runs;
  for (const auto& x : d.runs) runs.push_back(execution_view(x));
  json::array comments;
  for (const auto& c : d.comments) comments.push_back(comment_view(c));
  json::array preparations;
  for (const auto& p : d.preparations) preparations.push_back(preparation_view(p));
  return {{"task", task_view(d.task)},          {"plan", std::move(plan)},
          {"interactions", std::move(interactions)}, {"runs", std::move(runs)},
          {"comments", std::move(comments)},    {"preparations", std::move(preparations)},
          {"usage", usage_view(d.usage)}};
}

}  // namespace tether::api
