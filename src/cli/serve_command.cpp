// `tether serve`: the HTTP API over a node (store, runtimes, session service)
// until SIGTERM or SIGINT. At start, everything that can fail comes first —
// configuration, the data directory's lock, the store, the token, binding
// the port — and only then does the node recover what a previous run left
// open (docs/architecture.md §4): a start that fails claims no session and spends no
// restart attempt. At the signal it stops accepting connections, stops
// running executions (reason shutdown: no terminal event, so the next start
// takes them over), expires this node's leases and exits 0.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <future>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/asio/signal_set.hpp>

#include "api/errors.h"
#include "api/server.h"
#include "cli/commands.h"
#include "e2e/errors.h"
#include "e2e/report.h"
#include "http/server_errors.h"
#include "http/server_tls.h"
#include "node/errors.h"
#include "node/node.h"
#include "store/errors.h"
#include "util/random.h"

namespace tether::cli {

namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;

struct serve_args {
  std::string config;
  std::string data;
  std::string store;
  std::string listen = "127.0.0.1:7420";
  std::string node = "serve";
  std::size_t max_body_bytes = 1U << 20U;
  int heartbeat_ms = 15'000;
  std::size_t sse_max_buffered = 1U << 20U;
  int sse_stall_ms = 30'000;
  std::size_t max_connections = 0;
  std::size_t max_connections_per_peer = 0;
  std::string results;   // `tether e2e`'s results folder the interface shows
  std::string tls_cert;  // PEM files: serve HTTPS
  std::string tls_key;
  std::vector<std::string> allow_hosts;  // Host names answered besides IP literals and localhost
};

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

// TETHER_TOKEN, else DIR/token, written (0600) with a new random token on
// first start. A token file others can read is tightened, with a warning.
result<std::string> bearer_token(const fs::path& data) {
  if (const char* env = std::getenv("TETHER_TOKEN"); env != nullptr && *env != '\0') return std::string(env);
  const fs::path file = data / "token";
  if (fs::exists(file)) {
    struct stat st {};
    if (::stat(file.c_str(), &st) == 0 && (st.st_mode & 077U) != 0) {
      spdlog::warn("serve: {} was readable by others; its mode is now 0600", file.string());
      ::chmod(file.c_str(), 0600);
    }
    std::ifstream in(file);
    std::string token((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    token = trimmed(std::move(token));
    if (!token.empty()) return token;
    return make_error(util_errc::invalid_argument, file.string() + " is empty; delete it to get a new token");
  }
  const std::string token = random_hex(32);
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return make_error(util_errc::invalid_argument, "cannot create " + file.string() + ": " + std::strerror(errno));
  const std::string line = token + "\n";
  const bool written = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) && ::fsync(fd) == 0;
  ::close(fd);
  if (!written) return make_error(util_errc::invalid_argument, "cannot write " + file.string());
  return token;
}

constexpr std::size_t min_token_bytes = 32;

bool loopback(const std::string& listen) {
  return listen.starts_with("127.") || listen.starts_with("[::1]") || listen.starts_with("localhost:");
}

int serve(const serve_args& args) {
  // Everything the server creates (database, WAL, token, workspaces, tool
  // outputs) is private to its user.
  ::umask(077);
  node::node_options o;
  o.config = args.config;
  o.data_dir = args.data;
  o.store = args.store;
  o.name = args.node;
  o.note = [](const std::string& line) { spdlog::info("serve: {}", line); };
  auto opened = node::node::open(o);
  if (!opened) {
    fmt::print(stderr, "tether serve: {}\n", opened.error().describe());
    if (opened.error() == node::node_errc::data_dir_locked) return exit_data_dir_locked;
    return opened.error() == store::store_errc::damaged ? exit_damaged_store : exit_usage;
  }
  auto& n = **opened;
  auto token = bearer_token(n.data_dir());
  if (!token) {
    fmt::print(stderr, "tether serve: {}\n", token.error().describe());
    return 2;
  }
  if (token->size() < min_token_bytes) {
    fmt::print(stderr,
               "tether serve: the token from {} is {} bytes; at least {} are needed (for example `openssl rand -hex "
               "16` makes one), so that it cannot be guessed\n",
               std::getenv("TETHER_TOKEN") != nullptr ? "$TETHER_TOKEN" : (n.data_dir() / "token").string(),
               token->size(), min_token_bytes);
    return 2;
  }
  api::server_options so;
  so.listen = args.listen;
  so.token = *token;
  so.allowed_hosts = args.allow_hosts;
  so.max_body_bytes = args.max_body_bytes;
  so.heartbeat = std::chrono::milliseconds(std::max(10, args.heartbeat_ms));
  so.sse_max_buffered = std::max<std::size_t>(4096, args.sse_max_buffered);
  so.sse_stall_timeout = std::chrono::milliseconds(std::max(100, args.sse_stall_ms));
  so.version = TETHER_VERSION;
  so.profile_problem = [&n](std::string_view p) { return n.profile_problem(p); };
  // Connections, descriptors and workspace roots (api/server.h, api/workspace.h).
  so.max_connections = args.max_connections;
  so.max_connections_per_peer = args.max_connections_per_peer;
  spdlog::info("serve: {} descriptors", api::raise_descriptor_limit());
  so.data_dir = n.data_dir();
  so.workspace_roots = n.workspace_roots();
  so.work = &n.work();
  for (const auto& [name, p] : n.settings().profiles)
    so.profiles.push_back({name, p.runtime, n.model_label(name), n.profile_problem(name)});
  if (!args.results.empty()) {
    const fs::path dir = fs::absolute(args.results);
    so.qualification = api::server_options::qualification_source{
        dir, [dir](const std::string& campaign) -> result<std::string> {
          auto data = e2e::load_report_data(dir, campaign);
          if (!data) {
            if (data.error() == e2e::e2e_errc::not_found)
              return make_error(api::api_errc::not_found, data.error().message);
            return data.error();
          }
          return e2e::render_dashboard(*data);
        }};
  }
  if (args.tls_cert.empty() != args.tls_key.empty()) {
    fmt::print(stderr, "tether serve: --tls-cert and --tls-key go together\n");
    return exit_usage;
  }
  if (!args.tls_cert.empty()) {
    auto id = http::load_tls_identity(args.tls_cert, args.tls_key);
    if (!id) {
      fmt::print(stderr, "tether serve: {}\n", id.error().message);
      return exit_usage;
    }
    auto tls = http::make_server_tls_context(*id);
    if (!tls) {
      fmt::print(stderr, "tether serve: {}\n", tls.error().message);
      return exit_usage;
    }
    so.tls = *tls;
  }
  api::server srv(n.executor(), n.service(), n.store(), so);
  if (auto r = srv.start(); !r) {
    if (r.error() == http::server_errc::address_in_use) {
      fmt::print(stderr, "tether serve: {} is in use (another server listens there?): choose another --listen\n",
                 args.listen);
      return exit_address_in_use;
    }
    fmt::print(stderr, "tether serve: {}\n", r.error().message);
    return exit_usage;
  }
  // Bound: recovery may claim sessions now. Requests that arrive meanwhile
  // are served (admission and the coordinator are safe to use while
  // recovery runs: a session both wake is drained once); clients that wait
  // for the "listening on" line below see a recovered server.
  auto recovered = n.run(n.service().start());
  if (!recovered) {
    fmt::print(stderr, "tether serve: recovery failed: {}\n", recovered.error().describe());
    n.run(srv.stop());
    return 1;
  }
  if (recovered->claimed > 0 || recovered->quarantined > 0 || recovered->woken > 0)
    spdlog::info("serve: recovery took over {} session(s), woke {} with inputs nobody ran, quarantined {}",
                 recovered->claimed, recovered->woken, recovered->quarantined);
  if (!loopback(args.listen)) spdlog::warn("serve: listening on {}, not only on loopback", args.listen);
  const std::string where =
      fmt::format("{}://{}:{}", so.tls ? "https" : "http", args.listen.substr(0, args.listen.rfind(':')), srv.port());
  spdlog::info(
      "serve: data in {}; token in {}", n.data_dir().string(),
      std::getenv("TETHER_TOKEN") != nullptr ? std::string("$TETHER_TOKEN") : (n.data_dir() / "token").string());
  spdlog::info("serve: the web interface is at {}/ui/ (sign in with the token)", where);
  // The one line on stdout: scripts read the address from it.
  fmt::print("listening on {}\n", where);
  std::fflush(stdout);

  std::promise<int> signalled;
  asio::signal_set signals(n.executor(), SIGINT, SIGTERM);
  signals.async_wait([&signalled](const boost::system::error_code& ec, int sig) { signalled.set_value(ec ? 0 : sig); });
  const int sig = signalled.get_future().get();
  spdlog::info("serve: {} received: stopping", sig == SIGINT ? "SIGINT" : "SIGTERM");
  n.run(srv.stop());
  n.close();
  spdlog::info("serve: stopped");
  return 0;
}

}  // namespace

void add_serve_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<serve_args>();
  auto* cmd = app.add_subcommand("serve", "Run the HTTP API until SIGTERM or SIGINT");
  cmd->add_option("--config", args->config, "the TOML configuration (default: $TETHER_CONFIG, else built-in defaults)");
  cmd->add_option("--data", args->data, "data directory (default: the config's data_dir, else ./tether-data)");
  cmd->add_option("--store", args->store,
                  "the event store: a PostgreSQL URL (postgres://…) shared with other nodes (default: the config's "
                  "store, else SQLite in the data directory)");
  cmd->add_option("--listen", args->listen, "HOST:PORT to listen on (port 0 picks a free one)")->capture_default_str();
  cmd->add_option("--allow-host", args->allow_hosts,
                  "a Host name the server answers to besides IP addresses and localhost (repeatable; other names "
                  "are refused, against DNS rebinding)");
  cmd->add_option("--node", args->node,
                  "this node's name for leases (unique among live servers on one store; on a shared store the default "
                  "is the host's name)")
      ->capture_default_str();
  cmd->add_option("--max-body-bytes", args->max_body_bytes, "request bodies larger than this get 413")
      ->capture_default_str();
  cmd->add_option("--heartbeat-ms", args->heartbeat_ms, "milliseconds between SSE heartbeats on an idle stream")
      ->capture_default_str();
  cmd->add_option("--sse-max-buffered-bytes", args->sse_max_buffered,
                  "bytes queued for an event-stream client before events for it wait")
      ->capture_default_str();
  cmd->add_option("--sse-stall-timeout-ms", args->sse_stall_ms,
                  "an event-stream client that reads nothing this long is disconnected")
      ->capture_default_str();
  cmd->add_option("--max-connections", args->max_connections,
                  "connections at once (0: 4096, within the descriptor limit)");
  cmd->add_option("--max-connections-per-peer", args->max_connections_per_peer,
                  "connections at once from one address (0: half of --max-connections)");
  cmd->add_option("--results", args->results,
                  "a `tether e2e` results folder (--out) whose dashboard and history the web interface shows");
  cmd->add_option("--tls-cert", args->tls_cert, "PEM certificate (chain): serve HTTPS (with --tls-key)");
  cmd->add_option("--tls-key", args->tls_key, "PEM private key of --tls-cert");
  cmd->callback([args, &exit_code] { exit_code = serve(*args); });
}

}  // namespace tether::cli
