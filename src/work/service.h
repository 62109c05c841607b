// work::work_service — tasks, projects and plans over the session layer
// (docs/architecture.md §6). The API, the CLI and the agents' work tools (work/agent_tools.h)
// call this; it writes the work layer's events into each task's own session
// and drives that session through session::session_service.
//
//   work_service work(store, sessions, options);
//   task_request req;                                  // named: g++ 12 destroys a braced temporary
//   req.title = "fix the build";                       // in a co_await expression twice
//   req.message = "go";
//   auto t = co_await work.create_task(std::move(req));            // starts it
//   co_await work.send(t->task.id, std::move(steer));              // steers it while it runs
//   auto plan = co_await work.write_plan(t->task.id, "1. …", base, "agent");
//   co_await work.decide(interaction, std::move(accept));          // the plan handoff
//
// Tasks. create_task() writes session.created and task.created in one
// commit: the task and its session (its conversation) exist together or
// not at all. A first message that cannot be admitted leaves the task
// created and says why (created::first_error). The session's workspace is the one given (the API checks it
// against the server's roots), else workspaces/<task id>, made 0700. A task
// request with a message admits it at once (send()).
//
// Messages (send): a chat message into the task's session; it steers the
// agent while it runs and starts it when idle. A task in backlog, todo or
// blocked moves to in_progress first (actor "tether"), unless the message
// only records (resume false).
//
// Status changes (update_task with a status) are checked against the
// lifecycle (model/task.h: an invalid move is util_errc::invalid_argument)
// and written with `from` = the status read, so a concurrent change makes
// the store refuse it (store_errc::conflict, 409).
//
// Plans. write_plan() appends a revision of the task's "plan" written
// against `base` (the latest revision's id; none for the first): a stale
// base is store_errc::conflict. request_approval() is what the agent's
// request_plan_approval tool makes: a "confirmation" interaction bound to
// the latest revision, {document, revision_id, number, content,
// continuation: "on_answer"}. decide() answers it, waking the agent as the
// continuation says (on_answer: either way; on_accept: only when accepted;
// never: the decision is recorded and heard on the next run):
//   accept  the revision is accepted (document.accepted), the task moves to
//           in_progress, the session is reset and the implementation's first
//           input — the accepted plan — is admitted, all in one commit with
//           the interaction's resolution; the agent starts the implementation
//           in a fresh context (a new generation; agent programs: a new agent
//           session).
//   reject  needs a reason; the waiting call returns it to the agent, which
//           revises the plan and asks again.
// A confirmation is decided only against the revision it names: one written
// since makes it stale (store_errc::conflict; the agent asks again).
//
// Before a run (prepare, called by send() when the message starts one: the
// session is idle). The configuration's fingerprints (work/fingerprint.h)
// are compared with the last run's: the session is reset when the model or
// any session category changed (reasons: those categories) and reused
// otherwise; the workspace is created, reused, refreshed (only the setup
// commands changed: they run again) or replaced (repositories or strategy
// changed), holding a clone of each of the project's repositories on its
// branch (work/workspace.h). The decision, both fingerprint sets and what
// was done (and the agent session the run starts from) are recorded as
// task.prepared before the message is admitted; a
// workspace that cannot be made (a clone fails) records nothing more and
// fails the send (invalid_argument, git's or the command's last line).
//
// Errors: util_errc::invalid_argument (a field, naming it), not_found
// (store_errc: an unknown task or project), conflict, the session layer's
// and the store's.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "model/task.h"
#include "session/service.h"
#include "store/event_store.h"
#include "util/result.h"

namespace tether::work {

template <class T>
using task = boost::asio::awaitable<T>;

struct work_options {
  std::filesystem::path workspaces;           // where tasks' workspaces are made (DATA/workspaces)
  std::size_t max_text_bytes = 256U * 1024U;  // descriptions, comments, plans, messages
  // The session categories a profile's configuration sets (runtime,
  // runtime_config, model, instructions, environment, secrets: see
  // work/fingerprint.h), as JSON, for the freshness decision before each
  // run; the node fills them from its configuration. Unset: only the task's
  // own categories count.
  std::function<std::map<std::string, boost::json::value, std::less<>>(std::string_view profile)> profile_config;
  // Where git and the setup commands run (they block); unset: inline.
  boost::asio::any_io_executor blocking;
  // The environment of git and the setup commands ("NAME=value"; PATH at least).
  std::vector<std::string> command_env;
  // Where a project an agent creates may name local repositories (a path or
  // file:// URL): under one of these (the server's workspace roots), so an
  // agent cannot have Tether clone any repository of the machine into its
  // workspace. Empty: agents may name no local repository.
  std::vector<std::filesystem::path> local_roots;
  // Child tasks one task may have (agents create them).
  std::size_t max_children = 50;
  // A child task is at most max_depth levels below its root task (a root is
  // level 0), and one root has at most max_descendants tasks below it, so an
  // agent that makes children that make children stops at a bound, not at
  // 50^n (util_errc::invalid_argument naming the limit).
  std::size_t max_depth = 4;
  std::size_t max_descendants = 200;
};

struct task_request {
  std::optional<std::string> id;  // "tsk_…"; generated when absent
  std::string title;
  std::string description;
  model::task_status status = model::task_status::todo;
  model::work_mode mode = model::work_mode::standard;
  std::int64_t priority = 0;
  std::optional<project_id> project;
  std::optional<task_id> parent;
  std::string profile;    // the session's profile ("" = the default)
  std::string workspace;  // "" = workspaces/<task id>
  std::string message;    // "" = none; else admitted as the first input (starts the task)
  std::string actor = "user";
};

struct task_patch {
  std::optional<std::string> title;
  std::optional<std::string> description;
  std::optional<std::int64_t> priority;
  std::optional<model::work_mode> mode;
  std::optional<project_id> project;  // an empty id clears it
  std::optional<model::task_status> status;
  std::string reason;  // of a status change
  std::string actor = "user";
};

struct project_request {
  std::optional<std::string> id;  // "prj_…"; generated when absent
  std::string name;
  std::string description;
  std::vector<model::project_repository> repositories;
  std::vector<std::string> setup;  // lifecycle commands run in each task's workspace
};

// A task with what belongs to it, read together.
struct task_detail {
  store::task_row task;
  std::vector<store::revision_row> plan;                  // its plan's revisions, in order
  std::vector<store::interaction_row> open_interactions;  // pending questions and confirmations
  std::vector<store::execution_row> runs;                 // its session's executions, in order
  std::vector<store::comment_row> comments;
  std::vector<store::preparation_row> preparations;  // the freshness decision before each run, in order
  model::usage usage;                                // of all its runs
};

struct decision {
  bool accept = false;
  std::string reason;  // required to reject
  std::string actor = "user";
};

class work_service {
 public:
  // `store` and `sessions` must outlive the service.
  work_service(store::event_store& store, session::session_service& sessions, work_options options);

  // ---- projects ----
  task<result<store::project_row>> create_project(project_request req);
  // What an agent's create_project may not do (see local_roots): ok, or
  // invalid_argument naming the repository.
  [[nodiscard]] result<void> check_agent_repositories(const std::vector<model::project_repository>& repos) const;
  [[nodiscard]] const work_options& options() const { return options_; }
  task<result<store::project_row>> update_project(store::project_patch patch);
  task<result<store::project_row>> get_project(project_id id);
  task<result<std::vector<store::project_row>>> list_projects(std::size_t limit);

  // ---- tasks ----
  struct created {
    store::task_row task;
    std::optional<session::admission> first;  // the first message, when one was given
    // Why the first message was not admitted (its workspace could not be
    // prepared, …): the task exists all the same, idle.
    std::optional<tether::error> first_error;
  };
  task<result<created>> create_task(task_request req);
  task<result<task_detail>> describe(task_id id);
  task<result<std::optional<store::task_row>>> task_of_session(session_id s);
  task<result<std::vector<store::task_row>>> list_tasks(store::task_filter filter);
  task<result<store::task_row>> update_task(task_id id, task_patch patch);
  // Moves the task to `to` the shortest way through the lifecycle (one event
  // per step) and adds `summary` as a comment, in one commit: whoever sees
  // the final status sees the summary. invalid_argument when there is no way.
  task<result<store::task_row>> finish(task_id id, model::task_status to, std::string actor, std::string summary = {});
  task<result<store::comment_row>> comment(task_id id, std::string author, std::string text);
  task<result<session::admission>> send(task_id id, session::input_request req);

  // ---- plans ----
  // `base`: the latest revision's id (none for the first).
  task<result<store::revision_row>> write_plan(task_id id, std::string content, std::optional<revision_id> base,
                                               std::string author);
  // The confirmation payload for the latest plan revision (invalid_argument
  // when there is none yet).
  task<result<boost::json::object>> approval_payload(task_id id);
  // Decides the confirmation `interaction` (of a task's plan).
  task<result<void>> decide(interaction_id interaction, decision d);
  // The task's open plan confirmation, if any.
  task<result<std::optional<store::interaction_row>>> open_confirmation(task_id id);

  // ---- runs ----
  // The freshness decision and the workspace before a run (see above);
  // returns the task.prepared record.
  task<result<boost::json::object>> prepare(task_id id);
  task<result<std::vector<store::preparation_row>>> preparations(task_id id);

 private:
  task<result<store::task_row>> task_row(task_id id);
  // Whether a new child of `parent` stays within max_depth and max_descendants.
  task<result<void>> check_lineage(task_id parent);
  store::event_store& store_;
  session::session_service& sessions_;
  work_options options_;
};

}  // namespace tether::work
