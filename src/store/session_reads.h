// session_reads: what the projections say about sessions now: sessions and
// their listings, inputs, transcripts, executions, tool calls and
// interactions. Each call reads one snapshot on the store's reader pool and
// never waits for the writer. A read of an unknown session returns
// unknown_session; a lookup by an unknown id, not_found.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "store/task.h"
#include "store/types.h"
#include "util/result.h"

namespace tether::store {

// A session and what it waits for, read in one snapshot.
struct session_snapshot {
  session_row session;
  std::vector<input_row> pending_inputs;              // admission order
  std::vector<interaction_row> pending_interactions;  // request order
  model::usage usage;                                 // of all its executions, as session_overview's
};

// A session with how much waits in it: what a listing of sessions shows.
struct session_overview {
  session_row session;
  std::size_t pending_inputs = 0;
  std::size_t pending_interactions = 0;
  // The usage of all its executions (list_overviews only): tokens summed;
  // cost_usd the sum of the priced ones, absent when none was, with
  // cost_status "partial" when some were not.
  model::usage usage;
};

class session_reads {
 public:
  virtual ~session_reads() = default;

  virtual task<result<session_row>> get_session(session_id s) = 0;
  // get_session + pending_inputs + pending_interactions in one read.
  virtual task<result<session_snapshot>> snapshot(session_id s) = 0;
  // Most recently updated first.
  virtual task<result<std::vector<session_row>>> list_sessions(std::size_t limit) = 0;
  // list_sessions with each session's pending inputs and pending
  // interactions counted, in one read (one snapshot, one query where the
  // backend can): a listing costs one read, not one per session. With an
  // id_prefix, only the sessions whose id starts with it (how a shortened
  // id is looked up).
  virtual task<result<std::vector<session_overview>>> list_overviews(std::size_t limit, std::string id_prefix = {}) = 0;
  virtual task<result<input_row>> get_input(input_id id) = 0;
  // Pending inputs of a session in admission order.
  virtual task<result<std::vector<input_row>>> pending_inputs(session_id s) = 0;
  // Every input of a session (pending, promoted, cancelled) in admission order.
  virtual task<result<std::vector<input_row>>> list_inputs(session_id s) = 0;
  // The transcript of the current context generation, in seq order.
  virtual task<result<std::vector<message_row>>> context(session_id s) = 0;
  // Every message of every context generation in seq order: unlike
  // context(), nothing is cut at a reset or compaction and there is no
  // summary row.
  virtual task<result<std::vector<message_row>>> transcript(session_id s) = 0;
  virtual task<result<execution_row>> get_execution(execution_id id) = 0;
  virtual task<result<std::vector<execution_row>>> list_executions(session_id s) = 0;
  virtual task<result<std::vector<tool_call_row>>> unsettled_calls(session_id s) = 0;
  virtual task<result<interaction_row>> get_interaction(interaction_id id) = 0;
  virtual task<result<std::vector<interaction_row>>> pending_interactions(session_id s) = 0;
  // Every interaction of a session (any status) in request order.
  virtual task<result<std::vector<interaction_row>>> list_interactions(session_id s) = 0;
};

}  // namespace tether::store
