// The work layer's matchers (matchers.h): tasks, plans, projects, workspaces
// and the freshness decisions.
#include <algorithm>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "e2e/matchers.h"
#include "e2e/matchers_internal.h"

namespace tether::e2e {

namespace {

namespace json = boost::json;

using detail::begin;
using detail::joined;
using detail::verdict;

std::string text_of(const json::value& v, std::string_view key) {
  const auto* o = v.if_object();
  const auto* p = o != nullptr ? o->if_contains(key) : nullptr;
  return p != nullptr && p->is_string() ? std::string(p->as_string()) : std::string();
}

std::vector<std::string> reasons_of(const json::value& prep) {
  std::vector<std::string> out;
  for (const auto* side : {"session", "workspace"}) {
    const auto* o = prep.if_object();
    const auto* s = o != nullptr ? o->if_contains(side) : nullptr;
    const auto* r = s != nullptr && s->is_object() ? s->as_object().if_contains("reasons") : nullptr;
    if (r != nullptr && r->is_array())
      for (const auto& x : r->as_array())
        if (x.is_string()) out.emplace_back(x.as_string());
  }
  return out;
}

matcher_result task_status(const matcher_spec& spec, const observation& o) {
  auto r = begin(spec, fmt::format("task_status {} of {}", spec.status, spec.of), spec.status);
  if (!o.work.has_task) {
    r.actual = "no task";
    return verdict(r, false, "the cell has no task");
  }
  if (spec.of == "task") {
    r.actual = o.work.task_status;
    return verdict(r, o.work.task_status == spec.status,
                   fmt::format("the task is {}, not {}", o.work.task_status, spec.status));
  }
  r.actual = joined(o.work.child_statuses);
  const bool all = !o.work.child_statuses.empty() &&
                   std::all_of(o.work.child_statuses.begin(), o.work.child_statuses.end(),
                               [&](const std::string& s) { return s == spec.status; });
  return verdict(r, all,
                 o.work.child_statuses.empty() ? "the task has no child task"
                                               : fmt::format("the child tasks are {}, not all {}", r.actual, spec.status));
}

matcher_result counted(const matcher_spec& spec, std::int64_t seen, std::string_view what) {
  auto r = begin(spec, fmt::format("{} {}", to_string(spec.kind), spec.count), std::to_string(spec.count));
  r.actual = seen < 0 ? std::string("(not read)") : std::to_string(seen);
  return verdict(r, seen == spec.count, fmt::format("{} {} were observed, not {}", r.actual, what, spec.count));
}

matcher_result workspace_repos(const matcher_spec& spec, const observation& o) {
  auto r = begin(spec, "workspace_repos " + joined(spec.texts) + " of " + spec.of, joined(spec.texts));
  const auto& branches = spec.of == "children" ? o.work.child_repo_branches : o.work.repo_branches;
  std::vector<std::string> seen;
  std::string why;
  for (const auto& want : spec.texts) {
    const auto at = want.find('@');
    const auto name = want.substr(0, at);
    const auto branch = at == std::string::npos ? std::string() : want.substr(at + 1);
    const auto it = branches.find(name);
    if (it == branches.end() || it->second.empty()) {
      seen.push_back(name + " missing");
      if (why.empty()) why = "the workspace has no checkout " + name;
      continue;
    }
    seen.push_back(name + "@" + it->second);
    if (!branch.empty() && it->second != branch && why.empty())
      why = fmt::format("{} is on {}, not {}", name, it->second, branch);
  }
  r.actual = joined(seen);
  return verdict(r, why.empty(), why);
}

matcher_result freshness_decision(const matcher_spec& spec, const observation& o) {
  const std::string which = spec.run > 0 ? fmt::format("run {}", spec.run) : std::string("the last run");
  const std::string expected = fmt::format("session {}, workspace {}, reasons {}", spec.session, spec.workspace,
                                           joined(spec.texts));
  auto r = begin(spec, "freshness_decision before " + which, expected);
  const auto& preps = o.work.preparations;
  const std::size_t n = preps.size();
  if (n == 0 || (spec.run > 0 && static_cast<std::size_t>(spec.run) > n)) {
    r.actual = fmt::format("{} preparation(s)", n);
    return verdict(r, false, fmt::format("no preparation before {} was observed", which));
  }
  const auto& p = preps[spec.run > 0 ? static_cast<std::size_t>(spec.run) - 1 : n - 1];
  const auto session = text_of(p.as_object().contains("session") ? p.at("session") : json::value(), "decision");
  const auto workspace = text_of(p.as_object().contains("workspace") ? p.at("workspace") : json::value(), "decision");
  const auto reasons = reasons_of(p);
  r.actual = fmt::format("session {}, workspace {}, reasons {}", session, workspace, joined(reasons));
  return verdict(r, session == spec.session && workspace == spec.workspace && reasons == spec.texts,
                 fmt::format("the decision was {}", r.actual));
}

matcher_result context_absent(const matcher_spec& spec, const observation& o) {
  auto r = begin(spec, fmt::format("context_absent \"{}\"", spec.text), "no request after the approval carries it");
  if (!o.work.requests_after_approval) {
    r.actual = "(no approval or no request log)";
    return verdict(r, false, "no plan approval and the scripted model's requests after it were observed");
  }
  const auto& reqs = *o.work.requests_after_approval;
  std::size_t carrying = 0;
  for (const auto& text : reqs) carrying += text.find(spec.text) != std::string::npos ? 1 : 0;
  r.actual = fmt::format("{} of {} request(s) carry it", carrying, reqs.size());
  if (reqs.empty()) return verdict(r, false, "no model request was made after the approval");
  return verdict(r, carrying == 0, fmt::format("{} request(s) after the approval still carry it", carrying));
}

}  // namespace

matcher_result judge_work(const matcher_spec& spec, const observation& o) {
  switch (spec.kind) {
    case matcher_kind::task_status:
      return task_status(spec, o);
    case matcher_kind::plan_revisions:
      return counted(spec, o.work.has_task ? o.work.plan_revisions : -1, "plan revision(s)");
    case matcher_kind::project_count:
      return counted(spec, o.work.project_count, "project(s)");
    case matcher_kind::workspace_repos:
      return workspace_repos(spec, o);
    case matcher_kind::workspace_files:
      return counted(spec, o.work.workspace_files, "workspace file(s)");
    case matcher_kind::freshness_decision:
      return freshness_decision(spec, o);
    default:
      return context_absent(spec, o);
  }
}

std::vector<std::string> repos_to_check(const std::vector<matcher_spec>& matchers) {
  std::vector<std::string> out;
  for (const auto& m : matchers) {
    if (m.kind != matcher_kind::workspace_repos) continue;
    for (const auto& t : m.texts) {
      auto name = t.substr(0, t.find('@'));
      if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(std::move(name));
    }
  }
  return out;
}

}  // namespace tether::e2e
