#include "store/errors.h"

#include <string>

#include "store/types.h"

namespace tether::store {

namespace {

class store_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "store"; }
  std::string message(int c) const override {
    switch (static_cast<store_errc>(c)) {
      case store_errc::closed:
        return "the store is closed";
      case store_errc::write_failed:
        return "a write to the store failed; nothing of it was written";
      case store_errc::schema_too_new:
        return "the database was written by a newer Tether";
      case store_errc::open_failed:
        return "the database cannot be opened";
      case store_errc::unknown_session:
        return "unknown session";
      case store_errc::session_exists:
        return "the session already exists";
      case store_errc::fence_failed:
        return "the append's fence did not hold";
      case store_errc::duplicate_input:
        return "the input was already admitted";
      case store_errc::input_conflict:
        return "the input id is already used with other content";
      case store_errc::rejected:
        return "the event was rejected";
      case store_errc::interaction_not_pending:
        return "the interaction is not pending";
      case store_errc::lease_held:
        return "the lease is held by another owner";
      case store_errc::lease_lost:
        return "the lease is no longer held";
      case store_errc::not_found:
        return "not found";
      case store_errc::corrupt:
        return "a stored row cannot be read back";
      case store_errc::read_failed:
        return "a read from the store failed";
      case store_errc::quarantined:
        return "the session is quarantined";
      case store_errc::lagged:
        return "the live tail fell too far behind and was dropped";
      case store_errc::storage_unavailable:
        return "the store cannot write at the moment; it retries by itself";
      case store_errc::damaged:
        return "the database file is damaged";
      case store_errc::conflict:
        return "the row changed since it was read";
    }
    return "unknown store error";
  }
};

}  // namespace

const std::error_category& store_category() {
  static const store_category_impl c;
  return c;
}

std::string_view to_string(store_state s) {
  return s == store_state::ok ? "ok" : "degraded";
}

std::string_view to_string(input_status s) {
  switch (s) {
    case input_status::pending:
      return "pending";
    case input_status::promoted:
      return "promoted";
    case input_status::cancelled:
      return "cancelled";
  }
  return "pending";
}

std::string_view to_string(message_role r) {
  switch (r) {
    case message_role::user:
      return "user";
    case message_role::assistant:
      return "assistant";
    case message_role::tool_call:
      return "tool_call";
    case message_role::tool_result:
      return "tool_result";
    case message_role::notice:
      return "notice";
    case message_role::summary:
      return "summary";
  }
  return "notice";
}

}  // namespace tether::store
