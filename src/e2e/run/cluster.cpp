// The postgres-2node environment: a database of the cell's own in the
// campaign's throwaway PostgreSQL cluster (database.h: the pg-cluster
// script, a Unix socket, no TCP) and two `tether serve` nodes on it, node-a and node-b,
// with short leases so a takeover is quick. The API client talks to the
// serving node; a restart step stops it (SIGTERM or SIGKILL as the step
// says), points the client at the other node, which recovers the session
// (at once after a graceful stop, which expires the leases; within the
// lease period after a kill), and starts the stopped node again as the
// standby.
#include <cctype>
#include <csignal>

#include "e2e/errors.h"
#include "e2e/run/cell_env.h"
#include "e2e/run/database.h"

namespace tether::e2e {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

constexpr int lease_ms = 2'000;

const std::string& other(const std::string& node) {
  static const std::string a = "node-a";
  static const std::string b = "node-b";
  return node == a ? b : a;
}

}  // namespace

bool two_nodes(const cell_env& env) { return env.plan->environment.kind == "postgres-2node"; }

result<void> start_database(cell_env& env) {
  env.database = env.plan->database ? env.plan->database : std::make_shared<database_server>(env.plan->pg_cluster);
  env.database_name = "cell_" + env.values.nonce;
  for (char& c : env.database_name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  auto url = env.database->create(env.database_name, env.plan->artifacts_dir / "database.log");
  if (!url) return url.error();
  env.store = *url;
  return ok();
}

void stop_database(cell_env& env) {
  env.database->drop(env.database_name, env.plan->artifacts_dir / "database.log");
  env.database.reset();  // a cluster of the cell's own stops here
}

std::string cluster_config(const cell_env& env) {
  if (!two_nodes(env)) return {};
  // An inline table: these lines go before the profile tables.
  return "store = \"" + env.store + "\"\nleases = { ttl_ms = " + std::to_string(lease_ms) +
         ", renew_ms = 500, scan_ms = 200 }\n";
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
