#include "session/errors.h"

#include <string>

#include "session/types.h"
#include "util/ids.h"

namespace tether::session {

namespace {
class session_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "session"; }
  std::string message(int c) const override {
    switch (static_cast<session_errc>(c)) {
      case session_errc::unknown_session:
        return "unknown session";
      case session_errc::input_conflict:
        return "input id conflict";
      case session_errc::unknown_interaction:
        return "unknown interaction";
      case session_errc::interaction_closed:
        return "interaction already resolved";
      case session_errc::invalid_input:
        return "invalid input";
      case session_errc::stopped:
        return "service stopping";
      case session_errc::quarantined:
        return "session quarantined";
      case session_errc::unknown_input:
        return "unknown input";
      case session_errc::input_not_pending:
        return "input no longer pending";
      case session_errc::lease_lost:
        return "the session's lease was lost";
      case session_errc::storage_failed:
        return "the store cannot write";
      case session_errc::turn_over:
        return "the turn has ended";
      case session_errc::session_conflict:
        return "session id conflict";
      case session_errc::cannot_fork:
        return "the session cannot be forked there";
    }
    return "unknown session error";
  }
};
}  // namespace

const std::error_category& session_category() {
  static const session_category_impl c;
  return c;
}

std::string_view to_string(drain_status s) {
  switch (s) {
    case drain_status::idle:
      return "idle";
    case drain_status::succeeded:
      return "succeeded";
    case drain_status::failed:
      return "failed";
    case drain_status::interrupted:
      return "interrupted";
    case drain_status::waiting:
      return "waiting";
    case drain_status::busy:
      return "busy";
    case drain_status::abandoned:
      return "abandoned";
    case drain_status::error:
      return "error";
  }
  return "error";
}

node_identity make_node_identity(std::string name) {
  node_identity n;
  n.name = std::move(name);
  // The body of a fresh id is unique and sortable: a good incarnation tag.
  n.incarnation = execution_id::generate().str().substr(execution_id::prefix.size());
  return n;
}

}  // namespace tether::session
