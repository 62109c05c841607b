// work_service::prepare — the freshness decision and the workspace before a
// task's run (work/service.h, "Before a run").
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include "util/errors.h"
#include "work/errors.h"
#include "work/fingerprint.h"
#include "work/service.h"
#include "work/workspace.h"

namespace tether::work {

namespace {

namespace json = boost::json;

// A fingerprint set as the record stores it ({category: fingerprint}).
std::optional<fingerprints> stored_set(const json::object& record, std::string_view side) {
  const auto* part = record.if_contains(side);
  const auto* now = part != nullptr && part->is_object() ? part->as_object().if_contains("now") : nullptr;
  if (now == nullptr || !now->is_object()) return std::nullopt;
  fingerprints out;
  for (const auto& kv : now->as_object())
    if (kv.value().is_string()) out.emplace(std::string(kv.key()), std::string(kv.value().as_string()));
  return out;
}

json::object names_present(const std::vector<std::string>& env) {
  json::object o;
  for (const auto& e : env) o[e.substr(0, e.find('='))] = true;
  return o;
}

}  // namespace

task<result<std::vector<store::preparation_row>>> work_service::preparations(task_id id) {
  co_return co_await store_.list_preparations(std::move(id));
}

task<result<json::object>> work_service::prepare(task_id id) {
  auto t = co_await task_row(id);
  if (!t) co_return t.error();
  auto session = co_await store_.get_session(t->session);
  if (!session) co_return session.error();
  std::optional<store::project_row> project;
  if (t->project) {
    auto p = co_await store_.get_project(*t->project);
    if (!p) co_return p.error();
    project = std::move(*p);
  }

  // What this run is made with, category by category.
  fingerprints session_now;
  if (options_.profile_config)
    for (const auto& [cat, value] : options_.profile_config(t->profile))
      session_now[cat] = fingerprint(value, {.presence_only = cat == category::environment});
  session_now[std::string(category::task_overrides)] = fingerprint(json::object{{"mode", model::to_string(t->mode)}});
  const json::value project_json = project ? json::value(project->id.str()) : json::value(nullptr);
  session_now[std::string(category::workspace_config)] =
      fingerprint(json::object{{"workspace", session->workspace}, {"project", project_json}});
  fingerprints workspace_now;
  workspace_now[std::string(category::mode)] = fingerprint(json::object{{"environment", "local"}});
  workspace_now[std::string(category::project_workspace)] = fingerprint(json::object{{"project", project_json}});
  workspace_now[std::string(category::strategy)] = fingerprint(json::object{{"strategy", "clone"}});
  workspace_now[std::string(category::repositories)] =
      fingerprint(project ? json::value(model::to_json(project->repositories)) : json::value(json::array()));
  json::array setup;
  if (project)
    for (const auto& c : project->setup) setup.emplace_back(c);
  workspace_now[std::string(category::lifecycle_commands)] = fingerprint(setup);
  workspace_now[std::string(category::environment)] =
      fingerprint(names_present(options_.command_env), {.presence_only = true});

  // What the last run was made with.
  auto earlier = co_await store_.list_preparations(id);
  if (!earlier) co_return earlier.error();
  std::optional<fingerprints> session_before;
  std::optional<fingerprints> workspace_before;
  if (!earlier->empty()) {
    session_before = stored_set(earlier->back().record, "session");
    workspace_before = stored_set(earlier->back().record, "workspace");
  }
  const auto s = decide_session(session_before, session_now);
  const auto w = decide_workspace(workspace_before, workspace_now);

  // The workspace, on the blocking executor (git and the setup commands block).
  json::array steps;
  if (project) {
    workspace_spec spec;
    for (const auto& r : project->repositories) spec.repositories.push_back({r.name, r.url, r.branch});
    spec.setup = project->setup;
    spec.env = options_.command_env;
    auto work = [spec = std::move(spec), dir = std::filesystem::path(session->workspace),
                 d = w.decision]() -> boost::asio::awaitable<result<workspace_report>> {
      co_return prepare_workspace(spec, dir, d);
    };
    // Named before the co_await (g++ 12); runs there and resumes here.
    auto ex = options_.blocking ? options_.blocking : co_await boost::asio::this_coro::executor;
    auto report = co_await boost::asio::co_spawn(ex, std::move(work), boost::asio::use_awaitable);
    if (!report) co_return make_error(util_errc::invalid_argument, "the workspace of " + id.str() +
                                                                        " cannot be prepared: " + report.error().message);
    for (auto& step : report->steps) steps.emplace_back(std::move(step));
  }
  if (s.decision == session_decision::reset) TETHER_CO_TRY(co_await sessions_.reset(t->session));

  json::value record = to_json(s, session_before, session_now, w, workspace_before, workspace_now);
  json::object out = std::move(record.as_object());
  out["steps"] = std::move(steps);
  // The agent session the run starts from (an agent program's, kept across
  // runs until a reset; null for the native runtime or after a reset): the
  // next run's preparation shows the one this run left.
  json::value agent = nullptr;
  if (session->binding && s.decision != session_decision::reset)
    agent = json::object{{"runtime", session->binding->runtime},
                         {"external_session_id", session->binding->external_session_id}};
  out["agent_session"] = std::move(agent);
  auto append = store::single_event(t->session, model::task_prepared{out});
  auto written = co_await store_.append(std::move(append));
  if (!written) co_return written.error();
  co_return out;
}

}  // namespace tether::work
