// work::fingerprint — whether what a task's run is configured with changed
// since its last run, category by category, and what follows from that for
// its agent session and its workspace (docs/architecture.md §6).
//
//   work::fingerprints now;
//   now[work::category::model] = work::fingerprint(model_json);
//   now[work::category::environment] = work::fingerprint(env_json, {.presence_only = true});
//   auto s = work::decide_session(last_run_session_fingerprints, now);
//   if (s.decision == work::session_decision::reset) ...   // s.reasons: the changed categories
//   auto w = work::decide_workspace(last_run_workspace_fingerprints, now_ws);
//   record(work::to_json(s, before, now));                  // every run records its decision
//
// A fingerprint is "v1:sha256:" + the lowercase hex SHA-256 of the
// category's canonical JSON:
//   - objects with their keys sorted (bytewise), arrays in their order, no
//     whitespace, numbers and strings as Boost.JSON serializes them;
//   - volatile keys dropped wherever they appear (rules.volatile_keys; by
//     default ids and timestamps: "id", "created_at", "updated_at",
//     "started_at", "finished_at", "time"), so a copy of the same
//     configuration made at another time, under another id, is the same;
//   - secrets replaced by the marker "[redacted]" (rules.secret_keys, by
//     default "api_key", "token", "password", "secret", and any key ending in
//     "_key", "_token", "_password" or "_secret"; "api_key_env", a variable's
//     name, is not a secret): their values never reach the hash, so a
//     fingerprint can be logged and stored;
//   - with rules.presence_only (an environment: name → value), each value
//     becomes `true`: an environment's fingerprint changes when a variable
//     appears or goes, never with its value.
// The canonical text is what canonical_json() returns; hashing it is
// fingerprint().
//
// Categories: the session's (runtime, runtime_config, model, instructions,
// task_overrides, workspace_config, environment, secrets) and the
// workspace's (mode, project_workspace, strategy, repositories,
// lifecycle_commands, environment). A category present on one side only
// counts as changed.
//
// Decisions:
//   session:   fresh   no earlier run (a new agent session starts anyway)
//              reuse   no category changed
//              reset   any category changed; reasons: those categories, in
//                      the order above
//   workspace: create  no earlier run
//              reuse   nothing changed
//              refresh only lifecycle_commands changed (they run again)
//              replace anything else changed (repositories, strategy, mode,
//                      …); reasons: the changed categories
// Pure functions: no I/O, no clock.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/fwd.hpp>

namespace tether::work {

namespace category {
// The session's.
inline constexpr std::string_view runtime = "runtime";
inline constexpr std::string_view runtime_config = "runtime_config";
inline constexpr std::string_view model = "model";
inline constexpr std::string_view instructions = "instructions";
inline constexpr std::string_view task_overrides = "task_overrides";
inline constexpr std::string_view workspace_config = "workspace_config";
inline constexpr std::string_view environment = "environment";  // the workspace's too
inline constexpr std::string_view secrets = "secrets";
// The workspace's.
inline constexpr std::string_view mode = "mode";
inline constexpr std::string_view project_workspace = "project_workspace";
inline constexpr std::string_view strategy = "strategy";
inline constexpr std::string_view repositories = "repositories";
inline constexpr std::string_view lifecycle_commands = "lifecycle_commands";
}  // namespace category

// The categories in the order reasons list them.
const std::vector<std::string_view>& session_categories();
const std::vector<std::string_view>& workspace_categories();

struct fingerprint_rules {
  std::set<std::string, std::less<>> volatile_keys{"id",         "created_at",  "updated_at",
                                                   "started_at", "finished_at", "time"};
  std::set<std::string, std::less<>> secret_keys{"api_key", "token", "password", "secret"};
  bool presence_only = false;
};

// Whether `key` names a secret under `rules` (listed, or ending in _key,
// _token, _password or _secret; never api_key_env).
bool secret_key(std::string_view key, const fingerprint_rules& rules);

// The canonical JSON text of `v` under `rules` (see above).
std::string canonical_json(const boost::json::value& v, const fingerprint_rules& rules = {});
// "v1:sha256:<64 hex>" of canonical_json(v, rules).
std::string fingerprint(const boost::json::value& v, const fingerprint_rules& rules = {});

// Category → fingerprint.
using fingerprints = std::map<std::string, std::string, std::less<>>;

// The categories whose fingerprints differ (present on one side only
// included), in the order of `order`, then any other, sorted.
std::vector<std::string> changed_categories(const fingerprints& before, const fingerprints& now,
                                            const std::vector<std::string_view>& order);

enum class session_decision { fresh, reuse, reset };
enum class workspace_decision { create, reuse, refresh, replace };
std::string_view to_string(session_decision d);
std::string_view to_string(workspace_decision d);

struct session_freshness {
  session_decision decision = session_decision::fresh;
  std::vector<std::string> reasons;  // the changed categories
};
struct workspace_freshness {
  workspace_decision decision = workspace_decision::create;
  std::vector<std::string> reasons;
};

// `before`: the fingerprints the last run recorded; nullopt when none ran.
session_freshness decide_session(const std::optional<fingerprints>& before, const fingerprints& now);
workspace_freshness decide_workspace(const std::optional<fingerprints>& before, const fingerprints& now);

// What a run records (and the qualification record's configFreshness):
// {"session": {"decision", "reasons", "before", "now"}, "workspace": {…}}
// with each fingerprint set as an object (null "before" for a first run).
boost::json::value to_json(const session_freshness& s, const std::optional<fingerprints>& session_before,
                           const fingerprints& session_now, const workspace_freshness& w,
                           const std::optional<fingerprints>& workspace_before, const fingerprints& workspace_now);

}  // namespace tether::work
