// How the API shows the work layer (docs/openapi.json: Project, Task,
// Revision, Comment, TaskDetail). Pure functions, no I/O. Unset optional
// fields are null.
#pragma once

#include <boost/json/object.hpp>

#include "store/work_types.h"
#include "work/service.h"

namespace tether::api {

boost::json::object project_view(const store::project_row& p);
boost::json::object task_view(const store::task_row& t);
boost::json::object revision_view(const store::revision_row& r);
boost::json::object comment_view(const store::comment_row& c);
// A run's preparation: {session, workspace, steps, seq, at} (work/fingerprint.h to_json).
boost::json::object preparation_view(const store::preparation_row& p);
// {task, plan: [Revision], interactions: [open Interaction], runs: [Execution], comments, preparations, usage}
boost::json::object task_detail_view(const work::task_detail& d);

}  // namespace tether::api
