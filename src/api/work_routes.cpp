#include "api/work_routes.h"

#include <algorithm>
#include <type_traits>

#include <boost/json.hpp>

#include "api/body.h"
#include "api/errors.h"
#include "api/views.h"
#include "api/work_views.h"
#include "api/workspace.h"
#include "store/errors.h"

namespace tether::api {

namespace json = boost::json;
template <class T>
using task = boost::asio::awaitable<T>;

namespace {

error bad(std::string msg) { return {api_errc::bad_request, std::move(msg)}; }

// The body's object with only `known` fields, or why not.
result<json::object> body_of(const std::string& body, std::span<const std::string_view> known) {
  if (body.empty()) return json::object();
  auto o = parse_body(body);
  if (!o) return o.error();
  if (auto r = only_fields(*o, known); !r) return r.error();
  return o;
}

template <class Id>
result<Id> path_id(std::string_view text, std::string_view what) {
  auto id = Id::parse(text);
  if (!id) return make_error(store::store_errc::not_found, "no " + std::string(what) + " " + std::string(text));
  return id;
}

template <class Id>
result<std::optional<Id>> id_field(const json::object& o, std::string_view name) {
  auto s = string_field(o, name);
  if (!s) return s.error();
  if (!*s) return std::optional<Id>();
  auto id = Id::parse(**s);
  if (!id) return bad("field '" + std::string(name) + "': " + id.error().message);
  return std::optional<Id>(*id);
}

result<std::optional<std::int64_t>> int_field(const json::object& o, std::string_view name) {
  const auto* v = o.if_contains(name);
  if (v == nullptr || v->is_null()) return std::optional<std::int64_t>();
  if (v->is_int64()) return std::optional<std::int64_t>(v->as_int64());
  if (v->is_uint64() && v->as_uint64() <= static_cast<std::uint64_t>(INT64_MAX))
    return std::optional<std::int64_t>(static_cast<std::int64_t>(v->as_uint64()));
  return bad("field '" + std::string(name) + "' must be an integer");
}

template <class Enum>
result<std::optional<Enum>> enum_field(const json::object& o, std::string_view name,
                                       std::optional<Enum> (*parse)(std::string_view), std::string_view allowed) {
  auto s = string_field(o, name);
  if (!s) return s.error();
  if (!*s) return std::optional<Enum>();
  auto v = parse(**s);
  if (!v) return bad("field '" + std::string(name) + "' must be one of " + std::string(allowed));
  return std::optional<Enum>(*v);
}

constexpr std::string_view statuses = "backlog, todo, in_progress, in_review, done, blocked, cancelled";
constexpr std::string_view modes = "standard, ask, planning";

// setup: the lifecycle commands, an array of strings.
result<std::optional<std::vector<std::string>>> setup_field(const json::object& o) {
  const auto* v = o.if_contains("setup");
  if (v == nullptr || v->is_null()) return std::optional<std::vector<std::string>>();
  if (!v->is_array()) return bad("field 'setup' must be an array of commands");
  std::vector<std::string> out;
  for (const auto& c : v->as_array()) {
    if (!c.is_string()) return bad("field 'setup' must be an array of commands (strings)");
    out.emplace_back(c.as_string());
  }
  return std::optional<std::vector<std::string>>(std::move(out));
}

result<std::optional<std::vector<model::project_repository>>> repos_field(const json::object& o) {
  const auto* v = o.if_contains("repositories");
  if (v == nullptr || v->is_null()) return std::optional<std::vector<model::project_repository>>();
  auto repos = model::repositories_from_json(*v);
  if (!repos) return bad(repos.error().message);
  return std::optional<std::vector<model::project_repository>>(std::move(*repos));
}

// ---- projects ----

task<http_reply> create_project(const handler_context* ctx, std::string body) {
  auto o = body_of(body, create_project_fields);
  if (!o) co_return error_reply(o.error());
  work::project_request req;
  auto id = string_field(*o, "id");
  auto name = string_field(*o, "name");
  auto description = string_field(*o, "description");
  auto repos = repos_field(*o);
  if (!id || !name || !description) co_return error_reply((!id ? id : !name ? name : description).error());
  if (!repos) co_return error_reply(repos.error());
  if (!*name) co_return error_reply(bad("field 'name' is required"));
  if (!*repos) co_return error_reply(bad("field 'repositories' is required"));
  req.id = *id;
  req.name = std::move(**name);
  req.description = description->value_or("");
  req.repositories = std::move(**repos);
  auto setup = setup_field(*o);
  if (!setup) co_return error_reply(setup.error());
  req.setup = setup->value_or(std::vector<std::string>{});
  auto made = co_await ctx->work->create_project(std::move(req));
  if (!made) co_return error_reply(made.error());
  co_return json_reply(201, json::object{{"project", project_view(*made)}});
}

task<http_reply> update_project(const handler_context* ctx, project_id id, std::string body) {
  auto o = body_of(body, update_project_fields);
  if (!o) co_return error_reply(o.error());
  store::project_patch patch;
  patch.id = std::move(id);
  auto name = string_field(*o, "name");
  auto description = string_field(*o, "description");
  auto repos = repos_field(*o);
  auto revision = int_field(*o, "revision");
  if (!name || !description) co_return error_reply((!name ? name : description).error());
  if (!repos) co_return error_reply(repos.error());
  if (!revision) co_return error_reply(revision.error());
  patch.name = std::move(*name);
  patch.description = std::move(*description);
  patch.repositories = std::move(*repos);
  patch.expected_revision = *revision;
  auto setup = setup_field(*o);
  if (!setup) co_return error_reply(setup.error());
  patch.setup = std::move(*setup);
  auto updated = co_await ctx->work->update_project(std::move(patch));
  if (!updated) co_return error_reply(updated.error());
  co_return json_reply(200, json::object{{"project", project_view(*updated)}});
}

// ---- tasks ----

task<http_reply> create_task(const handler_context* ctx, std::string body) {
  auto o = body_of(body, create_task_fields);
  if (!o) co_return error_reply(o.error());
  work::task_request req;
  for (auto [name, out] : {std::pair{"title", &req.title}, std::pair{"description", &req.description},
                           std::pair{"profile", &req.profile}, std::pair{"workspace", &req.workspace},
                           std::pair{"message", &req.message}}) {
    auto f = string_field(*o, name);
    if (!f) co_return error_reply(f.error());
    *out = f->value_or("");
  }
  if (req.title.empty()) co_return error_reply(bad("field 'title' is required"));
  auto id = string_field(*o, "id");
  auto status = enum_field(*o, "status", model::parse_task_status, statuses);
  auto mode = enum_field(*o, "mode", model::parse_work_mode, modes);
  auto priority = int_field(*o, "priority");
  auto project = id_field<project_id>(*o, "project_id");
  auto parent = id_field<task_id>(*o, "parent_task_id");
  if (!id) co_return error_reply(id.error());
  if (!status) co_return error_reply(status.error());
  if (!mode) co_return error_reply(mode.error());
  if (!priority) co_return error_reply(priority.error());
  if (!project) co_return error_reply(project.error());
  if (!parent) co_return error_reply(parent.error());
  req.id = *id;
  req.status = status->value_or(model::task_status::todo);
  req.mode = mode->value_or(model::work_mode::standard);
  req.priority = priority->value_or(0);
  req.project = *project;
  req.parent = *parent;
  if (ctx->options.profile_problem) {
    if (auto problem = ctx->options.profile_problem(req.profile); !problem.empty())
      co_return error_reply(bad("field 'profile': " + problem));
  }
  if (!req.workspace.empty()) {
    auto resolved = resolve_workspace(req.workspace, ctx->options.workspace_roots, ctx->options.data_dir);
    if (!resolved) co_return error_reply(resolved.error());
    req.workspace = std::move(*resolved);
  }
  auto made = co_await ctx->work->create_task(std::move(req));
  if (!made) co_return error_reply(made.error());
  json::object out{{"task", task_view(made->task)}};
  if (made->first) out["input"] = input_view(made->first->input);
  if (made->first_error) out["message_error"] = made->first_error->message;
  co_return json_reply(201, out);
}

task<http_reply> list_tasks(const handler_context* ctx, std::string target) {
  store::task_filter f;
  auto limit = query_number(target, "limit");
  if (!limit) co_return error_reply(limit.error());
  f.limit = static_cast<std::size_t>(std::clamp<std::int64_t>(limit->value_or(100), 1, 1000));
  if (auto p = query_value(target, "project_id"); p && !p->empty()) {
    auto id = project_id::parse(*p);
    if (!id) co_return error_reply(bad("query parameter 'project_id' is not a project id"));
    f.project = *id;
  }
  if (auto p = query_value(target, "parent_task_id"); p && !p->empty()) {
    auto id = task_id::parse(*p);
    if (!id) co_return error_reply(bad("query parameter 'parent_task_id' is not a task id"));
    f.parent = *id;
  }
  if (auto s = query_value(target, "status"); s && !s->empty()) {
    auto status = model::parse_task_status(*s);
    if (!status) co_return error_reply(bad("query parameter 'status' must be one of " + std::string(statuses)));
    f.status = *status;
  }
  auto rows = co_await ctx->work->list_tasks(std::move(f));
  if (!rows) co_return error_reply(rows.error());
  json::array tasks;
  for (const auto& t : *rows) tasks.push_back(task_view(t));
  co_return json_reply(200, json::object{{"tasks", std::move(tasks)}});
}

task<http_reply> update_task(const handler_context* ctx, task_id id, std::string body) {
  auto o = body_of(body, update_task_fields);
  if (!o) co_return error_reply(o.error());
  work::task_patch patch;
  auto title = string_field(*o, "title");
  auto description = string_field(*o, "description");
  auto reason = string_field(*o, "reason");
  auto priority = int_field(*o, "priority");
  auto mode = enum_field(*o, "mode", model::parse_work_mode, modes);
  auto status = enum_field(*o, "status", model::parse_task_status, statuses);
  if (!title || !description || !reason) co_return error_reply((!title ? title : !description ? description : reason).error());
  if (!priority) co_return error_reply(priority.error());
  if (!mode) co_return error_reply(mode.error());
  if (!status) co_return error_reply(status.error());
  patch.title = std::move(*title);
  patch.description = std::move(*description);
  patch.reason = reason->value_or("");
  patch.priority = *priority;
  patch.mode = *mode;
  patch.status = *status;
  if (const auto* p = o->if_contains("project_id"); p != nullptr) {
    if (p->is_null()) {
      patch.project = project_id();  // cleared
    } else {
      auto pid = id_field<project_id>(*o, "project_id");
      if (!pid) co_return error_reply(pid.error());
      patch.project = **pid;
    }
  }
  auto updated = co_await ctx->work->update_task(std::move(id), std::move(patch));
  if (!updated) co_return error_reply(updated.error());
  co_return json_reply(200, json::object{{"task", task_view(*updated)}});
}

task<http_reply> send_message(const handler_context* ctx, task_id id, std::string body) {
  auto req = parse_input(body);
  if (!req) co_return error_reply(req.error());
  auto admitted = co_await ctx->work->send(std::move(id), std::move(*req));
  if (!admitted) co_return error_reply(admitted.error());
  const unsigned status = admitted->status == session::admit_status::admitted ? 202 : 200;
  co_return json_reply(status, json::object{{"input", input_view(admitted->input)}});
}

task<http_reply> add_comment(const handler_context* ctx, task_id id, std::string body) {
  auto o = body_of(body, create_comment_fields);
  if (!o) co_return error_reply(o.error());
  auto text = string_field(*o, "text");
  auto author = string_field(*o, "author");
  if (!text || !author) co_return error_reply((!text ? text : author).error());
  if (!*text) co_return error_reply(bad("field 'text' is required"));
  auto c = co_await ctx->work->comment(std::move(id), author->value_or("user"), std::move(**text));
  if (!c) co_return error_reply(c.error());
  co_return json_reply(201, json::object{{"comment", comment_view(*c)}});
}

task<http_reply> write_plan(const handler_context* ctx, task_id id, std::string body) {
  auto o = body_of(body, write_plan_fields);
  if (!o) co_return error_reply(o.error());
  auto content = string_field(*o, "content");
  if (!content) co_return error_reply(content.error());
  if (!*content) co_return error_reply(bad("field 'content' is required"));
  auto base = id_field<revision_id>(*o, "base_revision_id");
  if (!base) co_return error_reply(base.error());
  auto rev = co_await ctx->work->write_plan(std::move(id), std::move(**content), *base, "user");
  if (!rev) co_return error_reply(rev.error());
  co_return json_reply(201, json::object{{"revision", revision_view(*rev)}});
}

task<http_reply> plan(const handler_context* ctx, task_id id) {
  auto d = co_await ctx->work->describe(std::move(id));
  if (!d) co_return error_reply(d.error());
  json::array revisions;
  for (const auto& r : d->plan) revisions.push_back(revision_view(r));
  co_return json_reply(200, json::object{{"revisions", std::move(revisions)}});
}

task<http_reply> decide(const handler_context* ctx, task_id id, std::string body, bool accept) {
  work::decision d;
  d.accept = accept;
  if (!accept) {
    auto o = body_of(body, reject_fields);
    if (!o) co_return error_reply(o.error());
    auto reason = string_field(*o, "reason");
    if (!reason) co_return error_reply(reason.error());
    if (!*reason) co_return error_reply(bad("field 'reason' is required: say what to change"));
    d.reason = std::move(**reason);
  } else if (auto o = body_of(body, {}); !o) {
    co_return error_reply(o.error());
  }
  auto open = co_await ctx->work->open_confirmation(id);
  if (!open) co_return error_reply(open.error());
  if (!*open)
    co_return error_reply(make_error(api_errc::conflict, "task " + id.str() + " has no plan waiting for approval"));
  if (auto r = co_await ctx->work->decide((*open)->id, std::move(d)); !r) co_return error_reply(r.error());
  auto t = co_await ctx->work->describe(std::move(id));
  if (!t) co_return error_reply(t.error());
  co_return json_reply(200, json::object{{"task", task_view(t->task)}});
}

}  // namespace

task<http_reply> answer_confirmation(const handler_context* ctx, interaction_id id, json::object body) {
  if (auto r = only_fields(body, confirmation_answer_fields); !r) co_return error_reply(r.error());
  auto accepted = bool_field(body, "accepted");
  auto reason = string_field(body, "reason");
  if (!accepted) co_return error_reply(accepted.error());
  if (!reason) co_return error_reply(reason.error());
  if (!*accepted) co_return error_reply(bad("field 'accepted' is required for a confirmation"));
  work::decision d;
  d.accept = **accepted;
  d.reason = reason->value_or("");
  if (auto r = co_await ctx->work->decide(id, std::move(d)); !r) co_return error_reply(r.error());
  auto row = co_await ctx->store->get_interaction(id);
  if (!row) co_return error_reply(row.error());
  co_return json_reply(200, json::object{{"interaction", interaction_view(*row)}});
}

namespace work_routes {
namespace {

// The work routes answer 503 on a server without the work layer.
template <task<http_reply> (*fn)(route_call)>
task<http_reply> with_work(route_call c) {
  if (c.ctx->work == nullptr)
    co_return error_reply(make_error(api_errc::unavailable, "the work layer is not running on this server"));
  co_return co_await fn(std::move(c));
}

// A route of one project or task: its {id} parsed first (404).
template <class Id, task<http_reply> (*fn)(const handler_context*, Id, route_call)>
task<http_reply> of(route_call c) {
  auto id = path_id<Id>(c.params.at(0), std::is_same_v<Id, project_id> ? "project" : "task");
  if (!id) co_return error_reply(id.error());
  co_return co_await fn(c.ctx, std::move(*id), std::move(c));
}

task<http_reply> list_projects_of(route_call c) {
  auto limit = query_number(c.req.target, "limit");
  if (!limit) co_return error_reply(limit.error());
  auto rows = co_await c.ctx->work->list_projects(
      static_cast<std::size_t>(std::clamp<std::int64_t>(limit->value_or(100), 1, 1000)));
  if (!rows) co_return error_reply(rows.error());
  json::array list;
  for (const auto& p : *rows) list.push_back(project_view(p));
  co_return json_reply(200, json::object{{"projects", std::move(list)}});
}

task<http_reply> get_project_of(const handler_context* ctx, project_id id, route_call) {
  auto p = co_await ctx->work->get_project(id);
  if (!p) co_return error_reply(p.error());
  co_return json_reply(200, json::object{{"project", project_view(*p)}});
}

task<http_reply> get_task_of(const handler_context* ctx, task_id id, route_call) {
  auto d = co_await ctx->work->describe(id);
  if (!d) co_return error_reply(d.error());
  co_return json_reply(200, task_detail_view(*d));
}

task<http_reply> create_project_of(route_call c) { return api::create_project(c.ctx, std::move(c.req.body)); }
task<http_reply> create_task_of(route_call c) { return api::create_task(c.ctx, std::move(c.req.body)); }
task<http_reply> list_tasks_of(route_call c) { return api::list_tasks(c.ctx, std::move(c.req.target)); }

task<http_reply> update_project_of(const handler_context* ctx, project_id id, route_call c) {
  return api::update_project(ctx, id, std::move(c.req.body));
}
task<http_reply> update_task_of(const handler_context* ctx, task_id id, route_call c) {
  return api::update_task(ctx, id, std::move(c.req.body));
}
task<http_reply> send_message_of(const handler_context* ctx, task_id id, route_call c) {
  return api::send_message(ctx, id, std::move(c.req.body));
}
task<http_reply> add_comment_of(const handler_context* ctx, task_id id, route_call c) {
  return api::add_comment(ctx, id, std::move(c.req.body));
}
task<http_reply> plan_of(const handler_context* ctx, task_id id, route_call) { return api::plan(ctx, id); }
task<http_reply> write_plan_of(const handler_context* ctx, task_id id, route_call c) {
  return api::write_plan(ctx, id, std::move(c.req.body));
}
task<http_reply> approve_of(const handler_context* ctx, task_id id, route_call c) {
  return api::decide(ctx, id, std::move(c.req.body), true);
}
task<http_reply> reject_of(const handler_context* ctx, task_id id, route_call c) {
  return api::decide(ctx, id, std::move(c.req.body), false);
}

}  // namespace

reply create_project(route_call c) { return with_work<&create_project_of>(std::move(c)); }
reply list_projects(route_call c) { return with_work<&list_projects_of>(std::move(c)); }
reply get_project(route_call c) { return with_work<&of<project_id, &get_project_of>>(std::move(c)); }
reply update_project(route_call c) { return with_work<&of<project_id, &update_project_of>>(std::move(c)); }
reply create_task(route_call c) { return with_work<&create_task_of>(std::move(c)); }
reply list_tasks(route_call c) { return with_work<&list_tasks_of>(std::move(c)); }
reply get_task(route_call c) { return with_work<&of<task_id, &get_task_of>>(std::move(c)); }
reply update_task(route_call c) { return with_work<&of<task_id, &update_task_of>>(std::move(c)); }
reply send_message(route_call c) { return with_work<&of<task_id, &send_message_of>>(std::move(c)); }
reply add_comment(route_call c) { return with_work<&of<task_id, &add_comment_of>>(std::move(c)); }
reply plan(route_call c) { return with_work<&of<task_id, &plan_of>>(std::move(c)); }
reply write_plan(route_call c) { return with_work<&of<task_id, &write_plan_of>>(std::move(c)); }
reply approve(route_call c) { return with_work<&of<task_id, &approve_of>>(std::move(c)); }
reply reject(route_call c) { return with_work<&of<task_id, &reject_of>>(std::move(c)); }

}  // namespace work_routes

}  // namespace tether::api
