// The work layer's steps and observations in a cell (cell_env.h): projects
// over local bare repositories the cell makes, a task whose session is the
// cell's, plan decisions, and what the task, its children, its workspace and
// its preparations look like at the end.
#include <algorithm>
#include <fstream>
#include <thread>

#include <boost/json.hpp>

#include "e2e/run/cell_env.h"
#include "util/clock.h"

namespace tether::e2e {

namespace json = boost::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

error api_failed(const std::string& what, const error& e) { return make_error(e2e_errc::api, what + ": " + e.message); }

std::string text_at(const json::value& v, std::string_view key) {
  const auto* o = v.if_object();
  const auto* p = o != nullptr ? o->if_contains(key) : nullptr;
  return p != nullptr && p->is_string() ? std::string(p->as_string()) : std::string();
}

const json::value& member(const json::value& v, std::string_view key) {
  static const json::value none;
  const auto* o = v.if_object();
  const auto* p = o != nullptr ? o->if_contains(key) : nullptr;
  return p != nullptr ? *p : none;
}

// git with argv (no shell), in `cwd`; its output goes to the cell's git.log.
result<void> git(cell_env& env, const std::vector<std::string>& args) {
  std::vector<std::string> argv{"/usr/bin/git"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto p =
      child_process::start(argv, env.dir / "git.log",
                           {{"GIT_TERMINAL_PROMPT", "0"}, {"GIT_CONFIG_NOSYSTEM", "1"}, {"HOME", env.dir.string()}});
  if (!p) return p.error();
  const auto status = (*p)->wait(60s);
  if (status != 0)
    return make_error(e2e_errc::infrastructure,
                      "git " + args.front() + " failed (see git.log in the cell's directory)");
  return ok();
}

// A bare repository DIR/repos/NAME.git whose `branch` holds README = content.
result<std::string> make_repository(cell_env& env, const repo_spec& r) {
  const auto root = env.dir / "repos";
  const auto src = root / ("src-" + r.name);
  const auto bare = root / (r.name + ".git");
  std::error_code ec;
  if (fs::exists(bare, ec)) return bare.string();  // made by an earlier step of this cell
  fs::create_directories(src, ec);
  if (ec) return make_error(e2e_errc::io, "cannot make " + src.string() + ": " + ec.message());
  TETHER_TRY(git(env, {"init", "-q", "-b", r.branch, src.string()}));
  std::ofstream(src / "README", std::ios::binary) << (r.content.empty() ? r.name : r.content);
  TETHER_TRY(git(env, {"-C", src.string(), "add", "README"}));
  TETHER_TRY(git(env, {"-C", src.string(), "-c", "user.name=tether-e2e", "-c", "user.email=e2e@tether.invalid",
                       "commit", "-q", "-m", "init"}));
  TETHER_TRY(git(env, {"clone", "-q", "--bare", src.string(), bare.string()}));
  return bare.string();
}

result<json::array> repositories_of(cell_env& env, const step& s) {
  json::array repos;
  for (const auto& r : s.repositories) {
    auto url = make_repository(env, r);
    if (!url) return url.error();
    repos.push_back(json::object{{"url", *url}, {"name", r.name}, {"branch", r.branch}});
  }
  return repos;
}

result<void> create_repositories(cell_env& env, const step& s) {
  for (const auto& r : s.repositories) TETHER_TRY(make_repository(env, r));
  return ok();
}

// A graceful restart with the profile's model or instructions changed.
result<void> reconfigure(cell_env& env, const step& s) {
  if (s.model) env.model_override = s.model;
  if (s.instructions) env.instructions = s.instructions;
  if (!stop_server(env, restart_mode::graceful))
    return make_error(e2e_errc::api, "reconfigure: the server did not exit within 10 s of SIGTERM");
  TETHER_TRY(write_config(env));
  return start_server(env);
}

result<void> create_project(cell_env& env, const step& s) {
  auto repos = repositories_of(env, s);
  if (!repos) return repos.error();
  json::object body{{"name", s.name}, {"repositories", std::move(*repos)}};
  if (s.has_setup) body["setup"] = json::array(s.setup.begin(), s.setup.end());
  auto r = env.api->post("/v1/projects", body);
  if (!r) return api_failed("POST /v1/projects", r.error());
  env.projects[s.name] = text_at(member(*r, "project"), "id");
  return ok();
}

result<void> update_project(cell_env& env, const step& s) {
  const auto it = env.projects.find(s.name);
  if (it == env.projects.end())
    return make_error(e2e_errc::invalid_definition, "update_project: no project \"" + s.name + "\" was created");
  json::object body;
  if (s.has_repositories) {
    auto repos = repositories_of(env, s);
    if (!repos) return repos.error();
    body["repositories"] = std::move(*repos);
  }
  if (s.has_setup) body["setup"] = json::array(s.setup.begin(), s.setup.end());
  auto r = env.api->raw("PATCH", "/v1/projects/" + it->second, json::serialize(body), {});
  if (!r) return api_failed("PATCH /v1/projects", r.error());
  if (r->status != 200)
    return make_error(e2e_errc::api,
                      "PATCH /v1/projects/" + it->second + ": " + std::to_string(r->status) + " " + r->body);
  return ok();
}

result<void> create_task(cell_env& env, const step& s) {
  json::object body{{"title", s.title.empty() ? env.values.cell : s.title}, {"mode", s.work_mode}};
  if (!s.project.empty()) {
    const auto it = env.projects.find(s.project);
    if (it == env.projects.end())
      return make_error(e2e_errc::invalid_definition, "create_task: no project \"" + s.project + "\" was created");
    body["project_id"] = it->second;
  }
  sent_input in;
  if (!s.text.empty()) {
    body["message"] = s.text;
    in.text = s.text;
    in.sent_unix_ms = real_clock().now();
  }
  auto r = env.api->post("/v1/tasks", body);
  if (!r) return api_failed("POST /v1/tasks", r.error());
  if (const auto why = text_at(*r, "message_error"); !why.empty())
    return make_error(e2e_errc::api, "POST /v1/tasks: the first message was not admitted: " + why);
  const auto& task = member(*r, "task");
  env.task = text_at(task, "id");
  env.session = text_at(task, "session");
  if (env.task.empty() || env.session.empty()) return make_error(e2e_errc::api, "POST /v1/tasks: no task id");
  auto session = env.api->get("/v1/sessions/" + env.session);
  if (!session) return api_failed("GET the task's session", session.error());
  env.workspace = text_at(member(*session, "session"), "workspace");  // the file matchers read the task's
  if (!s.text.empty()) {
    in.admitted_steady_us = steady_us_now();
    in.id = text_at(member(*r, "input"), "id");
    env.inputs.push_back(std::move(in));
  }
  return ok();
}

result<void> send_message(cell_env& env, const step& s) {
  sent_input in;
  in.text = s.text;
  in.sent_unix_ms = real_clock().now();
  const std::string target = "/v1/tasks/" + env.task + "/messages";
  auto r = env.api->post(target, json::object{{"text", s.text}, {"delivery", s.delivery}});
  if (!r) return api_failed("POST " + target, r.error());
  in.admitted_steady_us = steady_us_now();
  in.id = text_at(member(*r, "input"), "id");
  env.inputs.push_back(std::move(in));
  return ok();
}

result<void> decide(cell_env& env, const step& s) {
  const bool accept = s.kind == step_kind::approve;
  if (accept) {
    auto requests = mock_requests(env);  // a scripted model: what came before the approval
    if (requests) env.requests_at_approval = requests->size();
  }
  json::object body;
  if (!accept) body["reason"] = s.reason;
  const std::string target = "/v1/tasks/" + env.task + (accept ? "/approve" : "/reject");
  auto r = env.api->post(target, body);
  if (!r) return api_failed("POST " + target, r.error());
  return ok();
}

result<json::value> task_detail(cell_env& env) {
  auto r = env.api->get("/v1/tasks/" + env.task);
  if (!r) return api_failed("GET /v1/tasks/" + env.task, r.error());
  return *r;
}

result<json::array> child_tasks(cell_env& env) {
  auto r = env.api->get("/v1/tasks?parent_task_id=" + env.task);
  if (!r) return api_failed("GET the child tasks", r.error());
  const auto& list = member(*r, "tasks");
  return list.is_array() ? list.as_array() : json::array();
}

result<std::vector<std::string>> child_statuses(cell_env& env) {
  auto children = child_tasks(env);
  if (!children) return children.error();
  std::vector<std::string> out;
  for (const auto& t : *children) out.push_back(text_at(t, "status"));
  return out;
}

result<void> wait_task(cell_env& env, const step& s) {
  const auto deadline = std::chrono::steady_clock::now() + s.timeout;
  std::string seen;
  for (;;) {
    if (env.cancelled()) return make_error(e2e_errc::interrupted, "interrupted");
    bool reached = false;
    if (s.target == wait_target::task) {
      auto d = task_detail(env);
      if (!d) return d.error();
      seen = text_at(member(*d, "task"), "status");
      reached = seen == s.status;
    } else {
      auto children = child_statuses(env);
      if (!children) return children.error();
      seen.clear();
      for (const auto& c : *children) seen += (seen.empty() ? "" : ", ") + c;
      reached = !children->empty() &&
                std::all_of(children->begin(), children->end(), [&](const std::string& c) { return c == s.status; });
    }
    if (reached) return ok();
    if (std::chrono::steady_clock::now() >= deadline)
      return make_error(e2e_errc::infrastructure, "wait for " + std::string(to_string(s.target)) + " " + s.status +
                                                      ": not reached within " + std::to_string(s.timeout.count()) +
                                                      " ms (" + (seen.empty() ? std::string("none") : seen) + ")");
    std::this_thread::sleep_for(50ms);
  }
}

// The branch checked out in `dir` ("" when it is no git checkout).
std::string checked_out_branch(const fs::path& dir) {
  std::ifstream head(dir / ".git" / "HEAD");
  std::string line;
  std::getline(head, line);
  constexpr std::string_view ref = "ref: refs/heads/";
  return line.starts_with(ref) ? line.substr(ref.size()) : std::string();
}

}  // namespace

bool is_work_step(const cell_env& env, const step& s) {
  switch (s.kind) {
    case step_kind::create_project:
    case step_kind::create_task:
    case step_kind::approve:
    case step_kind::reject:
    case step_kind::update_project:
    case step_kind::create_repositories:
    case step_kind::reconfigure:
      return true;
    case step_kind::send:
      return !env.task.empty();
    case step_kind::wait:
      return s.target == wait_target::task || s.target == wait_target::children;
    default:
      return false;
  }
}

result<void> run_work_step(cell_env& env, const step& s) {
  if (s.kind == step_kind::create_project) return create_project(env, s);
  if (s.kind == step_kind::create_repositories) return create_repositories(env, s);
  if (s.kind == step_kind::reconfigure) return reconfigure(env, s);
  if (s.kind == step_kind::update_project) return update_project(env, s);
  if (s.kind == step_kind::create_task) return create_task(env, s);
  if (env.task.empty())
    return make_error(e2e_errc::invalid_definition, std::string(to_string(s.kind)) + " before create_task");
  if (s.kind == step_kind::send) return send_message(env, s);
  if (s.kind == step_kind::wait) return wait_task(env, s);
  return decide(env, s);
}

result<std::vector<std::string>> mock_requests(cell_env& env) {
  if (env.mock_url.empty()) return make_error(e2e_errc::infrastructure, "no scripted model");
  client::client_options o;
  o.server = env.mock_url;
  client::api_client model(o);
  auto r = model.get("/_mock/requests");
  if (!r) return make_error(e2e_errc::infrastructure, "the scripted model's requests: " + r.error().message);
  std::vector<std::string> out;
  const auto& list = member(*r, "requests");
  if (list.is_array())
    for (const auto& req : list.as_array()) out.push_back(json::serialize(member(req, "body")));
  return out;
}

result<void> observe_work(cell_env& env, const case_def& c, observation& o) {
  auto projects = env.api->get("/v1/projects");
  if (!projects) return api_failed("GET /v1/projects", projects.error());
  if (const auto& list = member(*projects, "projects"); list.is_array())
    o.work.project_count = static_cast<std::int64_t>(list.as_array().size());
  if (env.task.empty()) return ok();
  auto d = task_detail(env);
  if (!d) return d.error();
  o.work.has_task = true;
  o.work.task_status = text_at(member(*d, "task"), "status");
  if (const auto& plan = member(*d, "plan"); plan.is_array())
    o.work.plan_revisions = static_cast<std::int64_t>(plan.as_array().size());
  if (const auto& preps = member(*d, "preparations"); preps.is_array()) o.work.preparations = preps.as_array();
  auto children = child_tasks(env);
  if (!children) return children.error();
  for (const auto& t : *children) o.work.child_statuses.push_back(text_at(t, "status"));
  fs::path child_workspace;
  if (!children->empty()) {
    auto s = env.api->get("/v1/sessions/" + text_at(children->front(), "session"));
    if (s) child_workspace = text_at(member(*s, "session"), "workspace");
  }
  std::int64_t files = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(env.workspace, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_directory() && it->path().filename() == ".git") {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file()) ++files;
  }
  o.work.workspace_files = ec ? -1 : files;
  for (const auto& name : repos_to_check(c.matchers)) {
    o.work.repo_branches[name] = checked_out_branch(env.workspace / name);
    if (!child_workspace.empty()) o.work.child_repo_branches[name] = checked_out_branch(child_workspace / name);
  }
  if (env.requests_at_approval) {
    if (auto requests = mock_requests(env)) {
      std::vector<std::string> after;
      for (std::size_t i = *env.requests_at_approval; i < requests->size(); ++i) after.push_back((*requests)[i]);
      o.work.requests_after_approval = std::move(after);
    }
  }
  return ok();
}

}  // namespace tether::e2e
