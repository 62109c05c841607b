#include "node/node.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <optional>
#include <type_traits>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/json.hpp>

#include "env/kinds.h"
#include "mock/server.h"
#include "node/data_dir.h"
#include "node/leased_runtime.h"
#include "node/masks.h"
#include "process/records.h"
#include "process/sandbox.h"
#include "runtime/agent/bridge/tool_bridge.h"
#include "runtime/agent/portable/keeper.h"
#include "runtime/agent/relay/model_relay.h"
#include "runtime/agent/settings.h"
#include "runtime/kind.h"
#include "runtime/common/pricing.h"
#include "runtime/native/settings.h"
#include "runtime/registry.h"
#include "store/postgres/postgres_store.h"
#include "store/sqlite/sqlite_store.h"
#include "work/agent_tools.h"
#include "work/service.h"

namespace tether::node {

namespace asio = boost::asio;
namespace fs = std::filesystem;

// Runs before anything else of this start can use the records: the
// processes a dead incarnation left (DATA/run/procs) are killed.
// Whether the environment variable is set to something.
bool has_value(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  return v != nullptr && *v != '\0';
}

void kill_leftovers(const fs::path& records) {
  const auto report = process::kill_recorded_groups(records);
  if (report.killed > 0)
    spdlog::warn("node: killed {} process group(s) a previous run of this data directory left running", report.killed);
  for (const auto& p : report.problems) spdlog::warn("node: removed {}", p);
}

// A profile's session categories for a task's freshness decision
// (work/fingerprint.h): what decides whether its agent session can go on.
std::map<std::string, boost::json::value, std::less<>> session_config(const config::profile& p) {
  namespace json = boost::json;
  const auto& native = p.kind_settings<runtime::native::native_settings>();
  const auto& a = p.kind_settings<runtime::agent::agent_settings>();
  json::object agent{{"command", a.command}, {"wire", a.wire}};
  json::array args;
  for (const auto& arg : a.args) args.emplace_back(arg);
  agent["args"] = std::move(args);
  json::object env;
  for (const auto& name : p.env) {
    const char* value = std::getenv(name.c_str());
    env[name] = value != nullptr ? json::value(value) : json::value(nullptr);
  }
  for (const auto& [name, value] : a.set_env) env[name] = value;
  std::map<std::string, json::value, std::less<>> out;
  out["runtime"] = json::object{{"runtime", p.runtime}};
  out["runtime_config"] = json::object{{"max_steps", native.max_steps},
                                       {"context_window", native.context_window},
                                       {"network", native.network},
                                       {"agent_network", runtime::agent::to_string(a.network)},
                                       {"agent", std::move(agent)}};
  out["model"] = json::object{{"model", p.model},
                              {"base_url", p.base_url},
                              {"scripted", p.scripted()},
                              {"provider", runtime::native::to_string(native.provider)}};
  out["instructions"] = json::object{{"instructions", native.instructions}};
  out["environment"] = std::move(env);  // by presence only
  out["secrets"] = json::object{{"api_key_env", p.api_key_env},
                                {"present", !p.api_key_env.empty() && std::getenv(p.api_key_env.c_str()) != nullptr}};
  return out;
}

std::vector<fs::path> roots_of(const config::settings& settings, const fs::path& data) {
  if (settings.workspace_roots) return *settings.workspace_roots;
  std::vector<fs::path> roots{data / "workspaces"};
  std::error_code ec;
  if (const auto cwd = fs::current_path(ec); !ec && cwd != cwd.root_path()) roots.push_back(cwd);
  return roots;
}

struct node::impl final : runtime::kind_host {
  config::settings settings;
  runtime::price_table price_list = runtime::price_table::defaults();  // settings.prices laid over
  std::optional<tether::node::data_dir> dir;  // locked for as long as the node lives (declared first: released last)
  fs::path data;
  std::optional<fs::path> bwrap;                 // set when bubblewrap works here
  std::string sandbox_problem;                   // why it does not, when a profile wanted it
  std::vector<std::string> withheld_names;       // every profile's api_key_env
  std::vector<fs::path> secret_paths;            // what no sandboxed child may read (node/masks.h)
  std::function<void(const std::string&)> note;  // node_options::note
  std::optional<mock::server> scripted;
  std::unique_ptr<store::event_store> store;
  // Agent programs' own session state, kept in the store (started with the first agent profile).
  std::unique_ptr<runtime::agent::portable::state_keeper> states;
  // The agents' work tools: the runtimes get them before the work service
  // exists, which binds them once it does (work/agent_tools.h).
  work::agent_tools agent_work_tools;
  runtime::registry runtimes;  // every profile's runtime, built by its kind
  asio::io_context io;
  // The session service's runtime: `runtimes`, with the turns of profiles
  // that name an environment run in a lease of it (leased_runtime.h).
  std::unique_ptr<leased_runtime> leased;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> guard;
  std::vector<std::thread> threads;
  std::unique_ptr<session::session_service> service;
  std::unique_ptr<work::work_service> work;
  asio::thread_pool work_pool{2};                       // git and the setup commands of task workspaces (they block)
  // Each turn's workspace, so a session can be forked at it (snapshots.h);
  // git blocks, on a pool of its own.
  std::optional<git_snapshots> snapshots;
  std::unique_ptr<session::workspace_snapshots> fork_snapshots;
  asio::thread_pool snapshot_takes{2};
  asio::thread_pool snapshot_pool{2};  // forks' restores, and turns waiting for their session's last snapshot
  std::unique_ptr<runtime::agent::tool_bridge> bridge;  // started with the first agent profile
  std::unique_ptr<runtime::agent::model_relay> relay;   // likewise
  bool closed = false;

  // ---- runtime::kind_host: what the kinds' factories get ----
  asio::any_io_executor executor() override { return io.get_executor(); }
  [[nodiscard]] const fs::path& data_dir() const override { return data; }
  [[nodiscard]] const runtime::price_table& prices() const override { return price_list; }
  work::agent_tools* work_tools() override { return &agent_work_tools; }
  [[nodiscard]] const std::vector<std::string>& withheld() const override { return withheld_names; }
  [[nodiscard]] const std::vector<fs::path>& secrets() const override { return secret_paths; }
  [[nodiscard]] std::vector<fs::path> workspace_roots() const override { return roots_of(settings, data); }

  // Starts the scripted model once, on first use by a profile.
  result<std::string> scripted_base_url() override {
    if (!scripted) {
      scripted.emplace(mock::server_options{});
      if (auto r = scripted->start(); !r) {
        scripted.reset();
        return make_error(util_errc::invalid_argument,
                          "cannot start the built-in scripted model: " + r.error().describe());
      }
      if (note) note("no model configured: the built-in scripted model answers at " + scripted->base_url() + "/v1");
    }
    return scripted->base_url() + "/v1";
  }

  result<std::string> model_key(const config::profile& prof) override {
    if (prof.api_key_env.empty()) return std::string();
    if (!has_value(prof.api_key_env))
      return make_error(util_errc::invalid_argument, prof.api_key_env + " is not set (profile " + prof.name + ")");
    return std::string(std::getenv(prof.api_key_env.c_str()));
  }

  // Whether bubblewrap runs here, probed once (sandbox_problem says why not).
  std::optional<fs::path> bubblewrap(std::string& why) override {
    if (!bwrap && sandbox_problem.empty()) {
      auto probed = process::probe_sandbox();
      if (probed)
        bwrap = *probed;
      else
        sandbox_problem = probed.error().message;
    }
    why = sandbox_problem;
    return bwrap;
  }

  // The bridge `tether mcp` reaches the turns through, on first use.
  result<runtime::agent::tool_bridge*> tool_bridge() override {
    if (!bridge) {
      auto b = std::make_unique<runtime::agent::tool_bridge>(io.get_executor(), data / "run" / "tools.sock");
      if (auto r = b->start(); !r) return r.error();
      bridge = std::move(b);
    }
    return bridge.get();
  }

  // The relay agents reach their model through, on first use.
  result<runtime::agent::model_relay*> model_relay() override {
    if (!relay) {
      auto r = std::make_unique<runtime::agent::model_relay>(
          io.get_executor(), runtime::agent::relay_options{data / "run" / "relay.sock"});
      if (auto started = r->start(); !started) return started.error();
      relay = std::move(r);
    }
    return relay.get();
  }

  runtime::agent::portable::state_keeper* agent_states() override {
    if (!states) states = std::make_unique<runtime::agent::portable::state_keeper>(real_clock());
    return states.get();
  }

  // Every runtime kind (runtime/kinds.cpp); each builds a profile's runtime.
  void add_kinds(const node_options& o) {
    note = o.note;
    for (const auto& k : runtime::kinds())
      runtimes.add_kind(k.config.name, [this, &k](const config::profile& prof) { return k.make(prof, *this); });
  }

  result<void> add_profile(const node_options& o, config::profile prof) {
    if (o.adjust) {
      if (auto r = o.adjust(prof); !r) return r.error();
    }
    return runtimes.add_profile(prof);
  }
};

namespace {

// The store a node uses: SQLite in its data directory (no setting, or
// "sqlite"), or a PostgreSQL database shared with other nodes.
result<std::unique_ptr<store::event_store>> open_store(const std::string& setting, const fs::path& data) {
  if (setting.empty() || setting == "sqlite") {
    store::sqlite_options so;
    so.path = (data / "tether.db").string();
    return store::open_sqlite_store(so);
  }
  if (store::is_postgres_url(setting)) {
    store::postgres_options po;
    po.url = setting;
    return store::open_postgres_store(po);
  }
  return make_error(util_errc::invalid_argument, "store must be \"sqlite\" or a PostgreSQL URL (postgres://…), not \"" +
                                                     store::redacted_url(setting) + "\"");
}

// Leases are owned by "<name>/<incarnation>", and a lease of another
// incarnation of the same name counts as dead: on a shared store the
// default name ("node", or serve's "serve") must differ between machines,
// so there it is the host's name.
std::string node_name(const std::string& wanted, bool shared) {
  if (!shared || (wanted != "node" && wanted != "serve")) return wanted;
  std::array<char, 256> host{};
  if (::gethostname(host.data(), host.size() - 1) != 0 || host[0] == '\0') return wanted;
  return std::string(host.data());
}

}  // namespace

node::node(std::unique_ptr<impl> i) : impl_(std::move(i)) {}

node::~node() { close(); }

result<std::unique_ptr<node>> node::open(node_options o) {
  auto i = std::make_unique<impl>();
  auto loaded =
      config::load(o.config.empty() ? std::nullopt : std::optional<fs::path>(o.config), runtime::config_kinds(),
                   env::config_kinds());
  if (!loaded) return loaded.error();
  i->settings = std::move(loaded).value();
  for (const auto& [model, price] : i->settings.prices)
    i->price_list.set(model, {price.input, price.output, price.cached_input});
  const std::string wanted = !o.data_dir.empty()             ? o.data_dir
                             : !i->settings.data_dir.empty() ? i->settings.data_dir
                                                             : config::default_data_dir();
  // Before anything else touches the directory: a second process on it
  // stops here, having written nothing.
  auto dir = claim_data_dir(wanted, [](const std::string& line) { spdlog::warn("data directory: {}", line); });
  if (!dir) return dir.error();
  i->data = dir->path();
  i->dir.emplace(std::move(dir).value());
  for (const auto& [name, prof] : i->settings.profiles)
    if (!prof.api_key_env.empty()) i->withheld_names.push_back(prof.api_key_env);
  const std::string store_setting = !o.store.empty() ? o.store : i->settings.store;
  i->secret_paths = server_secrets(o.config, store_setting);

  // `default` always exists: with no profile configured it is the scripted model.
  std::map<std::string, config::profile, std::less<>> profiles;
  if (!o.only_profile.empty()) {
    auto chosen = i->settings.find(o.only_profile);
    if (!chosen) return chosen.error();
    profiles.emplace(o.only_profile, *chosen);
  } else {
    profiles.insert(i->settings.profiles.begin(), i->settings.profiles.end());
    if (profiles.find("default") == profiles.end()) {
      auto d = i->settings.find("default");
      if (!d) return d.error();
      profiles.emplace("default", *d);
    }
  }
  i->add_kinds(o);
  for (auto& [name, prof] : profiles) {
    // A server keeps its other profiles when one's key is missing; `run`,
    // which names the one it uses, fails.
    if (o.only_profile.empty() && !prof.api_key_env.empty() && !has_value(prof.api_key_env)) {
      const auto why = prof.api_key_env + " is not set";
      spdlog::warn("node: profile {} is disabled: {}", name, why);
      i->runtimes.disable(name, why);
      continue;
    }
    if (auto r = i->add_profile(o, prof); !r) return r.error();
  }

  auto st = open_store(store_setting, i->data);
  if (!st) return st.error();
  i->store = std::move(st).value();
  if (i->states) i->states->bind(*i->store);
  const bool shared = i->store->shared();
  kill_leftovers(i->data / "run" / "procs");

  i->leased = std::make_unique<leased_runtime>(i->runtimes, *i->store, i->io.get_executor(), i->data);
  for (const auto& [name, prof] : profiles) {
    if (prof.environment == "local" || !i->runtimes.has_profile(name)) continue;
    const auto e = i->settings.environments.find(prof.environment);
    if (e == i->settings.environments.end()) continue;  // config::load checked it
    if (auto r = i->leased->place_profile(name, e->second); !r) return r.error();
  }
  i->snapshots.emplace(i->data);
  i->leased->keep_snapshots(*i->snapshots, i->snapshot_takes, i->snapshot_pool);
  i->fork_snapshots = i->snapshots->as_session(i->snapshot_pool.get_executor());
  i->guard.emplace(i->io.get_executor());
  for (int t = 0; t < std::max(1, o.threads); ++t) i->threads.emplace_back([io = &i->io] { io->run(); });
  session::session_options so;
  so.lease_ttl_ms = i->settings.leases.ttl_ms;
  so.lease_renew_ms = i->settings.leases.renew_ms;
  so.snapshots = i->fork_snapshots.get();
  // On a shared store a dead node's sessions are looked for every second,
  // so they are taken over within the lease period and a second.
  so.recovery_interval_ms = i->settings.leases.scan_ms > 0 ? i->settings.leases.scan_ms
                            : shared                       ? 1'000
                                                           : so.recovery_interval_ms;
  i->service = std::make_unique<session::session_service>(i->io.get_executor(), *i->store, *i->leased, real_clock(),
                                                          session::make_node_identity(node_name(o.name, shared)), so);
  work::work_options wo;
  wo.workspaces = i->data / "workspaces";
  wo.profile_config = [settings = &i->settings](std::string_view name) {
    auto p = settings->find(name.empty() ? std::string_view("default") : name);
    return p ? session_config(*p) : std::map<std::string, boost::json::value, std::less<>>{};
  };
  wo.blocking = i->work_pool.get_executor();
  wo.local_roots = roots_of(i->settings, i->data);
  const char* path = std::getenv("PATH");
  wo.command_env = {std::string("PATH=") + (path != nullptr ? path : "/usr/bin:/bin"), "LANG=C.UTF-8"};
  i->work = std::make_unique<work::work_service>(*i->store, *i->service, std::move(wo));
  i->agent_work_tools.bind(*i->work);
  return std::unique_ptr<node>(new node(std::move(i)));
}

session::session_service& node::service() { return *impl_->service; }
work::work_service& node::work() { return *impl_->work; }

std::vector<fs::path> node::workspace_roots() const { return roots_of(impl_->settings, impl_->data); }
store::event_store& node::store() { return *impl_->store; }
const config::settings& node::settings() const { return impl_->settings; }
const fs::path& node::data_dir() const { return impl_->data; }
bool node::has_profile(std::string_view name) const { return impl_->runtimes.has_profile(name); }
std::string node::profile_problem(std::string_view name) const { return impl_->runtimes.problem(name); }
std::string node::model_label(std::string_view profile) const {
  auto label = impl_->runtimes.model(profile);
  if (label == "scripted" && impl_->scripted)
    label += ", the built-in scripted model at " + impl_->scripted->base_url();
  return label;
}
asio::any_io_executor node::executor() { return impl_->io.get_executor(); }
std::string node::scripted_url() const { return impl_->scripted ? impl_->scripted->base_url() : std::string(); }

void node::close() {
  if (impl_->closed) return;
  impl_->closed = true;
  run(impl_->service->stop());
  impl_->work_pool.join();
  impl_->snapshot_takes.join();
  impl_->snapshot_pool.join();
  if (impl_->bridge) run(impl_->bridge->stop());
  if (impl_->relay) run(impl_->relay->stop());
  impl_->store->stop();
  impl_->guard.reset();
  for (auto& t : impl_->threads) t.join();
  impl_->service.reset();
  if (impl_->scripted) impl_->scripted->stop();
}

}  // namespace tether::node
