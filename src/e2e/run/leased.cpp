// The leased environments of a cell (cell_env.h): ssh and daytona.
#include <algorithm>
#include <cstdlib>
#include <utility>

#include <boost/json.hpp>

#include "e2e/run/cell_env.h"

namespace tether::e2e {

namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

// Where `tether` is inside the ssh host, beside the agent programs' bin.
constexpr std::string_view remote_tether_dir = "/opt/tether/bin";

fs::path agents_modules(const cell_plan& plan) {
  return plan.agents_prefix.empty() ? fs::path() : plan.agents_prefix / "node_modules";
}

std::string ssh_table(const cell_env& env) {
  const auto& h = *env.ssh;
  std::string path = std::string(remote_tether_dir) + ":";
  if (const auto modules = agents_modules(*env.plan); !modules.empty()) path += (modules / ".bin").string() + ":";
  path += "/usr/bin:/bin";
  return "kind = \"ssh\"\nhost = " + toml_string(h.address()) + "\nport = " + std::to_string(h.port()) +
         "\nuser = " + toml_string(h.user()) + "\nidentity_file = " + toml_string(h.identity_file().string()) +
         "\nknown_hosts = " + toml_string(h.known_hosts().string()) + "\nremote_root = \"/home/agent/leases\"" +
         "\ncontrol_dir = " + toml_string((h.dir() / "c").string()) + "\nremote_path = " + toml_string(path) + "\n";
}

std::string daytona_table(const environment_def& e) {
  std::string t = "kind = \"daytona\"\napi_url = " + toml_string(e.api_url) + "\napi_key_env = " + toml_string(e.api_key_env) + "\n";
  for (const auto& [key, value] : {std::pair{"target", &e.target}, std::pair{"image", &e.image},
                                   std::pair{"snapshot", &e.snapshot}, std::pair{"reach_host", &e.reach_host}})
    if (!value->empty()) t += std::string(key) + " = " + toml_string(*value) + "\n";
  for (const auto& [key, value] : {std::pair{"cpu", e.cpu}, std::pair{"memory_gib", e.memory_gib},
                                   std::pair{"disk_gib", e.disk_gib}})
    if (value > 0) t += std::string(key) + " = " + std::to_string(value) + "\n";
  return t;
}

}  // namespace

bool leased(const cell_env& env) { return is_leased_environment(env.plan->environment.kind); }

result<void> start_environment(cell_env& env) {
  if (env.plan->environment.kind != "ssh") return ok();
  ssh_host_options o;
  if (const auto modules = agents_modules(*env.plan); !modules.empty() && fs::is_directory(modules))
    o.read_only.emplace_back(modules, modules.string());
  o.read_only.emplace_back(env.plan->tether_binary, std::string(remote_tether_dir) + "/tether");
  auto host = ssh_host::start(std::move(o));
  if (!host) return make_error(e2e_errc::infrastructure, "the ssh host did not start: " + host.error().message);
  env.ssh = std::move(*host);
  return ok();
}

void stop_environment(cell_env& env) {
  if (env.ssh) {
    // Its log is an artifact: what the remote side saw of the cell's turns.
    std::error_code ec;
    fs::copy_file(env.ssh->dir() / "sshd.log", env.plan->artifacts_dir / "sshd.log",
                  fs::copy_options::overwrite_existing, ec);
  }
  env.ssh.reset();  // SIGKILL to its namespace: nothing it ran outlives the cell
}

std::string environment_config(const cell_env& env) {
  const auto& e = env.plan->environment;
  if (!is_leased_environment(e.kind)) return "";
  std::string out = "environment = " + toml_string(e.id) + "\n\n[environments." + e.id + "]\n";
  out += e.kind == "ssh" ? (env.ssh ? ssh_table(env) : std::string()) : daytona_table(e);
  if (e.keep_warm_ms) out += "keep_warm_ms = " + std::to_string(*e.keep_warm_ms) + "\n";
  if (e.price) {
    out += "\n[environments." + e.id + ".price]\ncpu_hour = " + json::serialize(json::value(e.price->cpu_hour)) +
           "\nmemory_gib_hour = " + json::serialize(json::value(e.price->memory_gib_hour)) +
           "\ndisk_gib_hour = " + json::serialize(json::value(e.price->disk_gib_hour)) +
           "\nsource = " + toml_string(e.price->source) + "\ndate = " + toml_string(e.price->date) + "\n";
  }
  return out;
}

std::map<std::string, std::string> environment_variables(const cell_env& env) {
  const auto& e = env.plan->environment;
  std::map<std::string, std::string> vars;
  if (e.kind == "daytona")
    if (const char* key = std::getenv(e.api_key_env.c_str()); key != nullptr) vars[e.api_key_env] = key;
  return vars;
}

result<std::vector<observed_lease>> observe_leases(cell_env& env, const std::string& session,
                                                   const json::array& executions) {
  std::vector<observed_lease> out;
  if (session.empty() || !leased(env)) return out;
  auto page = env.api->get("/v1/sessions/" + session + "/events?limit=10000");
  if (!page) return make_error(e2e_errc::api, "GET the session's events: " + page.error().message);
  const auto* events = page->is_object() ? page->as_object().if_contains("events") : nullptr;
  if (events == nullptr || !events->is_array()) return out;
  std::vector<std::pair<std::int64_t, std::string>> starts;  // started_seq → run id
  for (const auto& x : executions)
    if (x.is_object())
      starts.emplace_back(num(x.as_object().if_contains("started_seq")), str(x.as_object().if_contains("id")));
  std::sort(starts.begin(), starts.end());
  for (const auto& ev : events->as_array()) {
    if (!ev.is_object()) continue;
    const auto& e = ev.as_object();
    const auto type = str(e.if_contains("type"));
    const auto time = num(e.if_contains("time"));
    const auto* data = e.if_contains("data");
    const json::object empty;
    const auto& d = data != nullptr && data->is_object() ? data->as_object() : empty;
    const bool ends = type == "env.lease.released" ||
                      (type == "env.workspace.synced" && str(d.if_contains("direction")) == "down");
    if (ends || type == "env.lease.acquired")
      if (!out.empty() && out.back().done_ms == 0) out.back().done_ms = time;
    if (type != "env.lease.acquired") continue;
    observed_lease l;
    l.environment = str(d.if_contains("environment"));
    l.provider_id = str(d.if_contains("provider_id"));
    l.outcome = str(d.if_contains("outcome"));
    const auto* warm = d.if_contains("warm");
    l.warm = warm != nullptr && warm->is_bool() && warm->as_bool();
    l.acquired_ms = time;
    const auto seq = num(e.if_contains("seq"));
    for (const auto& [start, id] : starts)
      if (start <= seq) l.run_id = id;
    out.push_back(std::move(l));
  }
  return out;
}

}  // namespace tether::e2e
