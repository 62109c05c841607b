// e2e results: one record per cell, one per campaign, and the history.
//
// On disk (an --out directory, `e2e-results/` by default):
//
//   OUT/campaigns/<campaign id>/cells/<cell>.attempt-<n>.json   tether.e2e.result/v1
//   OUT/campaigns/<campaign id>/cells/<cell>.attempt-<n>/       artifacts: server and
//                                                               model logs, transcript.json
//   OUT/campaigns/<campaign id>/campaign.json                   tether.e2e.campaign/v1
//   OUT/history.json                                            tether.e2e.history/v1
//   OUT/dashboard.html, OUT/dashboard.png                       (tether e2e report)
//
// Field names in JSON are camelCase, as in the result records operators
// already read; absent values are JSON null, never 0 (a missing cost is
// "unavailable", not $0).
//
// cell_result JSON (tether.e2e.result/v1):
//   schema, executionId, suiteId, suiteTitle, suiteDescription,
//   suiteDefinitionHash, source {sha, ref},
//   attempt, status (passed|failed|error|skipped|not_applicable), cell,
//   profileId, environmentId, caseId, caseTitle, runtime, provider (null for
//   an agent-program runtime: it picks its own wire protocol), model, sessionId,
//   runIds [..], nonce, startedAt, finishedAt (ISO 8601 UTC), durationMs,
//   turns [{runId, inputId, schedulerLatencyMs, runDurationMs, responseMs,
//           leaseOutcome (created | resumed | replaced; null: the turn ran
//           in no lease), leaseDurationMs}],
//   usage [{runId, outcome, inputTokens, outputTokens, cachedInputTokens,
//           totalTokens, costUsd, costStatus}],
//   matcherResults [{kind, description, passed, expected, actual, why}],
//   failureClass (null when passed), error (null or one line),
//   notApplicableReason (null unless status is not_applicable),
//   cleanup {status: passed|failed, details},
//   billing {llm {runCount, runsWithTokenUsage, runsWithReportedCost,
//                 inputTokens, outputTokens, cachedInputTokens, totalTokens,
//                 reportedCostUsd, costStatus},
//            runtime {provider (the environment's kind), durationMs,
//                     agentTimeMs and agentRunDurationMs (the runs' time),
//                     leaseDurationMs (null without a lease), leaseCount,
//                     cpuCores, memoryGiB, diskGiB (null: not known),
//                     estimatedListCostUsd (null: unpriced), costStatus
//                     (not_metered | estimated | unpriced), costSource,
//                     pricingAsOf, pricingUrl},
//            reportedCostUsd (the models'), estimatedRuntimeCostUsd,
//            observedAndEstimatedCostUsd (their sum), complete (every run's
//            model cost reported and the runtime's known)},
//   artifacts (directory, relative to the result file)
//
// Failure classes and retries: candidate_failure (a matcher failed: Tether's
// fault), transient_infrastructure (a port, a process start, a timeout of the
// harness itself), provider_variance (a real model answered differently),
// permanent_infrastructure (a missing binary, a bad definition),
// secret_leak (the profile's API key appears in an artifact),
// cleanup_failure (a process would not stop, a directory would not go).
// Only the transient classes (transient_infrastructure, provider_variance)
// are retried, at most once, in a fresh cell (new nonce, data, ports).
//
// skipped: the cell was not run because something it needs is not here
// (skippedReason says what, e.g. the Daytona cells without DAYTONA_API_KEY)
// or the campaign was interrupted before it (error "interrupted before it
// started"). A cell skipped for a missing credential is, like
// not_applicable, neither a pass nor a failure; an interrupted one is
// incomplete.
//
// not_applicable: the case declared that it cannot apply to the profile's
// runtime kind (suite.h), so the cell was not run. It is its own state, not
// a pass, a failure or an incomplete cell: tallies count it apart, and it
// never makes a campaign red (or green).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "e2e/errors.h"
#include "e2e/matchers.h"
#include "util/result.h"

namespace tether::e2e {

enum class cell_status { passed, failed, error, skipped, not_applicable };
enum class failure_class {
  candidate_failure,
  transient_infrastructure,
  provider_variance,
  permanent_infrastructure,
  secret_leak,
  cleanup_failure,
};
std::string_view to_string(cell_status s);
std::string_view to_string(failure_class f);
std::optional<cell_status> parse_cell_status(std::string_view s);
std::optional<failure_class> parse_failure_class(std::string_view s);
bool retryable(failure_class f);  // transient_infrastructure, provider_variance

struct turn_timing {
  std::string run_id;
  std::string input_id;
  std::optional<double> scheduler_latency_ms;  // input admitted → model request received
  std::optional<double> run_duration_ms;       // execution started → finished
  std::optional<double> response_ms;           // input sent → its run finished
  std::string lease_outcome;                   // "" when the turn ran in no lease
  std::optional<double> lease_duration_ms;     // its lease's acquisition → the turn's sync down
};

// One turn's lease (observed_lease, kept in the record's turns and billing).
struct lease_use {
  std::string run_id;  // the run it served ("" when none was matched)
  std::string outcome;
  std::int64_t duration_ms = 0;
};

struct run_usage {
  std::string run_id;
  std::string outcome;
  std::optional<std::int64_t> input_tokens;  // nullopt: the run reported no usage
  std::optional<std::int64_t> output_tokens;
  std::optional<std::int64_t> cached_input_tokens;
  std::optional<double> cost_usd;
  std::string cost_status;  // reported | priced | unpriced | unavailable
};

struct llm_billing {
  std::int64_t run_count = 0;
  std::int64_t runs_with_token_usage = 0;
  std::int64_t runs_with_reported_cost = 0;
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  std::int64_t cached_input_tokens = 0;
  std::int64_t total_tokens = 0;
  std::optional<double> reported_cost_usd;  // nullopt unless some run had a cost
  std::string cost_status = "unavailable";  // reported | partial | unpriced | unavailable
};

// What the cell's environment costs: lease time × its list price. The
// provider, resources and price come from the environment's definition
// (before compute_billing); the rest compute_billing fills.
struct runtime_billing {
  std::string provider = "local";
  std::int64_t duration_ms = 0;    // the cell's wall time
  std::int64_t agent_time_ms = 0;  // sum of run durations
  std::optional<std::int64_t> lease_duration_ms;  // nullopt: the environment leases nothing
  std::int64_t lease_count = 0;
  std::optional<std::int64_t> cpu_cores, memory_gib, disk_gib;
  std::optional<environment_price> price;
  std::optional<double> estimated_cost_usd;
  std::string cost_status = "not_metered";  // not_metered | estimated | unpriced
  std::string cost_source = "local_not_metered";
};

struct cell_result {
  std::string execution_id;  // the campaign's id + "/" + cell + "/" + attempt
  std::string suite_id;
  std::string suite_title;        // for the dashboard; "" when unknown
  std::string suite_description;  // for the dashboard; "" when unknown
  std::string suite_definition_hash;
  std::string source_sha;
  std::string source_ref;
  int attempt = 1;
  cell_status status = cell_status::error;
  std::string cell;
  std::string profile_id;
  std::string environment_id;
  std::string case_id;
  std::string case_title;
  std::string runtime;
  std::string provider;
  std::string model;
  std::string session_id;
  std::vector<std::string> run_ids;
  std::string nonce;
  std::int64_t started_at_ms = 0;  // unix ms; written as ISO 8601
  std::int64_t finished_at_ms = 0;
  std::int64_t duration_ms = 0;
  std::vector<turn_timing> turns;
  std::vector<run_usage> usage;
  std::vector<matcher_result> matchers;
  std::optional<failure_class> failure;
  std::string error;                  // one line, "" when none
  std::string not_applicable_reason;  // the case's reason; "" unless status is not_applicable
  std::string skipped_reason;         // what the cell needs that is not here; "" unless skipped for it
  std::vector<lease_use> leases;      // the turns' leases, in order (a leased environment)
  bool cleanup_passed = true;
  std::string cleanup_details;
  llm_billing llm;
  runtime_billing runtime_cost;
  std::string artifacts;  // relative to the result file's directory
  // A task cell's freshness decision before its last run (configFreshness:
  // {session, workspace} each {decision, reasons, categories, fingerprints},
  // and runs: how many runs were prepared); null for other cells.
  boost::json::value config_freshness;
};

// Fills llm/runtime billing from `usage` and the durations (the rules: a run
// without tokens counts as without usage; cost_status is "reported" when
// every run reported a cost, "partial" when some did, "unpriced" when runs
// reported tokens but none a cost, "unavailable" when no run reported usage).
void compute_billing(cell_result& r);

boost::json::value to_json(const cell_result& r);
result<cell_result> cell_result_from_json(const boost::json::value& v);

struct suite_tally {
  std::string suite_id;
  int selected = 0;  // the selected cells that apply: passed + failed + incomplete
  int passed = 0;    // status passed and cleanup passed
  int failed = 0;
  int incomplete = 0;      // error or skipped
  int not_applicable = 0;  // selected but not applicable to their runtime; not in `selected`
  int skipped = 0;         // not run for a missing credential (skipped_reason); not in `selected`
  int retries = 0;
};

// tether.e2e.campaign/v1: id, startedAt, finishedAt, durationMs, source
// {sha, ref} (of the suites' git checkout; empty when they are not in one),
// binary {path, version} (the `tether` that ran, its `version` line with the
// revision it was built from), selection {suite, profile, env, case filters}, totals (a suite_tally
// without suite id: selected, passed, failed, incomplete, notApplicable,
// retries), suites [suite_tally], cells [{cell, attempt, status,
// failureClass, result (path relative to the campaign file)}], status
// (passed when every selected cell that applies passed, and one did).
struct campaign {
  std::string id;  // sortable: UTC time + "-" + 4 hex digits
  std::int64_t started_at_ms = 0;
  std::int64_t finished_at_ms = 0;
  std::string source_sha;  // "" (or "unknown" in older records): the suites are not in a git checkout
  std::string source_ref;
  std::string binary_path;
  std::string binary_version;  // "tether 0.1.0 (revision 1a2b3c4d5e6f)"; "" when unknown
  std::map<std::string, std::string> selection;
  std::vector<suite_tally> suites;
  suite_tally totals;
  struct cell_ref {
    std::string cell;
    int attempt = 1;
    cell_status status = cell_status::error;
    std::optional<failure_class> failure;
    std::string result;  // path relative to the campaign directory
  };
  std::vector<cell_ref> cells;  // the final attempt of each cell last
  // Every selected cell that applies passed (and at least one applied):
  // not-applicable cells neither pass nor fail a campaign.
  [[nodiscard]] bool green() const;
};

boost::json::value to_json(const campaign& c);
result<campaign> campaign_from_json(const boost::json::value& v);

// Tallies the final attempts of `results` (one entry per cell and attempt).
// `cells` lists every attempt, cells in first-seen order, each cell's
// attempts ascending, result "cells/<cell>.attempt-<n>.json"; a passed cell
// whose cleanup failed is listed and counted as failed (cleanup_failure).
// started/finished span the results; source comes from the first result;
// selection is left empty for the caller.
campaign summarize(std::string id, const std::vector<cell_result>& results);

// tether.e2e.history/v1: campaigns [{id, startedAt, status, selection,
// totals, suites [suite_tally + the suite's inputTokens, outputTokens,
// cachedInputTokens, costUsd, agentTimeMs], inputTokens, outputTokens,
// cachedInputTokens, costUsd, agentTimeMs, path}], oldest first, plus
// "latest" and "latestGreen" ids (null when none). Tokens, cost and agent
// time count every attempt. An entry without a selection (older records)
// selected everything.
struct usage_totals {
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  std::int64_t cached_input_tokens = 0;
  std::optional<double> cost_usd;  // nullopt unless some run had a cost
  std::int64_t agent_time_ms = 0;
  void add(const cell_result& r);
};
struct history_entry {
  std::string id;
  std::int64_t started_at_ms = 0;
  bool green = false;
  std::map<std::string, std::string> selection;  // the campaign's filters; "" or absent: all
  suite_tally totals;
  std::vector<suite_tally> suites;
  std::map<std::string, usage_totals> suite_usage;  // by suite id
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  std::int64_t cached_input_tokens = 0;
  std::optional<double> cost_usd;
  std::int64_t agent_time_ms = 0;
  std::string path;  // the campaign file, relative to OUT
};
struct history {
  std::vector<history_entry> campaigns;
  std::string latest;
  std::string latest_green;
};
boost::json::value to_json(const history& h);
result<history> history_from_json(const boost::json::value& v);

// Reads OUT/history.json (an empty history when there is none), adds or
// replaces `c`, writes it back atomically (temp file + rename).
result<history> record_campaign(const std::filesystem::path& out, const campaign& c,
                                const std::vector<cell_result>& results);

// Writes `v` pretty-printed to `path` atomically.
result<void> write_json_file(const std::filesystem::path& path, const boost::json::value& v);
result<boost::json::value> read_json_file(const std::filesystem::path& path);

// ISO 8601 UTC with milliseconds ("2026-11-30T09:01:02.345Z").
std::string iso8601(std::int64_t unix_ms);

}  // namespace tether::e2e
