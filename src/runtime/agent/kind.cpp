#include "runtime/agent/kind.h"

#include <type_traits>

#include <spdlog/spdlog.h>

#include "http/client.h"
#include "runtime/agent/agent_runtime.h"
#include "runtime/agent/programs.h"
#include "runtime/agent/warm_runtime.h"

namespace tether::runtime::agent {

namespace fs = std::filesystem;

namespace {

// What a contained agent sees of the host besides its own home and
// workspace: not the server's secrets, not the workspace roots (other
// sessions' workspaces) unless a root holds the system, the agent's
// program or `tether` itself (then it stays visible, read-only).
void contain_view(agent_options& o, const kind_host& host) {
  o.masked = host.secrets();
  std::error_code ec;
  // The program's install prefix: PREFIX/bin/x, PREFIX/node_modules/.bin/x, or its own directory.
  auto prefix = fs::canonical(o.program, ec).parent_path();
  const auto dir = o.program.parent_path();
  if (dir.filename() == ".bin" && dir.parent_path().filename() == "node_modules")
    prefix = fs::weakly_canonical(dir.parent_path().parent_path(), ec);
  else if (dir.filename() == "bin")
    prefix = fs::weakly_canonical(dir.parent_path(), ec);
  const auto tether = fs::weakly_canonical(o.tether_program, ec);
  o.visible = {prefix, tether};
  const auto holds = [](const fs::path& dir, const fs::path& p) {
    const auto rel = p.lexically_relative(dir);
    return !rel.empty() && *rel.begin() != "..";
  };
  for (const auto& root : host.workspace_roots()) {
    const auto r = fs::weakly_canonical(root, ec);
    if (ec || r == r.root_path()) continue;
    bool shared = holds(r, prefix) || holds(r, tether);
    for (const char* system : {"/usr", "/etc", "/bin", "/lib", "/opt", "/sbin"}) shared = shared || holds(r, system);
    if (!shared) o.masked.push_back(r);
  }
}

// What the relay forwards a profile's requests with: its CA file, the
// environment's proxies (never for the scripted model, on loopback).
std::shared_ptr<http::http_client> upstream_client(const config::profile& prof) {
  http::http_options h;
  h.ca_file = prof.ca_file;
  if (prof.scripted()) h.proxies.no_proxy = "*";
  return std::make_shared<http::http_client>(std::move(h));
}

// A per-turn (dialect) or a warm (warm_dialect) agent runtime for the profile.
template <class Dialect>
result<std::unique_ptr<session::runtime>> build(const config::profile& prof, kind_host& host,
                                                std::unique_ptr<Dialect> d) {
  const auto& settings = prof.kind_settings<agent_settings>();
  agent_options o;
  if (prof.environment != "local") {
    // Its turns run in an environment: the program is found there, on its PATH
    // (or the profile's command, a path there).
    o.program = settings.command.empty() ? std::string(d->program()) : settings.command;
  } else {
    auto program = find(d->program(), {.command = settings.command});
    if (!program)
      return make_error(util_errc::invalid_argument, "profile " + prof.name + ": " + program.error().message +
                                                         " (scripts/install-agents installs it)");
    o.program = program->path;
  }
  o.kind = prof.runtime;
  o.profile = prof.name;
  o.settings = settings;
  o.endpoint.model = prof.model;
  if (prof.scripted()) {
    auto base = host.scripted_base_url();  // ".../v1"
    if (!base) return base.error();
    o.endpoint.base_url = d->scripted_base_url(base->substr(0, base->size() - 3));
  } else {
    o.endpoint.base_url = prof.base_url;
  }
  auto key = host.model_key(prof);
  if (!key) return key.error();
  o.api_key = std::move(*key);
  o.pass_env = prof.env;
  o.withheld = host.withheld();
  o.data_dir = host.data_dir();
  o.prices = host.prices();
  auto b = host.tool_bridge();
  if (!b) return make_error(util_errc::invalid_argument, "profile " + prof.name + ": " + b.error().message);
  o.bridge = *b;
  o.work = host.work_tools();
  std::error_code ec;
  o.tether_program = fs::read_symlink("/proc/self/exe", ec);
  auto r = host.model_relay();
  if (!r) return make_error(util_errc::invalid_argument, "profile " + prof.name + ": " + r.error().message);
  o.relay = *r;
  o.upstream = upstream_client(prof);
  o.io = host.executor();
  o.states = host.agent_states();
  // The environment is the agent's isolation: nothing of this machine's sandbox applies there.
  if (prof.environment != "local") {
    if constexpr (std::is_same_v<Dialect, warm_dialect>)
      return make_warm_runtime(std::move(d), std::move(o));
    else
      return make_per_turn_runtime(std::move(d), std::move(o));
  }
  std::string why;
  o.bwrap = host.bubblewrap(why);
  if (!o.bwrap)
    spdlog::warn(
        "node: WARNING: profile {}: the agent runs without bubblewrap ({}): what it starts in another "
        "process group can outlive a stop, and it can read the data directory",
        prof.name, why);
  o.relay_only = settings.network == agent_network::relay_only;
  if (o.relay_only && !o.bwrap)
    spdlog::warn(
        "node: WARNING: profile {}: network = \"relay-only\" needs bubblewrap: the agent has the "
        "host's network",
        prof.name);
  contain_view(o, host);
  if constexpr (std::is_same_v<Dialect, warm_dialect>)
    return make_warm_runtime(std::move(d), std::move(o));
  else
    return make_per_turn_runtime(std::move(d), std::move(o));
}

}  // namespace

runtime::kind per_turn_kind(std::string_view name, std::unique_ptr<dialect> (*make)(), agent_kind_traits traits) {
  return {agent_keys(std::string(name), traits), std::string(make()->program()),
          [make](const config::profile& p, kind_host& host) { return build(p, host, make()); }};
}

runtime::kind warm_kind(std::string_view name, std::unique_ptr<warm_dialect> (*make)(), agent_kind_traits traits) {
  return {agent_keys(std::string(name), traits), std::string(make()->program()),
          [make](const config::profile& p, kind_host& host) { return build(p, host, make()); }};
}

runtime::kind acp_kind(std::string_view name, acp_agent agent, agent_kind_traits traits) {
  return {agent_keys(std::string(name), traits), std::string(make_acp(agent)->program()),
          [agent](const config::profile& p, kind_host& host) { return build(p, host, make_acp(agent)); }};
}

}  // namespace tether::runtime::agent
