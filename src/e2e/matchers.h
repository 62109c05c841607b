// e2e matchers: what a cell observed, and the rules that judge it.
//
//   observation o = ...;                    // filled from the public API
//   auto results = e2e::evaluate(case_def.matchers, o, values);
//
// Text comparisons normalize both sides first: CRLF → LF, every run of
// whitespace → one space, trimmed (normalize()).
//
//   message_exact       the last run's final assistant text (the last
//                       assistant message of the last run that has one)
//                       equals `text`
//   message_occurrences non-overlapping occurrences of `text` in all the
//                       cell's assistant text (each message normalized, then
//                       counted separately and summed) equal `count`
//   message_ordered     every one of `texts` occurs in the assistant text,
//                       in that order (messages joined with "\n", in order;
//                       each text found after the end of the previous one)
//   message_absent      `text` occurs in no assistant message
//   file_exact          the workspace file `path` exists and its bytes equal
//                       `content` (no normalization; expected and actual are
//                       shown with \n escaped)
//   run_status          every run has outcome `status` (and there is at least
//                       one); with `run = N`, the Nth run in start order has
//                       it (fewer than N runs fails)
//   run_count           the number of runs equals `count`
//   session_status      the session's final status equals `status`
//   interaction_status  the last interaction's status equals `status`
//   runtime             every run ran the runtime `value` (the execution
//                       view's runtime; the session's when there was no run).
//                       `value` is a template: "{runtime}" is the cell's
//                       profile's runtime kind
//   environment         the environment id equals `value` (a template)
//   usage_reported      every run reported token usage (input + output > 0)
//   same_agent_process  the runs named in `runs` (1-based, start order;
//                       omitted: every run) were all served by one agent
//                       process: each has an agent_process and all their
//                       pids are equal (a named run that was not observed,
//                       no run at all, or a run without a process fails)
//   agent_session_resumed  the runs named in `runs` (omitted: every run)
//                       continued one agent session of the program's own:
//                       each recorded a runtime.bound naming the same agent
//                       session, no agent.state.unavailable was recorded,
//                       and no request the scripted model received carried
//                       a transcript rendered for a new agent session (so
//                       the agent's own context was used, wherever the
//                       run's node was)
//   task_status         the cell's task (of = "task", the default) has
//                       status `status`; of = "children": it has at least
//                       one child task and every child has it
//   plan_revisions      the cell's task's plan has `count` revisions
//   project_count       the server has `count` projects
//   workspace_repos     the task's workspace (of = "children": its first
//                       child task's) holds a checkout of each of `repos`
//                       ("NAME@BRANCH": the directory NAME on branch BRANCH)
//   freshness_decision  the preparation before run `run` (1-based; omitted:
//                       the last) decided `session` and `workspace`, with
//                       `reasons` (the session's, then the workspace's)
//   workspace_files     the task's workspace holds `count` files (any depth,
//                       .git directories not counted)
//   context_absent      no model request made after the plan was approved
//                       carries `text` (the scripted model's request log;
//                       fails when no approval or no log was observed)
//   file_absent         the workspace file `path` does not exist (after the
//                       last turn's sync, in a leased environment)
//   lease_outcomes      the session's leases, one per turn placed in an
//                       environment (env.lease.acquired, in order), had the
//                       `outcomes` exactly (created | resumed | replaced)
//   same_lease          every lease the session acquired (at least one) has
//                       one provider id: its turns ran in one sandbox or host
//                       directory
//   new_agent_process   the last run was served by an agent process whose
//                       pid differs from that of every earlier run's
//                       process (earlier runs without one are skipped; it
//                       needs at least one earlier run with a process)
//
// A warm runtime keeps one agent process per session across turns, so its
// runs share a pid until the process is replaced (a server restart, the
// keep-alive running out); a native run has no agent process.
// Identity is the pid alone, as the API reports it; `started_ms` is shown.
//
// Each result says what was expected, what was seen (trimmed to 400 bytes
// with "…") and, when it failed, why in one sentence. A template that does
// not expand fails its matcher with that reason (never throws).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/array.hpp>

#include "e2e/suite.h"

namespace tether::e2e {

struct observed_message {
  std::string role;  // user | assistant | synthetic | …
  std::string text;
  std::string run_id;  // the execution that produced it ("" for user input)
};

// The agent program's process that served a run (the execution view's
// `agent_process`).
struct observed_process {
  std::int64_t pid = 0;
  std::int64_t started_ms = 0;
};

struct observed_run {
  std::string id;
  std::string runtime;  // the runtime that ran it (the execution view's)
  std::string outcome;  // succeeded | failed | interrupted | waiting | "" while open
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  std::int64_t cached_input_tokens = 0;
  bool usage_reported = false;     // the run carried a usage object with tokens
  std::optional<double> cost_usd;  // reported or priced; nullopt: no cost
  std::string cost_status;         // reported | priced | unpriced | unavailable
  std::int64_t started_at_ms = 0;
  std::int64_t finished_at_ms = 0;
  std::optional<observed_process> agent_process;  // nullopt: none (native, or not reported)
  std::string agent_session;  // the agent session its runtime.bound named last ("" for none)
};

// One env.lease.acquired of the session: a turn placed in an environment,
// from its acquisition to the end of its use (the turn's sync down, the
// lease's release, or the next acquisition; 0 when none was seen).
struct observed_lease {
  std::string environment;
  std::string provider_id;
  std::string outcome;  // created | resumed | replaced
  bool warm = false;    // taken from this node's warm pool (no request)
  std::int64_t acquired_ms = 0;
  std::int64_t done_ms = 0;
  std::string run_id;  // the run it served ("" when none had started)
};

struct observed_interaction {
  std::string id;
  std::string status;  // pending | answered | …
};

// What the work layer showed (task cells).
struct observed_work {
  bool has_task = false;
  std::string task_status;
  std::vector<std::string> child_statuses;
  std::int64_t plan_revisions = 0;
  std::int64_t project_count = -1;   // -1: not read
  std::int64_t workspace_files = -1;  // -1: not read
  std::map<std::string, std::string> repo_branches;        // checkout directory → its branch ("" when none)
  std::map<std::string, std::string> child_repo_branches;  // the same in the first child task's workspace
  boost::json::array preparations;                  // the task's, as the API shows them
  std::optional<std::vector<std::string>> requests_after_approval;  // nullopt: no approval or no log
};

struct observation {
  std::vector<observed_message> messages;  // every generation, in order
  std::vector<observed_run> runs;          // in start order
  std::vector<observed_interaction> interactions;
  std::string session_status;
  std::string runtime;  // what ran the session's latest execution (the session view's), not the profile's

  std::string environment;
  std::vector<observed_lease> leases;  // the session's, in order
  // Agent programs' state: why it could not be saved or restored (each
  // agent.state.unavailable's reason), and whether a request the scripted
  // model received carried a transcript rendered for a new agent session
  // (nullopt: its requests were not observed).
  std::vector<std::string> agent_state_unavailable;
  std::optional<bool> transcript_replayed;
  // workspace file → bytes, for the files the matchers name (absent: missing)
  std::map<std::string, std::string> files;
  observed_work work;
};


struct matcher_result {
  std::string kind;
  std::string description;  // e.g. `message_exact "MARK-…"`
  bool passed = false;
  std::string expected;
  std::string actual;
  std::string why;  // empty when passed
};

// The work matchers (matchers_work.cpp).
matcher_result judge_work(const matcher_spec& spec, const observation& o);
// The environment matchers (matchers_env.cpp): file_absent, lease_outcomes, same_lease.
matcher_result judge_env(const matcher_spec& spec, const observation& o);
// The checkout directories the matchers' workspace_repos name.
std::vector<std::string> repos_to_check(const std::vector<matcher_spec>& matchers);

std::string normalize(std::string_view text);
// `text` cut to `limit` bytes at a UTF-8 boundary, with "…" when cut.
std::string trim_for_display(std::string_view text, std::size_t limit = 400);

// One result per matcher, in order; each judged with its templates expanded
// (expand_matcher: every string, file paths included).
std::vector<matcher_result> evaluate(const std::vector<matcher_spec>& matchers, const observation& o,
                                     const template_values& values);

// The workspace paths the matchers read, expanded (so the runner can collect them).
std::vector<std::string> files_to_collect(const std::vector<matcher_spec>& matchers, const template_values& values);

}  // namespace tether::e2e
