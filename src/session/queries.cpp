#include "session/queries.h"

namespace tether::session {

std::string_view to_string(session_status s) {
  switch (s) {
    case session_status::idle:
      return "idle";
    case session_status::running:
      return "running";
    case session_status::waiting:
      return "waiting";
  }
  return "idle";
}

session_status status_of(const store::session_row& row, std::size_t pending_interactions, drain_activity a) {
  if (row.open_execution || row.continuation_pending || a == drain_activity::draining) return session_status::running;
  if (pending_interactions > 0) return session_status::waiting;
  return session_status::idle;
}

session_summary summarize(store::session_overview o, drain_activity a) {
  session_summary out;
  out.status = status_of(o.session, o.pending_interactions, a);
  out.pending_inputs = o.pending_inputs;
  out.pending_interactions = o.pending_interactions;
  out.usage = o.usage;
  out.session = std::move(o.session);
  return out;
}

session_summary summarize(store::session_snapshot s, drain_activity a) {
  return summarize(
      store::session_overview{std::move(s.session), s.pending_inputs.size(), s.pending_interactions.size(), s.usage},
      a);
}

}  // namespace tether::session
