// work_store: the work layer's rows (docs/architecture.md §6). Tasks,
// comments, document revisions and preparations are projections of events
// in the task's session (model/events.h), read here; projects are rows
// written here, with store/projector.h's rules (create_project,
// update_project), group-committed like appends.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "store/task.h"
#include "store/types.h"
#include "store/work_types.h"
#include "util/result.h"

namespace tether::store {

class work_store {
 public:
  virtual ~work_store() = default;

  virtual task<result<project_row>> create_project(project_row p) = 0;
  virtual task<result<project_row>> update_project(project_patch patch) = 0;
  virtual task<result<project_row>> get_project(project_id id) = 0;                     // not_found
  virtual task<result<std::vector<project_row>>> list_projects(std::size_t limit) = 0;  // by name
  virtual task<result<task_row>> get_task(task_id id) = 0;                              // not_found
  // The task whose session this is, if any.
  virtual task<result<std::optional<task_row>>> task_of_session(session_id s) = 0;
  // Most recently updated first.
  virtual task<result<std::vector<task_row>>> list_tasks(task_filter f) = 0;
  // In order; an unknown task has none.
  virtual task<result<std::vector<comment_row>>> list_comments(task_id t) = 0;
  // Every revision of every document of the task, per document by number.
  virtual task<result<std::vector<revision_row>>> list_revisions(task_id t) = 0;
  // What was decided before each of its runs (task.prepared), in order.
  virtual task<result<std::vector<preparation_row>>> list_preparations(task_id t) = 0;
};

}  // namespace tether::store
