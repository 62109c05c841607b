// Error codes of the store layer. Every failed store call returns one of
// these; none of them leaves a partial write behind.
#pragma once

#include <system_error>

namespace tether::store {

enum class store_errc {
  closed = 1,       // the store was stopped; no more calls are taken
  write_failed,     // this write's commit failed; nothing of it was written (the store is then degraded)
  schema_too_new,   // the database was written by a newer Tether; refuse to open
  open_failed,      // the database cannot be opened or migrated
  unknown_session,  // no such session
  session_exists,   // session.created for an id that already exists
  fence_failed,     // the append's fence did not hold; nothing was written
  duplicate_input,  // exact retry: the same input was already admitted (see append_result::existing_input)
  input_conflict,   // the input id exists with a different prompt/delivery/session, or names a transcript message
  rejected,         // a projection rejected the event (unknown input, unsettled call, …)
  interaction_not_pending,  // resolving an interaction that is not pending
  lease_held,               // a fresh lease of another owner blocks this lease operation
  lease_lost,               // a renewal or release by an owner that no longer holds the lease
  not_found,                // a projection row (input, interaction, execution) does not exist
  corrupt,                  // a stored row cannot be read back
  read_failed,              // the database could not be read (I/O error, busy, out of memory); retry later
  quarantined,              // input.admitted to a quarantined session
  lagged,                   // a tail_all() reader fell more than its buffer behind; the tail is dead
  storage_unavailable,      // the store is degraded (a commit failed) and refuses writes until a probe succeeds
  damaged,                  // open: PRAGMA quick_check found the database file damaged; refuse to open
  conflict,  // a work-layer row changed since the caller read it (a task's status, a document's latest
             // revision, a project's revision) or a unique name is taken; nothing was written
};

const std::error_category& store_category();
inline std::error_code make_error_code(store_errc e) { return {static_cast<int>(e), store_category()}; }

}  // namespace tether::store

template <>
struct std::is_error_code_enum<tether::store::store_errc> : std::true_type {};
