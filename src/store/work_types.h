// Rows of the work layer's projections (docs/architecture.md §6): tasks, their comments and
// document revisions (the plan), and projects. Tasks, comments and revisions
// come from events in the task's session (model/events.h, "the work layer");
// projects are written directly (event_store::create_project).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <boost/json/object.hpp>

#include "model/task.h"
#include "util/clock.h"
#include "util/ids.h"

namespace tether::store {

struct task_row {
  task_id id;
  session_id session;  // the task's own session (its conversation)
  std::string title;
  std::string description;
  model::task_status status = model::task_status::todo;
  model::work_mode mode = model::work_mode::standard;
  std::int64_t priority = 0;
  std::optional<project_id> project;
  std::optional<task_id> parent;
  std::string profile;  // the session's
  std::string created_by;
  std::optional<revision_id> accepted_plan;  // the plan revision accepted last, if any
  time_ms created_at = 0;
  time_ms updated_at = 0;
  std::optional<time_ms> started_at;    // first went in_progress
  std::optional<time_ms> completed_at;  // went done (cleared when reopened)
  std::optional<time_ms> cancelled_at;  // cancelled (cleared when restored)
};

// Which tasks list_tasks returns: every filter set must hold.
struct task_filter {
  std::optional<project_id> project;
  std::optional<task_id> parent;
  std::optional<model::task_status> status;
  std::size_t limit = 100;  // capped at 10,000
};

struct comment_row {
  comment_id id;
  task_id task;
  std::string author;
  std::string text;
  event_seq seq;
  time_ms created_at = 0;
};

struct revision_row {
  revision_id id;
  task_id task;
  std::string document;
  std::int64_t number = 0;          // 1, 2, 3, … per document
  std::optional<revision_id> base;  // what it was written against
  std::string content;
  std::string author;
  bool accepted = false;
  event_seq seq;
  time_ms created_at = 0;
};

struct project_row {
  project_id id;
  std::string name;  // unique among projects
  std::string description;
  std::vector<model::project_repository> repositories;  // checked (model::check_repositories)
  std::vector<std::string> setup;                       // lifecycle commands run in a task's workspace
  std::int64_t revision = 1;                            // +1 per update
  time_ms created_at = 0;
  time_ms updated_at = 0;
};

// What update_project changes (unset: kept).
struct project_patch {
  project_id id;
  std::optional<std::string> name;
  std::optional<std::string> description;
  std::optional<std::vector<model::project_repository>> repositories;
  std::optional<std::vector<std::string>> setup;
  std::optional<std::int64_t> expected_revision;  // set: the update is refused (conflict) unless it matches
};

// What was decided and done before a run of a task (task.prepared).
struct preparation_row {
  task_id task;
  event_seq seq;
  time_ms at = 0;
  boost::json::object record;
};

}  // namespace tether::store
