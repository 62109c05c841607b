// work::agent_tools — the work layer's tools for the agent of a task, the
// same for the native runtime (runtime/native) and, through `tether mcp`, for
// every agent program (runtime/agent). Each validates its input (keys not in
// its schema are refused, a missing or mistyped one named) and fails with a
// message the model can act on; the tool call itself is durable before the
// tool runs (the runtime records it), and what the tool changes is a durable
// event of the work layer (work/service.h).
//
//   write_plan {content, base_revision_id?}
//       A new revision of the task's plan, written against base_revision_id
//       (default: the latest revision). A stale base fails naming the latest.
//   request_plan_approval {}
//       Asks a human to accept the latest revision: returns `waiting` with a
//       "confirmation" interaction (work_service::approval_payload). The
//       answer comes back as the call's result (accepted, or rejected with
//       the reason); an accepted plan starts the implementation in a fresh
//       context.
//   update_task {status?, comment?}
//       Moves the task (model/task.h's lifecycle) and/or comments on it.
//   create_task {title, description?, project_id?, mode?, message?, with_plan?}
//       A child task of this one, with this task's profile, in project_id
//       (an id or a project's name; default: this task's project); message
//       starts it; with_plan puts this task's accepted plan into its
//       description. At most work_options::max_children per task.
//   list_projects {}
//       The projects as JSON: id, name, description, repositories.
//   create_project {name, description?, repositories}
//       repositories: URLs (or {url, name?, branch?, primary?}). A name in
//       use fails naming the existing project's id, to use instead. A local
//       repository (a path, file://) must lie under the server's workspace
//       roots (work_options::local_roots).
//   finish {status, summary}
//       status done, blocked or in_review: the task moves there (through the
//       lifecycle) and the summary becomes a comment.
//
// Which tools an agent gets depends on its task's work mode (tools_for):
//   standard, or planning once a plan was accepted:
//       update_task, create_task, list_projects, create_project, finish;
//       every local tool
//   planning before acceptance:
//       write_plan, request_plan_approval, update_task, list_projects; local
//       tools that change nothing (read, list, glob, grep, ask_user)
//   ask: list_projects, finish; local tools that change nothing
// read_only_tools() names those local tools.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "store/work_types.h"
#include "work/service.h"

namespace tether::work {

struct work_tool {
  std::string name;
  std::string description;
  boost::json::object parameters;  // a closed JSON Schema
};

struct work_tool_outcome {
  enum class status { succeeded, failed, waiting } what = status::succeeded;
  std::string content;  // succeeded: for the model; failed: the error
  // waiting: the interaction to record (kind "confirmation")
  std::string interaction_kind;
  boost::json::value interaction_payload;
};

// What the agent may use, by its task.
struct toolbox {
  std::vector<work_tool> work;  // the work tools it is offered
  bool read_only = false;       // only read_only_tools() of the local tools
};
toolbox tools_for(const store::task_row& t);
std::span<const std::string_view> read_only_tools();
bool is_work_tool(std::string_view name);

// Made before the work service exists (runtimes are built first) and bound
// to it once it does, before any turn runs: unbound, task_of() finds no task
// and run() fails.
class agent_tools {
 public:
  void bind(work_service& work) { work_ = &work; }
  // The task whose session this is, if any (none while unbound).
  boost::asio::awaitable<result<std::optional<store::task_row>>> task_of(session_id s);
  // Runs tool `name` for the agent of `t`. A tool `t` is not offered fails.
  boost::asio::awaitable<work_tool_outcome> run(store::task_row t, std::string name, boost::json::value input);

 private:
  work_service* work_ = nullptr;
};

}  // namespace tether::work
