#include "runtime/native/kind.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "runtime/native/native_runtime.h"
#include "runtime/native/settings.h"

namespace tether::runtime::native {

namespace {

// The profile's bash sandbox: without a working bubblewrap, off (loudly).
sandbox_policy sandbox_of(const config::profile& prof, const native_settings& n, kind_host& host) {
  sandbox_policy p;
  p.mode = n.sandbox;
  p.network = n.network;
  p.env = prof.env;
  p.withheld = host.withheld();
  if (!prof.api_key_env.empty()) p.withheld.push_back(prof.api_key_env);  // set by tether run's flags too
  p.hidden = host.data_dir();
  p.masked = host.secrets();
  p.records = host.data_dir() / "run" / "procs";
  std::string why;
  const auto bwrap = p.mode != sandbox_mode::off ? host.bubblewrap(why) : std::nullopt;
  if (p.mode != sandbox_mode::off && !bwrap) {
    spdlog::warn("node: WARNING: profile {}: the bash tool runs WITHOUT a sandbox (sandbox = \"{}\" wanted): {}",
                 prof.name, to_string(p.mode), why);
    p.mode = sandbox_mode::off;
  } else if (p.mode == sandbox_mode::off) {
    spdlog::warn(
        "node: WARNING: profile {} has sandbox = \"off\": bash commands run as this user with its files and "
        "network, and only their environment is filtered",
        prof.name);
  }
  if (bwrap) p.bwrap = *bwrap;
  for (const auto& name : prof.env)
    if (std::find(host.withheld().begin(), host.withheld().end(), name) != host.withheld().end())
      spdlog::warn("node: profile {}: env names {}, an api_key_env: it is withheld from tools", prof.name, name);
  return p;
}

result<std::unique_ptr<session::runtime>> make(const config::profile& prof, kind_host& host) {
  const auto& settings = prof.kind_settings<native_settings>();
  native_options n;
  n.provider.api = settings.provider;
  n.provider.model = prof.model;
  n.data_dir = host.data_dir();
  n.max_steps = settings.max_steps;
  n.compaction.context_window = settings.context_window;
  n.compaction.reserve = std::min<std::int64_t>(n.compaction.reserve, settings.context_window / 4);
  n.prices = host.prices();
  n.sandbox = sandbox_of(prof, settings, host);
  n.work = host.work_tools();
  n.instructions = settings.instructions;
  if (prof.scripted()) {
    auto base = host.scripted_base_url();
    if (!base) return base.error();
    n.provider.base_url = *base;
    n.provider.no_proxy = "*";  // it is ours, on loopback: never through a proxy
  } else {
    n.provider.base_url = prof.base_url;
    n.provider.ca_file = prof.ca_file;
    auto key = host.model_key(prof);
    if (!key) return key.error();
    n.provider.api_key = std::move(*key);
  }
  return std::unique_ptr<session::runtime>(make_native_runtime(std::move(n)));
}

}  // namespace

runtime::kind native_kind(std::string_view name) { return {native_keys(std::string(name)), "", make}; }

}  // namespace tether::runtime::native
