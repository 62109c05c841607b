// The read side of the session layer: what a client is shown of a session
// (its status and what waits in it), computed in one place for one session
// and for a listing of many. The session service serves these
// (session_service::describe, list); this header holds the value types and
// the rule.
//
// Status:
//   running  an execution is open, an answered question is about to be
//            continued, or this node is draining the session (woken, not
//            yet idle) — in that order of evidence, any one is enough;
//   waiting  none of that, and an interaction waits for a human;
//   idle     otherwise (pending inputs recorded without resume leave a
//            session idle).
#pragma once

#include <cstddef>
#include <string_view>

#include "store/session_reads.h"
#include "store/types.h"

namespace tether::session {

enum class session_status { idle, running, waiting };
std::string_view to_string(session_status s);

// Whether this node is working on the session now (session_service::active).
enum class drain_activity { draining, not_draining };

struct session_summary {
  store::session_row session;
  session_status status = session_status::idle;
  std::size_t pending_inputs = 0;
  std::size_t pending_interactions = 0;
  model::usage usage;  // of all its executions, when listed (store::session_overview)
};

// The rule above.
session_status status_of(const store::session_row& row, std::size_t pending_interactions, drain_activity a);

session_summary summarize(store::session_overview o, drain_activity a);
session_summary summarize(store::session_snapshot s, drain_activity a);

}  // namespace tether::session
