// The postgres-2node environment: a throwaway PostgreSQL cluster of the
// cell's own (the pg-cluster script: initdb in the cell's directory, a Unix
// socket, no TCP) and two `tether serve` nodes on it, node-a and node-b,
// with short leases so a takeover is quick. The API client talks to the
// serving node; a restart step stops it (SIGTERM or SIGKILL as the step
// says), points the client at the other node, which recovers the session
// (at once after a graceful stop, which expires the leases; within the
// lease period after a kill), and starts the stopped node again as the
// standby.
#include <sys/stat.h>

#include <csignal>
#include <cstdio>

#include "e2e/errors.h"
#include "e2e/run/cell_env.h"

namespace tether::e2e {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

constexpr int lease_ms = 2'000;

// Runs the pg-cluster script with `verb` on the cell's database; its output.
result<std::string> pg_cluster(const cell_env& env, const std::string& verb) {
  const fs::path& script = env.plan->pg_cluster;
  std::error_code ec;
  if (!fs::exists(script, ec))
    return make_error(e2e_errc::infrastructure, "the postgres-2node environment needs " + script.string() +
                                                    " (set $TETHER_PG_CLUSTER to the pg-cluster script)");
  auto p = child_process::start({script.string(), verb, env.pg_dir.string()}, env.plan->artifacts_dir / "database.log");
  if (!p) return p.error();
  std::string out = (*p)->rest_of_stdout(60s);
  const auto status = (*p)->wait(10s);
  if (!status || *status != 0)
    return make_error(e2e_errc::infrastructure, "pg-cluster " + verb + " failed (see database.log)");
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

const std::string& other(const std::string& node) {
  static const std::string a = "node-a";
  static const std::string b = "node-b";
  return node == a ? b : a;
}

}  // namespace

bool two_nodes(const cell_env& env) { return env.plan->environment.kind == "postgres-2node"; }

result<void> start_database(cell_env& env) {
  env.pg_dir = env.dir / "pg";
  // The server runs as the postgres user: the cell's directories must let
  // it reach its own.
  for (fs::path p = env.pg_dir.parent_path(); !p.empty() && p != p.root_path(); p = p.parent_path()) {
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0 && (st.st_mode & S_IXOTH) == 0) ::chmod(p.c_str(), st.st_mode | S_IXOTH);
    if (p == env.plan->scratch_root) break;
  }
  auto url = pg_cluster(env, "start");
  if (!url) return url.error();
  env.store = *url;
  return ok();
}

void stop_database(cell_env& env) { (void)pg_cluster(env, "stop"); }

std::string cluster_config(const cell_env& env) {
  if (!two_nodes(env)) return {};
  return "store = \"" + env.store + "\"\n[leases]\nttl_ms = " + std::to_string(lease_ms) +
         "\nrenew_ms = 500\nscan_ms = 200\n";
}

result<void> start_standby(cell_env& env) {
  auto started = start_node(env, other(env.serving));
  if (!started) return started.error();
  env.standby = std::move(started->first);
  env.standby_url = started->second;
  return ok();
}

bool stop_standby(cell_env& env) {
  if (!env.standby) return true;
  env.standby->signal(SIGTERM);
  const bool exited = env.standby->wait(10s).has_value();
  env.standby.reset();
  return exited;
}

result<void> switch_nodes(cell_env& env, restart_mode mode) {
  const bool exited = stop_server(env, mode);
  if (!exited && mode == restart_mode::graceful)
    return make_error(e2e_errc::api, "restart: the serving node did not exit within 10 s of SIGTERM");
  // The standby serves now; the stopped node comes back as the standby.
  env.server = std::move(env.standby);
  env.serving = other(env.serving);
  client::client_options o;
  o.server = env.standby_url;
  o.token = env.token;
  o.token_source = "the cell";
  o.response_timeout = 30s;
  env.api = std::make_unique<client::api_client>(o);
  ++env.server_starts;
  return start_standby(env);
}

}  // namespace tether::e2e
