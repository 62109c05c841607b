#include "work/agent_tools.h"

#include <algorithm>
#include <array>

#include <boost/json.hpp>
#include <fmt/format.h>

namespace tether::work {

namespace {

namespace json = boost::json;
using outcome = work_tool_outcome;

outcome failed(std::string why) { return {outcome::status::failed, std::move(why), {}, {}}; }
outcome succeeded(std::string text) { return {outcome::status::succeeded, std::move(text), {}, {}}; }

json::object schema(json::object properties, std::initializer_list<std::string_view> required) {
  json::array req;
  for (auto r : required) req.emplace_back(r);
  return {{"type", "object"}, {"properties", std::move(properties)}, {"required", std::move(req)},
          {"additionalProperties", false}};
}
json::object str(std::string_view description) { return {{"type", "string"}, {"description", description}}; }
json::object one_of(std::string_view description, std::initializer_list<std::string_view> values) {
  json::array e;
  for (auto v : values) e.emplace_back(v);
  return {{"type", "string"}, {"enum", std::move(e)}, {"description", description}};
}

const work_tool& spec(std::string_view name);

const std::vector<work_tool>& all_tools() {
  static const std::vector<work_tool> tools = [] {
    std::vector<work_tool> t;
    t.push_back({"write_plan",
                 "Write a new revision of this task's plan (numbered steps). Then ask for approval with "
                 "request_plan_approval.",
                 schema({{"content", str("The whole plan, as text")},
                         {"base_revision_id", str("The revision this one replaces (default: the latest)")}},
                        {"content"})});
    t.push_back({"request_plan_approval",
                 "Ask a human to approve the latest plan revision. Wait for the answer: an accepted plan starts "
                 "the implementation; a rejection says what to change.",
                 schema({}, {})});
    t.push_back({"update_task", "Change this task's status and/or add a comment to it.",
                 schema({{"status", one_of("The new status",
                                           {"backlog", "todo", "in_progress", "in_review", "done", "blocked",
                                            "cancelled"})},
                         {"comment", str("A comment for the people following the task")}},
                        {})});
    t.push_back({"create_task",
                 "Create a child task of this task, optionally in a project; with a message it starts at once.",
                 schema({{"title", str("A short title")},
                         {"description", str("What the task is about")},
                         {"project_id", str("The project it belongs to: its id or its name (see list_projects)")},
                         {"mode", one_of("How its agent works", {"standard", "ask", "planning"})},
                         {"message", str("The first message to its agent; the task starts with it")},
                         {"with_plan", json::object{{"type", "boolean"},
                                                    {"description", "Carry this task's accepted plan over"}}}},
                        {"title"})});
    t.push_back({"list_projects", "List the projects (id, name, description, repositories).", schema({}, {})});
    json::object repo_item{{"type", "string"}, {"description", "A repository URL or local path"}};
    t.push_back({"create_project", "Create a project with one or more repositories.",
                 schema({{"name", str("A unique name")},
                         {"description", str("What the project is")},
                         {"repositories", json::object{{"type", "array"}, {"items", repo_item}, {"minItems", 1}}}},
                        {"name", "repositories"})});
    t.push_back({"finish", "Report that work on this task has ended, with a summary of what was done.",
                 schema({{"status", one_of("How it ended", {"done", "blocked", "in_review"})},
                         {"summary", str("What was done, or what blocks it")}},
                        {"status", "summary"})});
    return t;
  }();
  return tools;
}

const work_tool& spec(std::string_view name) {
  for (const auto& t : all_tools())
    if (t.name == name) return t;
  return all_tools().front();
}

std::vector<work_tool> pick(std::initializer_list<std::string_view> names) {
  std::vector<work_tool> out;
  for (auto n : names) out.push_back(spec(n));
  return out;
}

constexpr std::array<std::string_view, 5> read_only{"read", "list", "glob", "grep", "ask_user"};

// The input as an object with only the schema's keys, or why not.
result<json::object> arguments(const work_tool& t, json::value input) {
  if (input.is_null()) return json::object();
  if (input.is_string()) {
    boost::system::error_code ec;
    auto parsed = json::parse(input.as_string(), ec);
    if (ec) return make_error(util_errc::invalid_argument, "the arguments are not a JSON object");
    input = std::move(parsed);
  }
  if (!input.is_object()) return make_error(util_errc::invalid_argument, "the arguments must be a JSON object");
  const auto& props = t.parameters.at("properties").as_object();
  for (const auto& kv : input.as_object()) {
    if (props.contains(kv.key())) continue;
    std::string names;
    for (const auto& p : props) names += (names.empty() ? "" : ", ") + std::string(p.key());
    return make_error(util_errc::invalid_argument,
                      fmt::format("unknown argument '{}'; expected {}", std::string_view(kv.key()),
                                  names.empty() ? std::string("none") : "one of: " + names));
  }
  for (const auto& r : t.parameters.at("required").as_array())
    if (!input.as_object().contains(r.as_string()))
      return make_error(util_errc::invalid_argument,
                        fmt::format("missing required argument '{}'", std::string_view(r.as_string())));
  return std::move(input.as_object());
}

// A string argument ("" when absent), or why not.
result<std::string> text_arg(const json::object& a, std::string_view key) {
  const auto* v = a.if_contains(key);
  if (v == nullptr || v->is_null()) return std::string();
  if (!v->is_string()) return make_error(util_errc::invalid_argument, fmt::format("'{}' must be a string", key));
  return std::string(v->as_string());
}

std::string describe_error(const tether::error& e) { return e.message.empty() ? e.code.message() : e.message; }

json::object project_json(const store::project_row& p) {
  return {{"id", p.id.str()}, {"name", p.name}, {"description", p.description},
          {"repositories", model::to_json(p.repositories)}};
}

}  // namespace

toolbox tools_for(const store::task_row& t) {
  switch (t.mode) {
    case model::work_mode::ask:
      return {pick({"list_projects", "finish"}), true};
    case model::work_mode::planning:
      if (!t.accepted_plan)
        return {pick({"write_plan", "request_plan_approval", "update_task", "list_projects"}), true};
      break;
    case model::work_mode::standard:
      break;
  }
  return {pick({"update_task", "create_task", "list_projects", "create_project", "finish"}), false};
}

std::span<const std::string_view> read_only_tools() { return read_only; }

bool is_work_tool(std::string_view name) {
  return std::any_of(all_tools().begin(), all_tools().end(), [&](const work_tool& t) { return t.name == name; });
}

boost::asio::awaitable<result<std::optional<store::task_row>>> agent_tools::task_of(session_id s) {
  if (work_ == nullptr) co_return std::optional<store::task_row>();
  co_return co_await work_->task_of_session(std::move(s));
}

boost::asio::awaitable<work_tool_outcome> agent_tools::run(store::task_row t, std::string name, json::value input) {
  const auto offered = tools_for(t).work;
  const auto it = std::find_if(offered.begin(), offered.end(), [&](const work_tool& w) { return w.name == name; });
  if (it == offered.end())
    co_return failed(fmt::format("{} is not available to a task in {} mode", name, model::to_string(t.mode)));
  if (work_ == nullptr) co_return failed("the work tools are not ready yet");
  work_service& work = *work_;
  auto args = arguments(*it, std::move(input));
  if (!args) co_return failed(args.error().message);
  const json::object& a = *args;
  auto str_of = [&a](std::string_view key) { return text_arg(a, key); };

  if (name == "write_plan") {
    auto content = str_of("content");
    auto base_text = str_of("base_revision_id");
    if (!content || !base_text) co_return failed((!content ? content : base_text).error().message);
    std::optional<revision_id> base;
    if (!base_text->empty()) {
      auto parsed = revision_id::parse(*base_text);
      if (!parsed) co_return failed("base_revision_id is not a revision id (rev_…)");
      base = *parsed;
    } else {
      auto detail = co_await work.describe(t.id);
      if (!detail) co_return failed(describe_error(detail.error()));
      if (!detail->plan.empty()) base = detail->plan.back().id;
    }
    auto rev = co_await work.write_plan(t.id, std::move(*content), base, "agent");
    if (!rev) co_return failed("the plan was not written: " + describe_error(rev.error()));
    co_return succeeded(fmt::format("Wrote plan revision {} ({}). Ask for approval with request_plan_approval.",
                                    rev->number, rev->id.str()));
  }
  if (name == "request_plan_approval") {
    auto payload = co_await work.approval_payload(t.id);
    if (!payload) co_return failed(describe_error(payload.error()));
    co_return outcome{outcome::status::waiting, {}, "confirmation", json::value(std::move(*payload))};
  }
  if (name == "update_task" || name == "finish") {
    const bool finishing = name == "finish";
    auto status_text = str_of("status");
    auto note = str_of(finishing ? "summary" : "comment");
    if (!status_text || !note) co_return failed((!status_text ? status_text : note).error().message);
    if (status_text->empty() && note->empty()) co_return failed("give a status, a comment, or both");
    task_patch patch;
    patch.actor = "agent";
    if (!status_text->empty()) {
      const auto s = model::parse_task_status(*status_text);
      if (!s) co_return failed("unknown status '" + *status_text + "'");
      patch.status = *s;
    }
    std::string done;
    if (finishing) {  // the status and the summary in one commit
      if (!patch.status || (*patch.status != model::task_status::done && *patch.status != model::task_status::blocked &&
                            *patch.status != model::task_status::in_review))
        co_return failed("finish needs a status: done, blocked or in_review");
      auto moved = co_await work.finish(t.id, *patch.status, "agent", std::move(*note));
      if (!moved) co_return failed(describe_error(moved.error()));
      co_return succeeded(fmt::format("The task is now {}. Summary recorded.", model::to_string(moved->status)));
    }
    if (patch.status && *patch.status != t.status) {
      auto moved = co_await work.update_task(t.id, std::move(patch));  // one step of the lifecycle
      if (!moved) co_return failed(describe_error(moved.error()));
      done = fmt::format("The task is now {}.", model::to_string(moved->status));
    }
    if (!note->empty()) {
      auto c = co_await work.comment(t.id, "agent", std::move(*note));
      if (!c) co_return failed(describe_error(c.error()));
      done += done.empty() ? "Comment added." : " Comment added.";
    }
    co_return succeeded(done.empty() ? std::string("Nothing changed.") : done);
  }
  if (name == "create_task") {
    task_request req;
    auto title = str_of("title");
    auto description = str_of("description");
    auto project = str_of("project_id");
    auto mode = str_of("mode");
    auto message = str_of("message");
    for (auto* r : {&title, &description, &project, &mode, &message})
      if (!*r) co_return failed(r->error().message);
    store::task_filter mine;  // named: a braced temporary in a co_await is destroyed twice by g++ 12
    mine.parent = t.id;
    mine.limit = work.options().max_children + 1;
    auto siblings = co_await work.list_tasks(std::move(mine));
    if (!siblings) co_return failed(describe_error(siblings.error()));
    if (siblings->size() >= work.options().max_children)
      co_return failed(fmt::format("this task already has {} child tasks, the most it may have",
                                   work.options().max_children));
    req.title = std::move(*title);
    req.description = std::move(*description);
    req.message = std::move(*message);
    req.parent = t.id;
    req.profile = t.profile;
    req.actor = "agent";
    if (!project->empty()) {
      if (auto p = project_id::parse(*project)) {
        req.project = *p;
      } else {  // a project's name, as a person would give it
        auto projects = co_await work.list_projects(1000);
        if (!projects) co_return failed(describe_error(projects.error()));
        for (const auto& candidate : *projects)
          if (candidate.name == *project) req.project = candidate.id;
        if (!req.project) co_return failed("there is no project named '" + *project + "'; see list_projects");
      }
    } else if (t.project) {
      req.project = t.project;
    }
    if (!mode->empty()) {
      const auto m = model::parse_work_mode(*mode);
      if (!m) co_return failed("unknown mode '" + *mode + "'");
      req.mode = *m;
    }
    if (const auto* w = a.if_contains("with_plan"); w != nullptr && !w->is_bool())
      co_return failed("'with_plan' must be a boolean");
    if (const auto* w = a.if_contains("with_plan"); w != nullptr && w->as_bool()) {
      auto detail = co_await work.describe(t.id);
      if (!detail) co_return failed(describe_error(detail.error()));
      const auto accepted = std::find_if(detail->plan.begin(), detail->plan.end(),
                                         [](const store::revision_row& r) { return r.accepted; });
      if (accepted == detail->plan.end()) co_return failed("this task has no accepted plan to carry over");
      req.description += (req.description.empty() ? "" : "\n\n") + std::string("The plan:\n") + accepted->content;
    }
    auto made = co_await work.create_task(std::move(req));
    if (!made) co_return failed("the task was not created: " + describe_error(made.error()));
    std::string started = made->first ? "; its agent has started" : "";
    if (made->first_error) started = "; its first message was not sent: " + describe_error(*made->first_error);
    co_return succeeded(
        fmt::format("Created task {} ({}){}.", made->task.id.str(), model::to_string(made->task.status), started));
  }
  if (name == "list_projects") {
    auto projects = co_await work.list_projects(1000);
    if (!projects) co_return failed(describe_error(projects.error()));
    json::array list;
    for (const auto& p : *projects) list.push_back(project_json(p));
    co_return succeeded(json::serialize(json::object{{"projects", std::move(list)}}));
  }
  if (name == "create_project") {
    project_request req;
    auto pname = str_of("name");
    auto description = str_of("description");
    if (!pname || !description) co_return failed((!pname ? pname : description).error().message);
    req.name = std::move(*pname);
    req.description = std::move(*description);
    auto repos = model::repositories_from_json(a.contains("repositories") ? a.at("repositories") : json::value());
    if (!repos) co_return failed(repos.error().message);
    req.repositories = std::move(*repos);
    if (auto allowed = work.check_agent_repositories(req.repositories); !allowed)
      co_return failed(allowed.error().message);
    auto made = co_await work.create_project(std::move(req));
    if (!made) co_return failed("the project was not created: " + describe_error(made.error()));
    co_return succeeded(fmt::format("Created project {} ({}).", made->id.str(), made->name));
  }
  co_return failed("unknown tool " + name);
}

}  // namespace tether::work
