// The event catalogue: every event type Tether records, declared once.
//
// Each payload struct names its wire type (`name`), its payload `version` and
// its durability. Durable events are stored and projected in the append's
// transaction; ephemeral ones (deltas, progress) are only streamed to live
// subscribers and never reach the store.
//
// Versioning: when a payload changes shape, bump `version` and keep the old
// decoder in events.cpp, so rows written by an older binary stay readable.
// A stored row whose type is unknown or whose payload does not decode is a
// model_errc::undecodable error, which recovery quarantines.
//
//   name                   durability  payload
//   session.created        durable     title, workspace, profile, metadata?
//   session.updated        durable     title
//   session.reset          durable     (generation is assigned by the store)
//   input.admitted         durable     input_id, prompt, delivery, resume (v2;
//                                      v1 rows have no resume and read as true)
//   input.promoted         durable     input_id, execution_id
//   input.cancelled        durable     input_id, reason
//   input.returned         durable     input_id, execution_id, reason, returns
//                                      (the times it was given back, this one
//                                      included)
//   execution.started      durable     execution_id, node, runtime (v2; v1
//                                      rows ran the only runtime there was and
//                                      read as "native"), model (v3; older
//                                      rows read as "")
//   execution.recovered    durable     execution_id, node, attempt
//   execution.finished     durable     execution_id, outcome, reason?, error?, usage
//   step.started           durable     execution_id, step
//   step.ended             durable     finish, usage
//   step.failed            durable     error
//   step.retry_scheduled   durable     attempt, at_ms, error
//   text.delta             ephemeral   text
//   text.ended             durable     message_id, text
//   reasoning.delta        ephemeral   text
//   reasoning.ended        durable     text
//   tool.called            durable     call_id, name, input, kind (v2: local |
//                                      hosted | agent; v1 rows carry a `hosted`
//                                      flag and read as hosted or local)
//   tool.progress          ephemeral   call_id, text
//   tool.succeeded         durable     call_id, content, output_path?
//   tool.failed            durable     call_id, error
//   interaction.requested  durable     interaction_id, call_id?, kind, payload
//   interaction.resolved   durable     interaction_id, status, result
//   runtime.bound          durable     runtime, external_session_id, generation,
//                                      last_seen_seq, state (v2; v1 rows have
//                                      no generation: see runtime_bound)
//   synthetic              durable     text, reason
//   compaction.ended       durable     summary, kept_from_seq
//   env.lease.requested    durable     environment, key, name, labels: before
//                                      the provider is called for a lease
//   env.lease.acquired     durable     environment, provider_id, outcome
//                                      (created | resumed | replaced), warm
//                                      (kept from the session's last turn),
//                                      workspace (its path there)
//   env.lease.released     durable     environment, provider_id, reason (idle |
//                                      broken | lost | shutdown)
//   env.workspace.synced   durable     direction (up | down), tree_sha256,
//                                      bytes, entries, dropped, cleared
//   agent.state.saved      durable     kind, agent_session, generation,
//                                      workspace, manifest [{path, size, mode,
//                                      chunks}], bytes, stored: an agent
//                                      program's own session files, saved
//                                      after a turn (runtime/agent/portable)
//   agent.state.unavailable durable    kind, agent_session, reason: its state
//                                      could not be saved or restored; the
//                                      next turn starts a new agent session
//
// The work layer (model/task.h), in the log of the task's own session:
//   task.created           durable     task_id, title, description, status,
//                                      mode, priority, project_id?,
//                                      parent_task_id?, actor (appended with
//                                      the session's session.created)
//   task.updated           durable     the fields that change (title?,
//                                      description?, priority?, mode?,
//                                      project_id?), actor
//   task.status_changed    durable     from, to, actor, reason? (`from` must be
//                                      the task's status when it is stored)
//   task.commented         durable     comment_id, author, text
//   document.revised       durable     document ("plan"), revision_id,
//                                      base_revision_id? (the revision it was
//                                      written against: the latest one when
//                                      stored), content, author
//   document.accepted      durable     document, revision_id, actor
//   task.prepared          durable     record: what was decided before a run
//                                      (work/fingerprint.h to_json: session
//                                      and workspace decisions, reasons,
//                                      fingerprints) and done (steps)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "model/task.h"
#include "util/clock.h"
#include "util/ids.h"
#include "util/result.h"

namespace tether::model {

enum class durability { durable, ephemeral };

enum class delivery { steer, queue };
std::string_view to_string(delivery d);
std::optional<delivery> parse_delivery(std::string_view s);

enum class outcome { succeeded, failed, interrupted, waiting };
std::string_view to_string(outcome o);
std::optional<outcome> parse_outcome(std::string_view s);

// Who executes a tool call:
//   local   Tether, in the native runtime (tools/): durable before its side
//           effects start; a stop or a restart settles it failed
//   hosted  the model provider (web search, …): recorded with its result,
//           never interrupted by Tether
//   agent   an external agent program (codex, claude, …) running the turn:
//           Tether only records it, and like a local call a stop or a
//           restart settles it failed when the agent never reported its end
enum class tool_kind { local, hosted, agent };
std::string_view to_string(tool_kind k);
std::optional<tool_kind> parse_tool_kind(std::string_view s);

// Tokens and cost of a step or a whole execution. cost_status says where the
// cost comes from: "reported" (the provider sent it), "estimated" (the price
// table), "unpriced" (no price known: cost_usd stays empty, never 0),
// "partial" (a sum where some parts were unpriced), "" (nothing metered).
// Adding usages adds tokens and known costs and combines the statuses.
struct usage {
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  std::int64_t cached_input_tokens = 0;
  std::optional<double> cost_usd;
  std::string cost_status;
  usage& operator+=(const usage& o);
  bool operator==(const usage&) const = default;
};

#define TETHER_EVENT(NAME, VERSION, DURABILITY)                               \
  static constexpr std::string_view name = NAME;                              \
  static constexpr int version = VERSION;                                     \
  static constexpr durability storage = durability::DURABILITY;

struct session_created { TETHER_EVENT("session.created", 1, durable)
  std::string title;
  std::string workspace;
  std::string profile;
  boost::json::object metadata;  // the client's own attributes; absent in rows older than it
};
struct session_updated { TETHER_EVENT("session.updated", 1, durable)
  std::string title;
};
struct session_reset { TETHER_EVENT("session.reset", 1, durable)
  std::int64_t generation = 0;  // filled by the store: the new context generation
};
// A session forked whole (session/fork.h): `fork` was made from `from`'s log
// up to `at` (an execution.finished seq), a copy of `from`'s workspace as it
// was then (the snapshot `snapshot`, a commit of the node's snapshot
// repository) and the agent state saved by then. Recorded in both logs: in
// the fork's after the copied events, in the source's when the fork is made.
struct session_forked { TETHER_EVENT("session.forked", 1, durable)
  session_id from;
  session_id fork;
  std::int64_t at = 0;
  std::string snapshot;
  bool operator==(const session_forked&) const = default;
};
struct input_admitted { TETHER_EVENT("input.admitted", 2, durable)
  input_id input;
  std::string prompt;
  model::delivery delivery = delivery::steer;
  // Whether the admission asked for a run (the API's `resume`, default true).
  // Version 1 did not record it: its rows read as true, as the API defaulted.
  bool resume = true;
};
struct input_promoted { TETHER_EVENT("input.promoted", 1, durable)
  input_id input;
  execution_id execution;
};
struct input_cancelled { TETHER_EVENT("input.cancelled", 1, durable)
  input_id input;
  std::string reason;
};
// A promoted input that its execution never answered, given back to pending
// (appended with that execution's failed end): it runs again in admission
// order, in a later execution.
struct input_returned { TETHER_EVENT("input.returned", 1, durable)
  input_id input;
  execution_id execution;  // the execution it was promoted into
  std::string reason;      // why that execution could not answer it (e.g. "storage_failed")
  std::int64_t returns = 0;  // how many times the input was given back, this time included
};
struct execution_started { TETHER_EVENT("execution.started", 3, durable)
  execution_id execution;
  std::string node;
  // The runtime that runs the execution's turns ("native", "codex", …; ""
  // when the session's profile has none on this node). Version 1 did not
  // record it: its rows read as "native", the only runtime there was.
  std::string runtime = "native";
  // Which model answers (session::runtime::model()): "scripted", or the
  // model's name and where it is served. Versions 1 and 2 did not record
  // it: their rows read as "".
  std::string model;
};
struct execution_recovered { TETHER_EVENT("execution.recovered", 1, durable)
  execution_id execution;
  std::string node;
  std::int64_t attempt = 0;
};
struct execution_finished { TETHER_EVENT("execution.finished", 1, durable)
  execution_id execution;
  model::outcome outcome = outcome::succeeded;
  std::string reason;  // e.g. "user", "lease_lost", "attempt_budget"
  std::string error;
  model::usage usage;
};
struct step_started { TETHER_EVENT("step.started", 1, durable)
  execution_id execution;
  std::int64_t step = 0;
};
struct step_ended { TETHER_EVENT("step.ended", 1, durable)
  std::string finish;
  model::usage usage;
  // An agent program's own estimate of the step's cost, kept beside
  // Tether's (usage.cost_usd); absent when it gives none.
  std::optional<double> agent_cost_usd;
};
struct step_failed { TETHER_EVENT("step.failed", 1, durable)
  std::string error;
};
struct step_retry_scheduled { TETHER_EVENT("step.retry_scheduled", 1, durable)
  std::int64_t attempt = 0;
  time_ms at_ms = 0;
  std::string error;
};
struct text_delta { TETHER_EVENT("text.delta", 1, ephemeral)
  std::string text;
};
struct text_ended { TETHER_EVENT("text.ended", 1, durable)
  message_id message;
  std::string text;
};
struct reasoning_delta { TETHER_EVENT("reasoning.delta", 1, ephemeral)
  std::string text;
};
struct reasoning_ended { TETHER_EVENT("reasoning.ended", 1, durable)
  std::string text;
};
struct tool_called { TETHER_EVENT("tool.called", 2, durable)
  tether::call_id call;
  std::string tool;
  boost::json::value input;
  // Version 1 stored `hosted: bool`: true reads as hosted, false as local.
  tool_kind kind = tool_kind::local;
};
struct tool_progress { TETHER_EVENT("tool.progress", 1, ephemeral)
  tether::call_id call;
  std::string text;
};
struct tool_succeeded { TETHER_EVENT("tool.succeeded", 1, durable)
  tether::call_id call;
  std::string content;
  std::string output_path;
};
struct tool_failed { TETHER_EVENT("tool.failed", 1, durable)
  tether::call_id call;
  std::string error;
};
struct interaction_requested { TETHER_EVENT("interaction.requested", 1, durable)
  interaction_id interaction;
  tether::call_id call;  // the waiting tool call; empty when none
  std::string kind;      // "question", "confirmation" (a plan to approve)
  boost::json::value payload;
};
struct interaction_resolved { TETHER_EVENT("interaction.resolved", 1, durable)
  interaction_id interaction;
  std::string status;    // "answered", "cancelled"
  boost::json::value result;
};
// What an external runtime needs to resume its agent's session next turn.
// `generation` is the context generation the binding was made in: the store
// projects a binding only while that is the session's generation, so a bind
// written after a reset (by a turn of the old generation) does not bring
// the old agent session back. It must be set to be stored (the store refuses
// a binding without one; the runner's turn host fills in the turn's
// generation when a runtime leaves it empty). Version 1 rows carry no
// generation and decode with none: they were projected when written, at the
// generation of their time, which the schema migration recorded with the
// projection (store/sqlite/schema.cpp).
// `state` is opaque to Tether (a runtime's own JSON or text), at most
// max_state_bytes: a larger one does not decode, so the store refuses it.
struct runtime_bound { TETHER_EVENT("runtime.bound", 2, durable)
  static constexpr std::size_t max_state_bytes = 16U * 1024U;
  std::string runtime;
  std::string external_session_id;
  std::optional<std::int64_t> generation;
  std::int64_t last_seen_seq = 0;  // the last seq of the session the agent has seen
  std::string state;
};
struct synthetic { TETHER_EVENT("synthetic", 1, durable)
  std::string text;
  std::string reason;  // e.g. "restart"
};
struct compaction_ended { TETHER_EVENT("compaction.ended", 1, durable)
  std::string summary;
  std::int64_t kept_from_seq = 0;
};

// ---- environments (env/): where a session's turns run when not here ----
struct env_lease_requested { TETHER_EVENT("env.lease.requested", 1, durable)
  std::string environment;  // [environments.NAME]
  std::string key;          // "session-<id>"
  std::string provider_name;  // the provider-side name the key gives ("name" in the payload)
  boost::json::object labels;
  bool operator==(const env_lease_requested&) const = default;
};
struct env_lease_acquired { TETHER_EVENT("env.lease.acquired", 1, durable)
  std::string environment;
  std::string provider_id;
  std::string outcome;  // created | resumed | replaced
  bool warm = false;    // kept from the session's last turn: no acquire, a check
  std::string workspace;
  bool operator==(const env_lease_acquired&) const = default;
};
struct env_lease_released { TETHER_EVENT("env.lease.released", 1, durable)
  std::string environment;
  std::string provider_id;
  std::string reason;  // idle | broken | lost | shutdown
  bool operator==(const env_lease_released&) const = default;
};
struct env_workspace_synced { TETHER_EVENT("env.workspace.synced", 1, durable)
  std::string direction;  // up: the host copy went to the lease; down: it came back
  std::string tree_sha256;
  std::int64_t bytes = 0;
  std::int64_t entries = 0;
  std::int64_t dropped = 0;  // down: device nodes, FIFOs, sockets not made here
  std::int64_t cleared = 0;  // down: set-ID or sticky bits cleared
  bool operator==(const env_workspace_synced&) const = default;
};

// ---- an agent program's own session state (runtime/agent/portable/) ----
// One file of a saved state: its path under the agent's home (relative,
// no "..", checked when decoded), its size and permission bits, and the
// chunks that hold it in the store, in order (SHA-256 hex of up to
// state_chunk_bytes each; store/agent_state_store.h).
struct state_file {
  static constexpr std::size_t chunk_bytes = 1U << 20U;
  std::string path;
  std::int64_t size = 0;
  std::int64_t mode = 0600;
  std::vector<std::string> chunks;
  bool operator==(const state_file&) const = default;
};
// Saved after a turn of an agent program: what another node (or an
// environment) restores before resuming `agent_session` there. The store
// refuses it unless every chunk is stored.
struct agent_state_saved { TETHER_EVENT("agent.state.saved", 1, durable)
  std::string kind;           // the runtime kind ("claude-print")
  std::string agent_session;  // the binding's external_session_id
  std::int64_t generation = 0;
  std::string workspace;      // where the agent ran (claude keys its files by it)
  std::vector<state_file> manifest;
  std::int64_t bytes = 0;   // the files' total size
  std::int64_t stored = 0;  // compressed bytes of the chunks this save added to the store
  bool operator==(const agent_state_saved&) const = default;
};
// The state of `agent_session` could not be saved (after a turn) or
// restored (before one): the next turn elsewhere starts a new agent session
// with the transcript, and this says why.
struct agent_state_unavailable { TETHER_EVENT("agent.state.unavailable", 1, durable)
  std::string kind;
  std::string agent_session;
  std::string reason;
  bool operator==(const agent_state_unavailable&) const = default;
};

// ---- the work layer ----
// `actor` says who acted: "user" (the API or the CLI), "agent" (the task's
// agent, through its tools), "tether" (the work layer itself, e.g. the plan
// handoff).
struct task_created { TETHER_EVENT("task.created", 1, durable)
  task_id task;
  std::string title;
  std::string description;
  task_status status = task_status::todo;
  work_mode mode = work_mode::standard;
  std::int64_t priority = 0;
  project_id project;  // empty: none
  task_id parent;      // empty: none
  std::string actor;
  bool operator==(const task_created&) const = default;
};
struct task_updated { TETHER_EVENT("task.updated", 1, durable)
  std::optional<std::string> title;
  std::optional<std::string> description;
  std::optional<std::int64_t> priority;
  std::optional<work_mode> mode;
  std::optional<project_id> project;
  std::string actor;
  bool operator==(const task_updated&) const = default;
};
struct task_status_changed { TETHER_EVENT("task.status_changed", 1, durable)
  task_status from = task_status::todo;
  task_status to = task_status::todo;
  std::string actor;
  std::string reason;
  bool operator==(const task_status_changed&) const = default;
};
struct task_commented { TETHER_EVENT("task.commented", 1, durable)
  comment_id comment;
  std::string author;
  std::string text;
  bool operator==(const task_commented&) const = default;
};
struct document_revised { TETHER_EVENT("document.revised", 1, durable)
  std::string document;  // "plan"
  revision_id revision;
  revision_id base;      // empty: written as the first revision
  std::string content;
  std::string author;
  bool operator==(const document_revised&) const = default;
};
struct task_prepared { TETHER_EVENT("task.prepared", 1, durable)
  boost::json::object record;
  bool operator==(const task_prepared&) const = default;
};
struct document_accepted { TETHER_EVENT("document.accepted", 1, durable)
  std::string document;
  revision_id revision;
  std::string actor;
  bool operator==(const document_accepted&) const = default;
};
#undef TETHER_EVENT

using payload = std::variant<session_created, session_updated, session_reset, session_forked, input_admitted, input_promoted,
                             input_cancelled, input_returned, execution_started, execution_recovered, execution_finished,
                             step_started, step_ended, step_failed, step_retry_scheduled, text_delta, text_ended,
                             reasoning_delta, reasoning_ended, tool_called, tool_progress, tool_succeeded,
                             tool_failed, interaction_requested, interaction_resolved, runtime_bound, synthetic,
                             compaction_ended, env_lease_requested, env_lease_acquired, env_lease_released,
                             env_workspace_synced, agent_state_saved, agent_state_unavailable, task_created,
                             task_updated, task_status_changed, task_commented, document_revised, document_accepted,
                             task_prepared>;

// Catalogue lookups over the variant above.
std::string_view type_name(const payload& p);
int type_version(const payload& p);
durability type_durability(const payload& p);
bool is_known_type(std::string_view name);

// Codecs. encode() produces the stored `data` object; decode() reads a stored
// row back given its type name and version (model_errc::undecodable on any
// mismatch: unknown type, unsupported version, missing or mistyped field).
boost::json::object encode(const payload& p);
result<payload> decode(std::string_view type, int version, const boost::json::object& data);

// The usage object as payloads store it (also the executions projection).
boost::json::object encode_usage(const usage& u);
result<usage> decode_usage(const boost::json::value& v);  // model_errc::undecodable when malformed

// One recorded event.
struct event {
  event_id id;
  session_id session;
  event_seq seq;
  time_ms time = 0;
  model::payload body;

  [[nodiscard]] std::string_view type() const { return type_name(body); }
  template <class T> [[nodiscard]] const T* as() const { return std::get_if<T>(&body); }
};

// {id, session_id, seq, type, version, time, data}: the public JSON shape.
boost::json::object to_json(const event& e);

}  // namespace tether::model
