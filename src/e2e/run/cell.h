// e2e::run_cell — one cell of the matrix, from nothing to its result record.
//
//   cell_plan plan{...};
//   cell_result r = e2e::run_cell(plan, cancelled);
//
// The cell gets its own temporary directory (data, workspace, config; named
// SCRATCH/<nonce>, short, since the server's Unix sockets live in it), its
// own scripted model (`tether mock-llm` on a free loopback port, for a
// profile whose model_server is "mock"), its own `tether serve` (port 0,
// a random token, the profile as the server's `default` profile, the API key
// in the profile's api_key_env as a random "sk-e2e-…" value for the scripted
// model) and drives the case's steps through the public API only. Then it
// observes (messages of every generation, executions, interactions, session,
// the files the matchers name), evaluates the matchers, stops the processes
// (SIGTERM, then SIGKILL after 10 s: a cleanup failure), keeps the
// artifacts (server.log, model.log, model-requests.jsonl, transcript.json,
// config.toml) in `artifacts_dir`, removes the temporary directory, and
// scans every artifact and the record itself for the API key (found:
// secret_leak).
//
// The server config (config.toml) carries the profile as `default`: its
// runtime and model; `provider` for native profiles only; base_url the
// scripted model's root + "/v1" (native, codex-exec, opencode-run, codex,
// opencode, acp-codex, acp-opencode, acp) or its root (claude-print, claude,
// acp-claude: Claude Code's client adds /v1 itself), or the profile's own
// for a real model server; api_key_env; for the agent kinds `wire`,
// `command`, `keep_alive_ms` and `max_processes` when the profile sets them
// and idle_timeout_ms = 120000.
//
// A case that is not applicable to the profile's runtime kind is not run:
// run_cell returns at once, starting nothing, a record with status
// not_applicable and the case's reason.
//
// Status and failure class:
//   passed   every matcher passed, cleanup passed, no secret found
//   failed   a matcher failed or a wait ran out (candidate_failure, or
//            provider_variance for a real model whose only failures are
//            message matchers), a secret leaked (secret_leak), or cleanup
//            failed (cleanup_failure)
//   error    the harness could not set the cell up or a process died
//            (transient_infrastructure), the server refused a step
//            (candidate_failure), a template did not expand
//            (permanent_infrastructure), or Ctrl-C (status error,
//            error "interrupted")
//
// `cancelled` is polled between steps and during waits; when it turns true
// the cell stops its processes and returns at once.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "e2e/result.h"
#include "e2e/suite.h"

namespace tether::e2e {

class database_server;

struct cell_plan {
  const suite_def* suite = nullptr;
  const case_def* kase = nullptr;
  profile_def profile;
  environment_def environment;
  int attempt = 1;
  std::string campaign_id;
  std::string suite_hash;
  std::string source_sha;
  std::string source_ref;
  std::string tether_binary;  // the `tether` to start (serve, mock-llm)
  // postgres-2node: the cluster the campaign's cells share (a database
  // each; database.h), or null: then the cell starts a cluster of its own
  // with `pg_cluster`, the script (scripts/pg-cluster beside the suites'
  // directory, or $TETHER_PG_CLUSTER)
  std::shared_ptr<database_server> database;
  std::filesystem::path pg_cluster;
  // ssh: the agent programs' npm prefix (its node_modules is seen at the
  // same path inside the host, its .bin on the remote PATH); "" for none
  std::filesystem::path agents_prefix;
  std::filesystem::path artifacts_dir;  // created; kept
  std::filesystem::path scratch_root;   // where the temporary directory goes
};

// suite.profile.environment.case
std::string cell_name(const cell_plan& p);

// The record of a cell before it ran: who it is (ids, titles, runtime,
// provider, model, source, attempt), status error, started now.
cell_result cell_record(const cell_plan& plan, const std::string& nonce);

// The case's reason when it does not apply to the plan's profile's runtime.
std::optional<std::string> not_applicable_reason(const cell_plan& plan);
// cell_record with status not_applicable, the reason, no artifacts, no time.
cell_result not_applicable_record(const cell_plan& plan, std::string reason);
// Why the cell cannot run here (a Daytona environment whose api_key_env is
// unset or empty); nullopt when it can.
std::optional<std::string> skip_reason(const cell_plan& plan);
// cell_record with status skipped and the reason, no artifacts, no time.
cell_result skipped_record(const cell_plan& plan, std::string reason);

// The cell server's config.toml for `p` (mock_url "" for a real model server).
std::string server_config(const profile_def& p, const std::string& mock_url, const std::filesystem::path& workspace,
                          std::string_view cell);

cell_result run_cell(const cell_plan& plan, const std::function<bool()>& cancelled);

}  // namespace tether::e2e
