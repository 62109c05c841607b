// Value types of the store: append requests, fences, and projection rows.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/events.h"
#include "util/clock.h"
#include "util/ids.h"

namespace tether::store {

// A condition checked inside the append's transaction; if it fails nothing
// is written and the append returns store_errc::fence_failed.
struct fence {
  // The session's lease must be held by this owner and fresh at the store's
  // now (event_store.h, Time).
  std::optional<std::string> lease_owner;
  // The session's last seq must equal this (optimistic concurrency).
  std::optional<event_seq> last_seq;
  // The session must have no open execution (used by execution.started).
  bool no_open_execution = false;
  // Set (with lease_owner): first claim the lease for lease_owner for this
  // many ms, with claim_lease's rules, in the same transaction (so
  // starting an execution is one commit); a fresh lease of another owner
  // fails the append with lease_held.
  std::optional<time_ms> claim_ttl_ms;
  // Set (with lease_owner): after the events, release the lease as
  // release_lease() does, in the same transaction (a terminal event and the
  // release are one commit).
  bool release_lease = false;
};

struct append_request {
  session_id session;
  std::vector<model::payload> events;  // durable payloads only; appended in order, all or nothing
  std::optional<store::fence> fence;
  time_ms time = 0;  // event time; 0 means the store's clock
};

// An append of one event. (Also keeps brace-initialized vectors out of
// coroutine bodies, which g++ 12 miscompiles.)
inline append_request single_event(session_id s, model::payload p, std::optional<store::fence> f = std::nullopt) {
  append_request r;
  r.session = std::move(s);
  r.events.push_back(std::move(p));
  r.fence = std::move(f);
  return r;
}

enum class input_status { pending, promoted, cancelled };
std::string_view to_string(input_status s);

struct input_row {
  input_id id;
  session_id session;
  std::string prompt;
  model::delivery delivery = model::delivery::steer;
  input_status status = input_status::pending;
  event_seq admitted_seq;
  std::optional<execution_id> execution;  // the execution it was promoted into
  std::optional<event_seq> promoted_seq;  // the seq of its input.promoted event
  std::int64_t returns = 0;               // times it was given back to pending (input.returned)
};

struct append_result {
  std::vector<model::event> events;  // as stored, with ids, seqs and times
  event_seq last_seq;
};

struct lease {
  std::string owner;
  time_ms expires_at = 0;
  std::int64_t attempts = 0;  // recovery attempts of the open execution; survives takeovers
};

// An external runtime's binding to its agent's own session (runtime.bound
// of the session's current context generation; a reset drops it).
struct runtime_binding {
  std::string runtime;
  std::string external_session_id;
  std::int64_t generation = 0;  // always the session's generation when projected
  event_seq last_seen_seq;      // the last seq of the session the agent has seen
  std::string state;            // the runtime's own, at most runtime_bound::max_state_bytes
};

struct session_row {
  session_id id;
  event_seq last_seq;
  std::int64_t generation = 0;  // context generation; +1 per session.reset
  std::string title;
  std::string workspace;
  std::string profile;
  boost::json::object metadata;                // the client's attributes from session.created
  std::optional<execution_id> open_execution;  // started, not finished
  bool continuation_pending = false;           // an interaction was answered; a turn must follow
  std::string runtime;                         // the runtime of its latest execution ("" before the first)
  std::optional<runtime_binding> binding;      // from runtime.bound of this generation, cleared by reset
  std::optional<store::lease> lease;
  bool quarantined = false;
  std::string quarantine_reason;
  time_ms created_at = 0;
  time_ms updated_at = 0;
  // A fork (session.forked in its own log): the session it was made from
  // and the seq of that session's log it copies up to.
  struct origin {
    session_id session;
    std::int64_t at = 0;
    bool operator==(const origin&) const = default;
  };
  std::optional<origin> forked_from;
};

enum class execution_status { running, finished };
struct execution_row {
  execution_id id;
  session_id session;
  std::string node;
  std::string runtime;  // the runtime that ran it (execution.started)
  std::string model;    // the model that answered ("" before it was recorded)
  execution_status status = execution_status::running;
  std::optional<model::outcome> outcome;
  std::string reason;
  std::string error;
  model::usage usage;
  event_seq started_seq;
  std::optional<std::int64_t> open_step;  // step.started without step.ended/failed
  time_ms started_at = 0;                 // time of execution.started
  std::optional<time_ms> finished_at;     // time of execution.finished
  // The state of the last runtime.bound recorded while it ran, when it had
  // one: an agent runtime's process identity ({"pid","started_ms"}).
  std::string agent_state;
};

// One entry of the model-facing transcript (what a runtime is given).
// `summary` is never stored as a message: context() puts a compaction's
// summary first, standing for the messages it replaced.
enum class message_role { user, assistant, tool_call, tool_result, notice, summary };
std::string_view to_string(message_role r);
struct message_row {
  event_seq seq;
  std::int64_t generation = 0;
  message_role role = message_role::user;
  std::string id;            // message id (user/assistant) or call id (tool_call/tool_result)
  std::string text;          // prompt, answer text, tool result content or error, notice text
  std::string tool;          // tool name for tool_call
  boost::json::value input;  // tool input for tool_call
  bool is_error = false;     // tool_result that failed
  // tool_call/tool_result: who executed the call (local for other roles).
  model::tool_kind call_kind = model::tool_kind::local;
};

enum class call_status { running, succeeded, failed };
struct tool_call_row {
  call_id id;
  session_id session;
  std::optional<execution_id> execution;
  std::string tool;
  boost::json::value input;
  model::tool_kind kind = model::tool_kind::local;
  call_status status = call_status::running;
  std::string result;  // content or error
};

enum class interaction_status { pending, answered, cancelled };
struct interaction_row {
  interaction_id id;
  session_id session;
  std::optional<call_id> call;
  std::string kind;
  boost::json::value payload;
  interaction_status status = interaction_status::pending;
  boost::json::value result;
};

// A session recovery should look at: an open execution whose lease is
// expired, absent, or held by a previous incarnation of this node.
struct abandoned_session {
  session_id session;
  execution_id execution;
  std::optional<store::lease> lease;
};

// Whether the store can write (event_store::health()).
//   ok        writes are taken
//   degraded  a commit failed (full disk, I/O error); writes are refused at
//             once with storage_unavailable while the store retries in the
//             background, and taken again after a probe write succeeds
enum class store_state { ok, degraded };
std::string_view to_string(store_state s);
struct store_health {
  store_state state = store_state::ok;
  std::string reason;  // degraded: why the last commit or probe failed
  time_ms since = 0;   // degraded: when writes started failing (the store's clock)
};

}  // namespace tether::store
