// e2e::catalogue — the qualification harness's definitions, read from data.
//
// `suites/*.toml` hold everything `tether e2e` runs. A file may define one
// suite (a `[suite]` table and its `[[cases]]`) and any number of profiles
// (`[profiles.ID]`) and environments (`[environments.ID]`); ids are unique
// across all files. A suite names the profiles and environments it covers;
// the matrix is every (profile, environment, case) of every selected suite,
// and one of those is a *cell*: `suite.profile.environment.case`.
//
//   auto cat = e2e::load_catalogue("suites");        // result<catalogue>
//   for (const auto& s : cat->suites) ...
//   std::string h = e2e::definition_hash(s);        // sha256 of canonical JSON
//
// A case drives the public API only, through its steps, in order:
//
//   create_session                 a new session (the cell's workspace, the
//                                  profile's server profile)
//   send  text, delivery           POST …/inputs; text is a template
//   wait  for = idle | waiting | running | runs | file, count, path, timeout_ms
//                                  (running: the session says so and an
//                                  execution runs, so the first turn has its inputs)
//   stop                           POST …/interrupt
//   reset                          POST …/reset
//   answer option | other          answers the pending question (by option
//                                  label or id, or free "other" text; both
//                                  are templates)
//   restart mode = graceful | kill SIGTERM (wait for exit) or SIGKILL, then
//                                  start the server again on the same data
//   sleep ms
//   fork run?                      POST …/fork at the end of run `run` (1-based;
//                                  absent: the last); the later steps and the
//                                  matchers act on the fork and its workspace
//
// Templates: `{marker}`, `{nonce}`, `{phrase}`, `{marker1}`…`{marker9}`,
// `{cell}`, `{runtime}`, `{environment}` expand per cell in every string of a step or a
// matcher, paths included (see expand()); `{{` and `}}` are
// literal braces. Any other `{name}` is a load error naming the file, the
// case and the field.
//
// Not applicable: a case may say it cannot apply to some runtime kinds, each
// with its reason: `not_applicable = { "codex-exec" = "why", … }` (keys are
// runtime kinds, see runtime_kinds). Its cells on a profile of such a
// runtime are not run; their result is `not_applicable` with the reason (see
// result.h), neither a pass nor a failure.
//
// Matchers judge the cell after its steps (see matchers.h for the rules):
//   message_exact text · message_occurrences text, count · message_ordered
//   texts · message_absent text · file_exact path, content · run_status
//   status, run (optional) · run_count count · session_status status · interaction_status
//   status · runtime value · environment value · usage_reported ·
//   same_agent_process runs (optional) · new_agent_process · file_absent
//   path · lease_outcomes outcomes · same_lease · agent_session_resumed
//   runs (optional)
// (`value` is a template: `runtime = "{runtime}"` checks that what ran is the
// cell's profile's runtime, so one case serves every runtime kind.)
//
// Errors (e2e_errc::invalid_definition, the message names file and field): a
// malformed TOML file, an unknown key or step or matcher kind, a missing
// required field, a duplicate id, a suite naming an unknown profile or
// environment, an unknown template name, an id that is not [a-z0-9-]+, an
// unknown runtime kind (a profile's `runtime`, a `not_applicable` key), a
// key that belongs to another runtime kind (`provider` on an agent profile,
// `wire` on any but the opencode kinds, `keep_alive_ms` / `max_processes`
// on any but the warm kinds, `command` on any but acp), an acp profile
// without `command`.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "e2e/errors.h"
#include "model/runtime_kinds.h"
#include "util/result.h"

namespace tether::e2e {

enum class step_kind {
  create_session,
  send,
  wait,
  stop,
  reset,
  answer,
  restart,
  sleep,
  fork,
  // the work layer (docs/architecture.md §6)
  create_project,
  create_task,
  approve,
  reject,
  update_project,
  create_repositories,
  reconfigure,
};
enum class wait_target { idle, waiting, running, runs, file, task, children };

// A repository the cell makes for a project: a local bare repository whose
// `branch` holds one commit with README = `content` (a template).
struct repo_spec {
  std::string name;
  std::string branch = "main";
  std::string content;
};
enum class restart_mode { graceful, kill };

struct step {
  step_kind kind = step_kind::create_session;
  // send
  std::string text;                // a template
  std::string delivery = "steer";  // steer | queue
  // wait
  wait_target target = wait_target::idle;
  std::int64_t count = 0;  // runs: at least this many finished runs
  std::string path;        // file: relative to the workspace
  std::chrono::milliseconds timeout{60'000};
  // answer: one of them
  std::string option;  // an option's label or id (a template)
  std::string other;   // free text (a template)
  // restart
  restart_mode mode = restart_mode::graceful;
  // sleep
  std::chrono::milliseconds duration{0};
  // fork: the session is forked at the end of its run `run` (1-based; 0:
  // its last), and the later steps and the matchers act on the fork
  std::int64_t run = 0;
  // create_project, update_project: the project's name (a template); its
  // repositories and setup commands (update: each only when given)
  std::string name;
  std::vector<repo_spec> repositories;
  bool has_repositories = false;
  std::vector<std::string> setup;
  bool has_setup = false;
  // create_task: its title, work mode and project (a project's name); its
  // first message is `text` (a template; empty: none)
  std::string title;
  std::string work_mode = "standard";
  std::string project;
  // reject: why (a template)
  std::string reason;
  // wait for = "task" | "children": the status to reach
  std::string status;
  // reconfigure: the profile's model and instructions for the next server
  // start (each only when given; the server restarts gracefully)
  std::optional<std::string> model;
  std::optional<std::string> instructions;
};

enum class matcher_kind {
  message_exact,
  message_occurrences,
  message_ordered,
  message_absent,
  file_exact,
  run_status,
  run_count,
  session_status,
  interaction_status,
  runtime,
  environment,
  usage_reported,
  same_agent_process,
  new_agent_process,
  // the work layer
  task_status,
  plan_revisions,
  project_count,
  workspace_repos,
  freshness_decision,
  context_absent,
  workspace_files,
  // environments (leases)
  file_absent,
  lease_outcomes,
  same_lease,
  // agent programs' own sessions
  agent_session_resumed,
};

struct matcher_spec {
  matcher_kind kind = matcher_kind::message_exact;
  std::string text;                // message_exact, message_occurrences, message_absent (template)
  std::vector<std::string> texts;  // message_ordered (templates); lease_outcomes (created | resumed | replaced)
  std::int64_t count = 0;          // message_occurrences, run_count
  std::string path;                // file_exact, file_absent (relative to the workspace)
  std::string content;             // file_exact (template; exact bytes)
  std::string status;              // run_status, session_status, interaction_status
  std::int64_t run = 0;            // run_status: the 1-based run it judges; 0 (omitted): every run
  std::vector<std::int64_t> runs;  // same_agent_process, agent_session_resumed: the 1-based runs it judges; empty (omitted): every run
  std::string value;               // runtime, environment (template)
  std::string of = "task";         // task_status: "task" (the cell's) or "children" (its child tasks)
  std::string session;             // freshness_decision: the session's decision
  std::string workspace;           // freshness_decision: the workspace's decision
};

struct case_def {
  std::string id;
  std::string title;
  std::string mode = "chat";  // chat (a session) or task (the cell's session is a task's)
  std::vector<step> steps;
  std::vector<matcher_spec> matchers;
  // runtime kind → why the case cannot apply to it (its cells are not run)
  std::map<std::string, std::string> not_applicable;
};

struct suite_def {
  std::string id;
  std::string title;
  std::string description;
  std::vector<std::string> profiles;
  std::vector<std::string> environments;
  std::vector<case_def> cases;
  std::filesystem::path file;  // where it was defined (not part of the hash)
};

// The runtime kinds a profile may name (model/runtime_kinds.h): Tether's
// own loop, the agent programs run once per turn, and the warm ones.
inline constexpr auto per_turn_runtime_kinds = model::runtime_kind::per_turn;
inline constexpr auto warm_runtime_kinds = model::runtime_kind::warm;
inline constexpr auto runtime_kinds = model::runtime_kind::all;

// Whether `kind` is one of warm_runtime_kinds.
bool is_warm_runtime(std::string_view kind);

// How a cell reaches a model and which runtime runs it.
//
// The keys each runtime kind takes (any other is refused by name):
//   every kind      title, runtime, model, model_server, base_url, api_key_env
//   native          + provider (required)
//   opencode-run    + wire (optional: chat | responses | messages)
//   the warm kinds  + keep_alive_ms (>= 100), max_processes (>= 1), both
//                     optional (absent: the server's defaults)
//   opencode, acp-opencode  + wire, as opencode-run
//   acp             + command (required: the ACP agent to run)
// An agent program chooses its own wire protocol (codex: Responses, claude:
// Messages, opencode: Chat Completions unless `wire` says), so agent
// profiles have no `provider`.
struct profile_def {
  std::string id;
  std::string title;
  std::string runtime = "native";
  std::string provider;  // native only: openai-chat | openai-responses | anthropic
  std::string wire;      // the opencode kinds only: chat | responses | messages; "": the runtime's default
  std::string model = "scripted";
  std::string model_server = "mock";          // "mock": the cell starts `tether mock-llm`
  std::string base_url;                       // used when model_server is not "mock"
  std::string api_key_env;                    // the key's variable; for "mock" the harness sets a random one
  std::string command;                        // acp only: the ACP agent's command
  std::optional<std::int64_t> keep_alive_ms;  // the warm kinds only
  std::optional<std::int64_t> max_processes;  // the warm kinds only
};

// Where the cell's server runs: "local" (one `tether serve` on this machine,
// SQLite), or "postgres-2node" (two nodes on one throwaway PostgreSQL
// database; a restart step stops the serving node and continues on the
// other; native runtimes only, see run/cluster.cpp).
// An environment's list price (its `price` table), USD; a leased cell's
// estimated runtime cost is lease time × (cpu × cpu_hour + memory_gib ×
// memory_gib_hour + disk_gib × disk_gib_hour).
struct environment_price {
  double cpu_hour = 0;
  double memory_gib_hour = 0;
  double disk_gib_hour = 0;
  std::string source;  // e.g. "daytona_public_list_price"
  std::string date;    // when it was read, YYYY-MM-DD
  std::string url;     // where ("" when none)
};

// kind: local (this machine) · postgres-2node (two nodes, one database) ·
// ssh (a real sshd the cell starts on this machine, in its own namespaces;
// the profile's turns run there) · daytona (the Daytona service at
// `api_url`, with the key in `api_key_env`; without it its cells are
// skipped, saying so).
struct environment_def {
  std::string id;
  std::string title;
  std::string kind = "local";
  // ssh, daytona: the lease's warm time and resources (0: not known), and its price
  std::optional<std::int64_t> keep_warm_ms;
  std::int64_t cpu = 0;
  std::int64_t memory_gib = 0;
  std::int64_t disk_gib = 0;
  std::optional<environment_price> price;
  // daytona
  std::string api_url;
  std::string api_key_env = "DAYTONA_API_KEY";
  std::string target;
  std::string image;
  std::string snapshot;
  std::string reach_host;  // the name a sandbox reaches this machine by (the model relay, the tool bridge)
};

// The leased kinds (ssh, daytona): a profile's turns run in a lease there.
bool is_leased_environment(std::string_view kind);

struct catalogue {
  std::vector<suite_def> suites;
  std::map<std::string, profile_def> profiles;
  std::map<std::string, environment_def> environments;
};

// Reads every *.toml directly in `dir` (sorted by name).
result<catalogue> load_catalogue(const std::filesystem::path& dir);
// One file's text, as if it were the only file (tests; `origin` names it in errors).
result<catalogue> parse_catalogue(std::string_view toml, const std::string& origin);

// The suite as canonical JSON: object keys sorted, no whitespace, every field
// of every case with its default filled in (so an omitted default and a
// written one hash the same); `file` excluded.
std::string canonical_json(const suite_def& s);
// Lowercase hex sha256 of canonical_json(s).
std::string definition_hash(const suite_def& s);

// The values a cell's templates expand to.
struct template_values {
  std::string nonce;    // 12 hex digits + "-" + attempt, e.g. "a1b2c3d4e5f6-1"
  std::string cell;     // suite.profile.environment.case
  std::string runtime;  // the cell's profile's runtime kind, e.g. "codex-exec"
  std::string repos;    // where the cell's repositories are (create_repositories), an absolute path
  std::string environment;  // the cell's environment's id, e.g. "ssh"
};
// {nonce} → nonce; {marker} → "MARK-" + nonce; {markerN} → "MARK<N>-" + nonce;
// {phrase} → "phrase-" + nonce; {cell} → cell; {runtime} → runtime;
// {environment} → the environment's id;
// {repos} → repos (the directory holding the cell's NAME.git repositories);
// {{ → {, }} → }.
// A `{` starts a name that runs to the next `}`; when another `{` or the end
// of the text comes first, that `{` is literal text ("a { b" stays as is), and
// so is a lone `}`. Names are exact (no spaces): `{ marker }` and `{}` are
// unknown names. An unknown name is e2e_errc::invalid_definition.
result<std::string> expand(std::string_view text, const template_values& v);
// The names a template uses that expand() does not know (for load errors).
std::vector<std::string> unknown_template_names(std::string_view text);
// A step or matcher with every string expanded: a step's text, option, other,
// path, name, project, reason, repositories' contents and setup commands; a
// matcher's text, texts, path, content and value (so a file
// path may carry `{marker}` too). The first unknown name is the error.
result<step> expand_step(const step& s, const template_values& v);
result<matcher_spec> expand_matcher(const matcher_spec& m, const template_values& v);

// A fresh nonce: 6 random bytes in hex, then "-<attempt>".
std::string make_nonce(int attempt);

std::string_view to_string(step_kind k);
std::string_view to_string(matcher_kind k);
std::string_view to_string(wait_target t);

}  // namespace tether::e2e
