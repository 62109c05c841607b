#include "e2e/run/cell.h"

#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <boost/json.hpp>

#include "e2e/json_io.h"
#include "e2e/run/cell_env.h"
#include "e2e/secrets.h"
#include "util/clock.h"
#include "util/random.h"

namespace tether::e2e {

namespace json = boost::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::int64_t steady_us_now() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string cell_name(const cell_plan& p) {
  return p.suite->id + "." + p.profile.id + "." + p.environment.id + "." + p.kase->id;
}

std::string toml_string(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

namespace {

std::string key_variable(const profile_def& p) { return p.api_key_env.empty() ? "TETHER_E2E_API_KEY" : p.api_key_env; }

// Where the profile's runtime finds the model: the scripted model's root,
// with /v1 for the kinds whose clients append only the endpoint's own path
// (Chat Completions, Responses) and without it for Claude Code (claude -p,
// its stream-json mode, claude-agent-acp), which appends /v1/messages itself.
std::string model_base_url(const profile_def& p, const std::string& mock_url) {
  if (mock_url.empty()) return p.base_url;
  const bool claude = p.runtime == "claude-print" || p.runtime == "claude" || p.runtime == "acp-claude";
  return claude ? mock_url : mock_url + "/v1";
}

}  // namespace

result<void> write_config(const cell_env& env) {
  profile_def p = env.plan->profile;
  if (env.model_override) p.model = *env.model_override;
  std::string text = server_config(p, env.mock_url, env.workspace, env.values.cell);
  if (env.instructions) text += "instructions = " + toml_string(*env.instructions) + "\n";
  text += environment_config(env);
  // Top-level keys come before the first table: the store goes first.
  text = cluster_config(env) + text;
  std::ofstream f(env.dir / "config.toml");
  f << text;
  if (!f) return make_error(e2e_errc::io, "cannot write " + (env.dir / "config.toml").string());
  return ok();
}

namespace {

// Each run's start and finish, and which run each input went into, for one
// session (the cell's own, or one a fork step moved it from).
struct session_runs {
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> times;  // run → started_at, finished_at
  std::map<std::string, std::string> run_of;                           // input → execution
};

json::array executions_of(cell_env& env, const std::string& session) {
  if (auto x = env.api->get("/v1/sessions/" + session + "/executions"); x && x->is_object())
    if (const auto* a = x->as_object().if_contains("executions"); a != nullptr && a->is_array()) return a->as_array();
  return {};
}

// The sessions inputs were sent to before a fork step moved the cell on.
std::vector<std::string> earlier_sessions(const cell_env& env) {
  std::vector<std::string> out;
  for (const auto& in : env.inputs)
    if (!in.session.empty() && in.session != env.session &&
        std::find(out.begin(), out.end(), in.session) == out.end())
      out.push_back(in.session);
  return out;
}

session_runs runs_of(cell_env& env, const std::string& session, json::array executions) {
  session_runs out;
  if (session != env.session) executions = executions_of(env, session);
  for (const auto& x : executions) {
    if (!x.is_object()) continue;
    const auto& xo = x.as_object();
    const auto* s = xo.if_contains("started_at");
    const auto* f = xo.if_contains("finished_at");
    out.times[xo.contains("id") ? std::string(xo.at("id").as_string()) : ""] = {
        s != nullptr && s->is_int64() ? s->as_int64() : 0, f != nullptr && f->is_int64() ? f->as_int64() : 0};
  }
  if (auto inputs = env.api->get("/v1/sessions/" + session + "/inputs"); inputs && inputs->is_object())
    if (const auto* a = inputs->as_object().if_contains("inputs"); a != nullptr && a->is_array())
      for (const auto& in : a->as_array())
        if (in.is_object() && in.as_object().contains("execution"))
          out.run_of[std::string(in.as_object().at("id").as_string())] =
              std::string(in.as_object().at("execution").as_string());
  return out;
}

}  // namespace

namespace {

result<void> start_mock(cell_env& env) {
  auto p = child_process::start({env.plan->tether_binary, "mock-llm", "--listen", "127.0.0.1:0", "--record",
                                 (env.dir / "model-requests.jsonl").string()},
                                env.plan->artifacts_dir / "model.log");
  if (!p) return p.error();
  env.mock = std::move(*p);
  auto line = env.mock->wait_line("mock-llm listening on ", 30s, env.cancelled);
  if (!line) return line.error();
  env.mock_url = line->substr(std::string_view("mock-llm listening on ").size());
  return ok();
}

// Creates the directories, starts the model and the server.
result<void> set_up(cell_env& env) {
  std::error_code ec;
  fs::create_directories(env.plan->artifacts_dir, ec);
  fs::create_directories(env.plan->scratch_root, ec);
  // Named by the nonce alone: the server's Unix sockets live under DATA/run,
  // and a socket path holds at most 107 bytes (the cell's name is kept in
  // the artifacts directory and the config's first line).
  env.dir = env.plan->scratch_root / env.values.nonce;
  env.data = env.dir / "data";
  env.workspace = env.dir / "workspace";
  env.values.repos = (env.dir / "repos").string();
  fs::create_directories(env.data, ec);
  fs::create_directories(env.workspace, ec);
  if (ec) return make_error(e2e_errc::infrastructure, "cannot create " + env.dir.string() + ": " + ec.message());
  env.token = random_hex(16);
  env.api_key = "sk-e2e-" + random_hex(16);
  if (env.plan->profile.model_server == "mock")
    if (auto r = start_mock(env); !r) return r;
  if (two_nodes(env))
    if (auto r = start_database(env); !r) return r;
  if (leased(env))
    if (auto r = start_environment(env); !r) return r;
  if (auto r = write_config(env); !r) return r;
  if (auto r = start_server(env); !r) return r;
  return two_nodes(env) ? start_standby(env) : ok();
}

void keep_transcript(cell_env& env) {
  if (env.session.empty() || !env.api) return;
  json::object t;
  for (const char* leaf : {"messages", "executions", "interactions", "inputs"}) {
    auto r = env.api->get("/v1/sessions/" + env.session + "/" + leaf);
    if (r && r->is_object())
      if (const auto* v = r->as_object().if_contains(leaf)) t[leaf] = *v;
  }
  auto events = env.api->get("/v1/sessions/" + env.session + "/events?limit=10000");
  if (events && events->is_object())
    if (const auto* v = events->as_object().if_contains("events")) t["events"] = *v;
  (void)write_json_file(env.plan->artifacts_dir / "transcript.json", t);
}

// Stops the processes and removes the scratch directory; "" when all went well.
std::string tear_down(cell_env& env) {
  std::string problems;
  if (env.server && !stop_server(env, restart_mode::graceful))
    problems += "the server did not exit within 10 s of SIGTERM; ";
  if (env.standby && !stop_standby(env)) problems += "the standby node did not exit within 10 s of SIGTERM; ";
  if (env.database) stop_database(env);
  stop_environment(env);
  if (env.mock) {
    env.mock->signal(SIGTERM);
    if (!env.mock->wait(10s)) problems += "the scripted model did not exit within 10 s of SIGTERM; ";
  }
  std::error_code ec;
  if (!env.dir.empty()) {
    for (const char* kept : {"config.toml", "model-requests.jsonl"}) {
      fs::copy_file(env.dir / kept, env.plan->artifacts_dir / kept, fs::copy_options::overwrite_existing, ec);
      ec.clear();
    }
    fs::remove_all(env.dir, ec);
    if (ec) problems += "cannot remove " + env.dir.string() + ": " + ec.message() + "; ";
  }
  if (!problems.empty()) problems.erase(problems.size() - 2);
  return problems;
}

bool only_message_matchers_failed(const std::vector<matcher_result>& rs) {
  bool any = false;
  for (const auto& r : rs) {
    if (r.passed) continue;
    any = true;
    if (!r.kind.starts_with("message_")) return false;
  }
  return any;
}

void judge(cell_result& r, const cell_plan& plan) {
  const bool all_passed =
      std::all_of(r.matchers.begin(), r.matchers.end(), [](const matcher_result& m) { return m.passed; });
  if (all_passed && !r.matchers.empty()) {
    r.status = cell_status::passed;
    return;
  }
  r.status = cell_status::failed;
  const bool real_model = plan.profile.model_server != "mock";
  r.failure = real_model && only_message_matchers_failed(r.matchers) ? failure_class::provider_variance
                                                                     : failure_class::candidate_failure;
}

void classify_error(cell_result& r, const error& e) {
  r.error = e.message;
  if (e == e2e_errc::interrupted) {
    r.status = cell_status::error;
    r.failure = failure_class::transient_infrastructure;
  } else if (e == e2e_errc::invalid_definition || e == e2e_errc::io) {
    r.status = cell_status::error;
    r.failure = failure_class::permanent_infrastructure;
  } else if (e == e2e_errc::api) {
    r.status = cell_status::error;
    r.failure = failure_class::candidate_failure;
  } else if (r.error.starts_with("wait for ")) {
    r.status = cell_status::failed;  // the candidate never reached the state
    r.failure = failure_class::candidate_failure;
  } else {
    r.status = cell_status::error;
    r.failure = failure_class::transient_infrastructure;
  }
}

// The steps, then what was seen; an error ends the case early.
// The last preparation as the record carries it (result.h).
boost::json::value config_freshness(const json::array& preparations) {
  if (preparations.empty() || !preparations.back().is_object()) return nullptr;
  const auto& last = preparations.back().as_object();
  json::object out;
  for (const char* side : {"session", "workspace"}) {
    const auto* part = last.if_contains(side);
    if (part == nullptr || !part->is_object()) continue;
    const auto& p = part->as_object();
    json::object o;
    o["decision"] = p.contains("decision") ? p.at("decision") : json::value(nullptr);
    o["reasons"] = p.contains("reasons") ? p.at("reasons") : json::value(json::array());
    json::array categories;
    if (const auto* now = p.if_contains("now"); now != nullptr && now->is_object())
      for (const auto& kv : now->as_object()) categories.emplace_back(kv.key());
    o["categories"] = std::move(categories);
    o["fingerprints"] = p.contains("now") ? p.at("now") : json::value(nullptr);
    o["before"] = p.contains("before") ? p.at("before") : json::value(nullptr);
    out[side] = std::move(o);
  }
  out["runs"] = preparations.size();
  return out;
}

result<void> drive(cell_env& env, cell_result& r) {
  TETHER_TRY(set_up(env));
  for (const auto& s : env.plan->kase->steps) TETHER_TRY(run_step(env, s));
  auto runs = list_executions(env);
  if (!runs) return runs.error();
  r.turns = turn_timings(env, *runs);
  r.usage = usage_of(*runs);
  for (const auto& u : r.usage) r.run_ids.push_back(u.run_id);
  auto seen = observe(env, *env.plan->kase, *runs);
  if (!seen) return seen.error();
  auto leases = observe_leases(env, env.session, *runs);
  if (!leases) return leases.error();
  seen->leases = *leases;  // the matchers judge the cell's session
  // The turns sent before a fork step ran in the session it forked.
  for (const auto& s : earlier_sessions(env)) {
    auto more = observe_leases(env, s, executions_of(env, s));
    if (!more) return more.error();
    leases->insert(leases->end(), more->begin(), more->end());
  }
  for (const auto& l : *leases) {
    const auto ms = l.done_ms > l.acquired_ms ? l.done_ms - l.acquired_ms : 0;
    r.leases.push_back({l.run_id, l.outcome, ms});
    for (auto& t : r.turns)
      if (!l.run_id.empty() && t.run_id == l.run_id) {
        t.lease_outcome = l.outcome;
        t.lease_duration_ms = static_cast<double>(ms);
      }
  }
  r.config_freshness = config_freshness(seen->work.preparations);
  r.matchers = evaluate(env.plan->kase->matchers, *seen, env.values);
  judge(r, *env.plan);
  return ok();
}

}  // namespace

std::string server_config(const profile_def& p, const std::string& mock_url, const fs::path& workspace,
                          std::string_view cell) {
  std::string out = "# " + std::string(cell) + "\n";
  // The cell's repositories (create_repositories) are a root too: an agent
  // may name a local repository only under one.
  out += "workspace_roots = [" + toml_string(workspace.string()) + ", " +
         toml_string((workspace.parent_path() / "repos").string()) + "]\n";
  out += "[profiles.default]\n";
  out += "runtime = " + toml_string(p.runtime) + "\n";
  if (p.runtime == "native") out += "provider = " + toml_string(p.provider) + "\n";
  out += "model = " + toml_string(p.model) + "\n";
  out += "base_url = " + toml_string(model_base_url(p, mock_url)) + "\n";
  out += "api_key_env = " + toml_string(key_variable(p)) + "\n";
  if (p.runtime != "native") {
    if (!p.wire.empty()) out += "wire = " + toml_string(p.wire) + "\n";
    if (!p.command.empty()) out += "command = " + toml_string(p.command) + "\n";
    if (p.keep_alive_ms) out += "keep_alive_ms = " + std::to_string(*p.keep_alive_ms) + "\n";
    if (p.max_processes) out += "max_processes = " + std::to_string(*p.max_processes) + "\n";
    // A CLI that starts cold (node, its own config) can be quiet for a while;
    // a hung one still ends well inside a wait step's timeout.
    out += "idle_timeout_ms = 120000\n";
  }
  return out;
}

std::optional<std::string> not_applicable_reason(const cell_plan& plan) {
  if (plan.environment.kind == "daytona" && plan.profile.runtime == "opencode")
    return std::string(
        "opencode serve is reached over its HTTP port, and a Daytona sandbox's ports are not forwarded to Tether's "
        "machine (opencode-run and acp-opencode run there)");
  const auto it = plan.kase->not_applicable.find(plan.profile.runtime);
  if (it == plan.kase->not_applicable.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> skip_reason(const cell_plan& plan) {
  const auto& e = plan.environment;
  if (e.kind != "daytona") return std::nullopt;
  const char* key = std::getenv(e.api_key_env.c_str());
  if (key != nullptr && *key != '\0') return std::nullopt;
  return "$" + e.api_key_env + " is not set: the Daytona cells run against the real Daytona service (" + e.api_url +
         ") with an account's API key";
}

namespace {

// A cell that was not run: no artifacts, no time, its status and reason.
cell_result not_run_record(const cell_plan& plan, cell_status status, std::string cell_result::*why,
                           std::string reason) {
  cell_result r = cell_record(plan, "");
  r.artifacts.clear();
  r.status = status;
  r.*why = std::move(reason);
  r.finished_at_ms = r.started_at_ms;
  compute_billing(r);
  return r;
}

}  // namespace

cell_result skipped_record(const cell_plan& plan, std::string reason) {
  return not_run_record(plan, cell_status::skipped, &cell_result::skipped_reason, std::move(reason));
}

cell_result not_applicable_record(const cell_plan& plan, std::string reason) {
  return not_run_record(plan, cell_status::not_applicable, &cell_result::not_applicable_reason, std::move(reason));
}

cell_result cell_record(const cell_plan& plan, const std::string& nonce) {
  cell_result r;
  r.cell = cell_name(plan);
  r.execution_id = plan.campaign_id + "/" + r.cell + "/" + std::to_string(plan.attempt);
  r.suite_id = plan.suite->id;
  r.suite_title = plan.suite->title;
  r.suite_description = plan.suite->description;
  r.suite_definition_hash = plan.suite_hash;
  r.source_sha = plan.source_sha;
  r.source_ref = plan.source_ref;
  r.attempt = plan.attempt;
  r.profile_id = plan.profile.id;
  r.environment_id = plan.environment.id;
  r.case_id = plan.kase->id;
  r.case_title = plan.kase->title;
  r.runtime = plan.profile.runtime;
  r.provider = plan.profile.provider;  // "" for an agent program: it speaks its own wire protocol
  r.model = plan.profile.model;
  r.nonce = nonce;
  r.artifacts = plan.artifacts_dir.filename().string();
  r.started_at_ms = real_clock().now();
  // What the environment costs comes of its kind, resources and price (compute_billing).
  const auto& e = plan.environment;
  r.runtime_cost.provider = e.kind;
  if (is_leased_environment(e.kind)) {
    auto known = [](std::int64_t v) { return v > 0 ? std::optional<std::int64_t>(v) : std::nullopt; };
    r.runtime_cost.cpu_cores = known(e.cpu);
    r.runtime_cost.memory_gib = known(e.memory_gib);
    r.runtime_cost.disk_gib = known(e.disk_gib);
    r.runtime_cost.price = e.price;
  }
  return r;
}

result<std::pair<std::unique_ptr<child_process>, std::string>> start_node(cell_env& env, const std::string& node) {
  auto vars = environment_variables(env);
  vars["TETHER_TOKEN"] = env.token;
  vars[key_variable(env.plan->profile)] = env.api_key;
  std::vector<std::string> argv{
      env.plan->tether_binary,           "serve", "--data", env.data.string(), "--listen", "127.0.0.1:0", "--config",
      (env.dir / "config.toml").string()};
  fs::path log = env.plan->artifacts_dir / "server.log";
  if (two_nodes(env)) {
    argv[3] = (env.dir / ("data-" + node)).string();
    argv.insert(argv.end(), {"--node", node});
    log = env.plan->artifacts_dir / ("server-" + node + ".log");
  }
  auto p = child_process::start(argv, log, vars);
  if (!p) return p.error();
  auto line = (*p)->wait_line("listening on ", 30s, env.cancelled);
  if (!line) return line.error();
  return std::make_pair(std::move(*p), line->substr(std::string_view("listening on ").size()));
}

result<void> start_server(cell_env& env) {
  auto started = start_node(env, env.serving);
  if (!started) return started.error();
  env.server = std::move(started->first);
  ++env.server_starts;
  client::client_options o;
  o.server = started->second;
  o.token = env.token;
  o.token_source = "the cell";
  o.response_timeout = 30s;
  env.api = std::make_unique<client::api_client>(o);
  return ok();
}

bool stop_server(cell_env& env, restart_mode mode) {
  if (!env.server) return true;
  env.server->signal(mode == restart_mode::kill ? SIGKILL : SIGTERM);
  const bool exited = env.server->wait(10s).has_value();
  env.server.reset();
  env.api.reset();
  return exited || mode == restart_mode::kill;
}


std::vector<turn_timing> turn_timings(cell_env& env, const json::array& executions) {
  std::map<std::string, session_runs> by_session;
  for (const auto& in : env.inputs) {
    const std::string& s = in.session.empty() ? env.session : in.session;
    if (!by_session.contains(s)) by_session.emplace(s, runs_of(env, s, executions));
  }
  json::array requests;
  if (!env.mock_url.empty()) {
    client::client_options o;
    o.server = env.mock_url;
    client::api_client model(o);
    if (auto r = model.get("/_mock/requests"); r && r->is_object())
      if (const auto* a = r->as_object().if_contains("requests"); a != nullptr && a->is_array())
        requests = a->as_array();
  }
  std::vector<turn_timing> out;
  for (const auto& in : env.inputs) {
    turn_timing t;
    t.input_id = in.id;
    const auto& runs = by_session.at(in.session.empty() ? env.session : in.session);
    if (auto it = runs.run_of.find(in.id); it != runs.run_of.end()) t.run_id = it->second;
    if (auto it = runs.times.find(t.run_id);
        it != runs.times.end() && it->second.first > 0 && it->second.second > 0) {
      t.run_duration_ms = static_cast<double>(it->second.second - it->second.first);
      t.response_ms = static_cast<double>(it->second.second - in.sent_unix_ms);
    }
    // The first model request after the admission that carries the input's text.
    const auto needle = json_escaped(in.text);
    for (const auto& req : requests) {
      if (!req.is_object()) continue;
      const auto* at = req.as_object().if_contains("received_us");
      const auto* body = req.as_object().if_contains("body");
      if (at == nullptr || !at->is_number() || body == nullptr) continue;
      const auto us = at->to_number<std::int64_t>();
      if (us < in.admitted_steady_us || json::serialize(*body).find(needle) == std::string::npos) continue;
      t.scheduler_latency_ms = static_cast<double>(us - in.admitted_steady_us) / 1000.0;
      break;
    }
    out.push_back(std::move(t));
  }
  return out;
}

cell_result run_cell(const cell_plan& plan, const std::function<bool()>& cancelled) {
  if (auto reason = not_applicable_reason(plan)) return not_applicable_record(plan, std::move(*reason));
  if (auto reason = skip_reason(plan)) return skipped_record(plan, std::move(*reason));
  cell_env env;
  env.plan = &plan;
  env.cancelled = cancelled ? cancelled : [] { return false; };
  env.values.nonce = make_nonce(plan.attempt);
  env.values.cell = cell_name(plan);
  env.values.runtime = plan.profile.runtime;
  env.values.environment = plan.environment.id;
  cell_result r = cell_record(plan, env.values.nonce);
  if (auto driven = drive(env, r); !driven) classify_error(r, driven.error());
  keep_transcript(env);
  r.session_id = env.session;
  const auto problems = tear_down(env);
  r.cleanup_passed = problems.empty();
  r.cleanup_details = problems.empty() ? "every process stopped; the scratch directory was removed" : problems;
  if (!r.cleanup_passed && r.status == cell_status::passed) {
    r.status = cell_status::failed;
    r.failure = failure_class::cleanup_failure;
  }
  r.finished_at_ms = real_clock().now();
  r.duration_ms = r.finished_at_ms - r.started_at_ms;
  compute_billing(r);
  if (auto where = find_secret(plan.artifacts_dir, {json::serialize(to_json(r))}, env.api_key)) {
    r.status = cell_status::failed;
    r.failure = failure_class::secret_leak;
    r.error = "the profile's API key appears in the cell's artifacts (" +
              (where->starts_with("text") ? std::string("the record") : fs::path(*where).filename().string()) + ")";
  }
  return r;
}

}  // namespace tether::e2e
