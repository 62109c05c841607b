// The work layer's verbs (commands.h): tether task new|list|show|send|approve|reject
// and tether project new|list, over /v1/tasks and /v1/projects.
#include <string>
#include <vector>

#include <fmt/format.h>
#include <boost/json.hpp>

#include "cli/client.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/follow.h"
#include "cli/json_fields.h"

namespace tether::cli {

namespace {

namespace json = boost::json;

std::string task_path(std::string_view id) { return "/v1/tasks/" + path_segment(id); }

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

std::string indented(std::string_view text, std::string_view by) {
  std::string out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto nl = text.find('\n', start);
    const auto line = text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    out += std::string(by) + std::string(line) + "\n";
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  return out;
}

// Prints --json as the server's JSON, else `text(reply)`.
template <class Text>
int print_reply(const result<json::value>& r, const common_args& common, Text text) {
  if (!r) return report(r.error());
  if (common.json)
    print_json_line(*r);
  else
    fmt::print("{}", text(*r));
  return exit_ok;
}

// ---- project ----

struct project_new_args {
  common_args common;
  std::string name;
  std::string description;
  std::vector<std::string> repos;  // URL or URL#BRANCH
};

int run_project_new(const project_new_args& args) {
  if (args.repos.empty()) return usage_error("project new: give at least one --repo URL[#BRANCH]");
  json::array repos;
  for (const auto& r : args.repos) {
    const auto hash = r.rfind('#');
    json::object o{{"url", r.substr(0, hash)}};
    if (hash != std::string::npos) o["branch"] = r.substr(hash + 1);
    repos.push_back(std::move(o));
  }
  json::object body{{"name", args.name}, {"repositories", std::move(repos)}};
  if (!args.description.empty()) body["description"] = args.description;
  client c(resolve_client_options(args.common));
  return print_reply(c.post("/v1/projects", body), args.common,
                     [](const json::value& v) { return str_of(member(v, "project"), "id") + "\n"; });
}

std::string format_projects(const json::value& v) {
  std::string out;
  const auto* list = array_of(v, "projects");
  if (list == nullptr || list->empty()) return "no projects\n";
  for (const auto& p : *list) {
    out += fmt::format("{}  {}\n", str_of(p, "id"), str_of(p, "name"));
    if (const auto* repos = array_of(p, "repositories"))
      for (const auto& r : *repos)
        out += fmt::format("    {}  {}{}\n", str_of(r, "name"), str_of(r, "url"),
                           str_of(r, "branch").empty() ? "" : " (" + str_of(r, "branch") + ")");
  }
  return out;
}

// ---- task ----

struct task_new_args {
  common_args common;
  std::string title;
  std::string description;
  std::string mode;
  std::string status;
  std::string project;
  std::string parent;
  std::string profile;
  std::string message;
};

int run_task_new(const task_new_args& args) {
  json::object body{{"title", args.title}};
  for (auto [name, value] : {std::pair{"description", &args.description}, std::pair{"mode", &args.mode},
                             std::pair{"status", &args.status}, std::pair{"project_id", &args.project},
                             std::pair{"parent_task_id", &args.parent}, std::pair{"profile", &args.profile},
                             std::pair{"message", &args.message}})
    if (!value->empty()) body[name] = *value;
  client c(resolve_client_options(args.common));
  return print_reply(c.post("/v1/tasks", body), args.common,
                     [](const json::value& v) { return str_of(member(v, "task"), "id") + "\n"; });
}

struct task_list_args {
  common_args common;
  std::string project;
  std::string status;
};

std::string format_tasks(const json::value& v) {
  const auto* list = array_of(v, "tasks");
  if (list == nullptr || list->empty()) return "no tasks\n";
  std::string out = fmt::format("{:<30}  {:<11}  {:<8}  {}\n", "TASK", "STATUS", "MODE", "TITLE");
  for (const auto& t : *list)
    out += fmt::format("{:<30}  {:<11}  {:<8}  {}\n", str_of(t, "id"), str_of(t, "status"), str_of(t, "mode"),
                       str_of(t, "title"));
  return out;
}

int run_task_list(const task_list_args& args) {
  std::string target = "/v1/tasks";
  std::string sep = "?";
  if (!args.project.empty()) target += sep + "project_id=" + path_segment(args.project), sep = "&";
  if (!args.status.empty()) target += sep + "status=" + path_segment(args.status);
  client c(resolve_client_options(args.common));
  return print_reply(c.get(target), args.common, format_tasks);
}

std::string format_task(const json::value& d) {
  const auto& t = member(d, "task");
  std::string out = fmt::format("task {} — {}\n", str_of(t, "id"), str_of(t, "title"));
  out += fmt::format("  status {} · mode {} · priority {} · profile {}\n", str_of(t, "status"), str_of(t, "mode"),
                     int_of(t, "priority"), str_of(t, "profile"));
  if (!str_of(t, "project_id").empty()) out += "  project " + str_of(t, "project_id") + "\n";
  if (!str_of(t, "parent_task_id").empty()) out += "  parent " + str_of(t, "parent_task_id") + "\n";
  out += "  session " + str_of(t, "session") + "\n";
  if (!str_of(t, "description").empty()) out += indented(str_of(t, "description"), "  ");
  if (const auto* plan = array_of(d, "plan"); plan != nullptr && !plan->empty()) {
    const auto& last = plan->back();
    const auto& accepted = member(last, "accepted");
    out += fmt::format("  plan: revision {} of {}{}\n", int_of(last, "number"), plan->size(),
                       accepted.is_bool() && accepted.as_bool() ? " (accepted)" : "");
    out += indented(str_of(last, "content"), "    ");
  }
  if (const auto* open = array_of(d, "interactions"))
    for (const auto& i : *open) {
      if (str_of(i, "kind") == "confirmation")
        out += fmt::format("  waiting for approval of the plan: tether task approve {0}  |  tether task reject {0} "
                           "--reason TEXT\n",
                           str_of(t, "id"));
      else
        out += fmt::format("  waiting for an answer: tether answer {} OPTION…\n", str_of(i, "id"));
    }
  const auto* runs = array_of(d, "runs");
  const auto& usage = member(d, "usage");
  out += fmt::format("  runs {} · tokens {} in, {} out\n", runs != nullptr ? runs->size() : 0,
                     int_of(usage, "input_tokens"), int_of(usage, "output_tokens"));
  if (const auto* comments = array_of(d, "comments"))
    for (const auto& c : *comments) out += fmt::format("  {}: {}\n", str_of(c, "author"), str_of(c, "text"));
  return out;
}

struct task_send_args {
  common_args common;
  std::string task;
  std::vector<std::string> text;
  bool queue = false;
  bool no_resume = false;
  bool detach = false;
};

int run_task_send(const task_send_args& args) {
  const std::string text = joined(args.text);
  if (text.empty()) return usage_error("task send: give the text to send");
  install_sigint_handler();
  client c(resolve_client_options(args.common));
  auto t = c.get(task_path(args.task));
  if (!t) return report(t.error());
  const std::string session = str_of(member(*t, "task"), "session");
  return send_and_follow(c, session, task_path(args.task) + "/messages", text,
                         {args.queue, args.no_resume, args.detach, args.common.format()});
}

struct task_decide_args {
  common_args common;
  std::string task;
  std::string reason;
};

int run_task_decide(const task_decide_args& args, bool accept) {
  if (!accept && args.reason.empty()) return usage_error("task reject: say what to change with --reason TEXT");
  json::object body;
  if (!accept) body["reason"] = args.reason;
  client c(resolve_client_options(args.common));
  return print_reply(c.post(task_path(args.task) + (accept ? "/approve" : "/reject"), body), args.common,
                     [accept](const json::value& v) {
                       const auto& t = member(v, "task");
                       return fmt::format("{} the plan of {}; the task is {}\n", accept ? "approved" : "rejected",
                                          str_of(t, "id"), str_of(t, "status"));
                     });
}

}  // namespace

void add_task_commands(CLI::App& app, int& exit_code) {
  auto* project = app.add_subcommand("project", "Projects: the repositories tasks work on");
  project->require_subcommand(1);
  {
    auto args = std::make_shared<project_new_args>();
    auto* cmd = project->add_subcommand("new", "Create a project and print its id");
    add_common_options(*cmd, args->common);
    cmd->add_option("name", args->name, "a unique name")->required();
    cmd->add_option("--repo", args->repos, "a repository URL or path, optionally URL#BRANCH (repeatable)");
    cmd->add_option("--description", args->description, "what the project is");
    cmd->callback([args, &exit_code] { exit_code = run_project_new(*args); });
  }
  {
    auto args = std::make_shared<common_args>();
    auto* cmd = project->add_subcommand("list", "List the projects and their repositories");
    add_common_options(*cmd, *args);
    cmd->callback([args, &exit_code] {
      client c(resolve_client_options(*args));
      exit_code = print_reply(c.get("/v1/projects"), *args, format_projects);
    });
  }

  auto* task = app.add_subcommand("task", "Tasks: conversations with a status, a plan and a workspace");
  task->require_subcommand(1);
  {
    auto args = std::make_shared<task_new_args>();
    auto* cmd = task->add_subcommand("new", "Create a task and print its id (with --message it starts)");
    add_common_options(*cmd, args->common);
    cmd->add_option("title", args->title, "a short title")->required();
    cmd->add_option("--description", args->description, "what the task is about");
    cmd->add_option("--mode", args->mode, "standard, ask or planning (default: standard)");
    cmd->add_option("--status", args->status, "the first status (default: todo)");
    cmd->add_option("--project", args->project, "the project it belongs to");
    cmd->add_option("--parent", args->parent, "its parent task");
    cmd->add_option("--profile", args->profile, "the profile its agent runs (default: the server's default)");
    cmd->add_option("--message", args->message, "the first message to its agent: the task starts with it");
    cmd->callback([args, &exit_code] { exit_code = run_task_new(*args); });
  }
  {
    auto args = std::make_shared<task_list_args>();
    auto* cmd = task->add_subcommand("list", "List the tasks, most recently updated first");
    add_common_options(*cmd, args->common);
    cmd->add_option("--project", args->project, "only the tasks of this project");
    cmd->add_option("--status", args->status, "only the tasks with this status");
    cmd->callback([args, &exit_code] { exit_code = run_task_list(*args); });
  }
  {
    auto args = std::make_shared<common_args>();
    auto id = std::make_shared<std::string>();
    auto* cmd = task->add_subcommand("show", "Show a task: status, plan, what it waits for, runs, comments");
    add_common_options(*cmd, *args);
    cmd->add_option("task", *id, "the task id")->required();
    cmd->callback([args, id, &exit_code] {
      client c(resolve_client_options(*args));
      exit_code = print_reply(c.get(task_path(*id)), *args, format_task);
    });
  }
  {
    auto args = std::make_shared<task_send_args>();
    auto* cmd = task->add_subcommand("send", "Send a message to a task's agent and print the turn as it runs");
    add_common_options(*cmd, args->common);
    cmd->add_option("task", args->task, "the task id")->required();
    cmd->add_option("text", args->text, "the message (the words are joined with spaces)")->required();
    cmd->add_flag("--queue", args->queue, "deliver after the running turn instead of steering it");
    cmd->add_flag("--no-resume", args->no_resume, "only admit the message; do not start a turn");
    cmd->add_flag("--detach", args->detach, "return once admitted; do not print the turn");
    cmd->callback([args, &exit_code] { exit_code = run_task_send(*args); });
  }
  for (const bool accept : {true, false}) {
    auto args = std::make_shared<task_decide_args>();
    auto* cmd = task->add_subcommand(accept ? "approve" : "reject",
                                     accept ? "Accept the plan waiting for approval: the implementation starts"
                                            : "Reject the plan waiting for approval, saying what to change");
    add_common_options(*cmd, args->common);
    cmd->add_option("task", args->task, "the task id")->required();
    if (!accept) cmd->add_option("--reason", args->reason, "what to change")->required();
    cmd->callback([args, accept, &exit_code] { exit_code = run_task_decide(*args, accept); });
  }
}

}  // namespace tether::cli
