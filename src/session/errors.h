// Error codes of the session layer (what the API maps to HTTP statuses).
#pragma once

#include <system_error>

namespace tether::session {

enum class session_errc {
  unknown_session = 1,  // 404: no such session
  input_conflict,       // 409: input id reused with other content, session, or in the transcript
  unknown_interaction,  // 404
  interaction_closed,   // 409: the interaction was already answered or cancelled
  invalid_input,        // 400: empty prompt, bad delivery, …
  stopped,              // 503: the service is stopping
  quarantined,          // 409: the session's log cannot be decoded; it is set aside
  unknown_input,        // 404: no such input in this session
  input_not_pending,    // 409: the input was already promoted or cancelled
  // What a runtime hears from its turn host (session/runtime.h):
  lease_lost,        // the session's lease is gone; nothing was written
  storage_failed,    // 503: the store cannot write now (full disk, I/O error); nothing was written
  turn_over,         // the turn this host served has ended
  session_conflict,  // 409: a session id reused with other attributes
  cannot_fork,       // 409: no snapshot of the workspace at that turn here (session/fork.h)
};

const std::error_category& session_category();
inline std::error_code make_error_code(session_errc e) { return {static_cast<int>(e), session_category()}; }

}  // namespace tether::session

template <>
struct std::is_error_code_enum<tether::session::session_errc> : std::true_type {};
