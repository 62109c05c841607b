// `tether doctor`: what is installed, configured and reachable, one line
// per check. It reports what exists and what is configured, nothing else:
// an agent CLI that is not installed gets a line only when a profile needs
// it, and a turn runs through an agent runtime only when a profile uses it
// (or with --all-runtimes, through every installed one).
//
//   ok      works
//   warn    optional and not working, or not running now (the server)
//   broken  will make a run fail: an invalid config, a profile whose API key
//           variable is unset or whose agent CLI is missing, a server that
//           refuses the token, a configured runtime whose turn failed
//
// Exit 0 when nothing is broken, 1 otherwise. Keys are never printed, only
// whether their variable is set.
#include <sqlite3.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <boost/json.hpp>

#include "cli/client.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/version.h"
#include "config/config.h"
#include "process/run_to_end.h"
#include "runtime/agent/programs.h"
#include "runtime/agent/settings.h"
#include "env/kinds.h"
#include "runtime/kind.h"
#include "runtime/native/settings.h"
#include "runtime/common/sandbox.h"
#include "store/postgres/postgres_store.h"

namespace tether::cli {

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace std::chrono_literals;

enum class status { ok, warn, broken };

struct check {
  std::string name;
  status state = status::ok;
  std::string detail;
};

std::string_view to_string(status s) {
  switch (s) {
    case status::ok:
      return "ok";
    case status::warn:
      return "warn";
    case status::broken:
      return "broken";
  }
  return "?";
}

// Runs `program --version` with stdin /dev/null; its first output line, or
// nullopt when it failed or did not finish within `limit` (then its group is killed).
std::optional<std::string> version_of(const fs::path& program, std::chrono::milliseconds limit) {
  process::spawn_options o;
  o.argv = {program.string(), "--version"};
  o.env = process::inherited_environment();
  auto done = process::run_to_end(std::move(o), {.limit = limit});
  if (!done || done->timed_out || !done->status.success()) return std::nullopt;
  const std::string& text = done->output;
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return std::string("(no output)");
  const auto eol = text.find('\n', first);
  std::string line = text.substr(first, eol == std::string::npos ? std::string::npos : eol - first);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

// node and npm: reported when found, or when missing while an agent CLI is
// installed or configured (they run on node).
void check_program(std::vector<check>& out, std::string_view program, std::string_view why, bool needed) {
  const auto found = process::find_program(std::string(program));
  if (!found) {
    if (needed) out.push_back({std::string(program), status::warn, fmt::format("not on PATH ({})", why)});
    return;
  }
  if (auto v = version_of(*found, 10s)) {
    out.push_back({std::string(program), status::ok, fmt::format("{} ({})", *v, found->string())});
  } else {
    out.push_back({std::string(program), status::warn,
                   fmt::format("{} did not answer --version within 10 s, or failed", found->string())});
  }
}

// The agent CLI a runtime kind drives ("" for native; "acp" for the
// generic ACP kind, which runs a profile's own command).
std::string_view program_of(std::string_view runtime_kind) {
  const auto* k = runtime::find_kind(runtime_kind);
  return k != nullptr ? std::string_view(k->program) : std::string_view();
}

// One line per installed agent CLI: its version, where it was found
// (runtime/agent/programs.h: command, prefix or path) and its path. A
// missing one gets a line only when profiles (`needed_by`) need it.
// Returns whether it is installed.
bool check_agent_program(std::vector<check>& out, std::string_view kind, const std::string& needed_by) {
  const std::string name = fmt::format("agent {}", kind);
  auto found = runtime::agent::find(kind);
  if (!found) {
    if (!needed_by.empty())
      out.push_back({name, status::broken,
                     fmt::format("{}; profiles {} need it (scripts/install-agents installs it)", found.error().message,
                                 needed_by)});
    return false;
  }
  auto version = runtime::agent::installed_version(*found);
  if (!version) {
    out.push_back({name, status::warn,
                   fmt::format("found in {} ({}) but {}", to_string(found->where), found->path.string(),
                               version.error().message)});
    return true;
  }
  out.push_back(
      {name, status::ok, fmt::format("{}, found in {}: {}", *version, to_string(found->where), found->path.string())});
  return true;
}

// A one-line turn of an agent runtime through `tether run` against the
// built-in scripted model, in a temporary data directory (removed
// afterwards). A failed turn of a configured runtime is broken.
void check_agent_smoke(std::vector<check>& out, std::string_view runtime_kind, bool configured) {
  const std::string name = fmt::format("runtime {}", runtime_kind);
  std::error_code ec;
  char pattern[] = "/tmp/tether-doctor-XXXXXX";
  const char* made = ::mkdtemp(pattern);
  if (made == nullptr) {
    out.push_back({name, status::warn, "not checked: no temporary directory"});
    return;
  }
  const fs::path dir(made);
  {
    std::ofstream cfg(dir / "tether.toml");
    cfg << "[profiles.smoke]\nruntime = \"" << runtime_kind << "\"\nidle_timeout_ms = 60000\n";
  }
  constexpr std::string_view marker = "TETHER_SMOKE_OK";
  process::spawn_options o;
  fs::create_directory(dir / "work", ec);  // the workspace: beside the data directory, not holding it
  o.argv = {fs::read_symlink("/proc/self/exe", ec).string(),
            "run",
            "--data",
            (dir / "data").string(),
            "--workspace",
            (dir / "work").string(),
            "--config",
            (dir / "tether.toml").string(),
            "--profile",
            "smoke",
            fmt::format("Reply with exactly: {}", marker)};
  o.env = process::inherited_environment();
  o.cwd = dir;
  const auto t0 = std::chrono::steady_clock::now();
  auto done = process::run_to_end(o, {.limit = std::chrono::seconds(120)});
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  fs::remove_all(dir, ec);
  if (done && !done->timed_out && done->status.success() && done->output.find(marker) != std::string::npos) {
    out.push_back({name, status::ok, fmt::format("a turn against the scripted model answered in {} ms", ms.count())});
    return;
  }
  std::string why = !done ? done.error().message : done->timed_out ? "no answer within 120 s" : done->status.describe();
  if (done && !done->output.empty()) {
    auto last = done->output.substr(done->output.size() > 300 ? done->output.size() - 300 : 0);
    while (!last.empty() && last.back() == '\n') last.pop_back();
    why += ": " + last;
  }
  out.push_back({name, configured ? status::broken : status::warn, "a turn against the scripted model failed: " + why});
}

// The agent CLIs and runtimes: each installed CLI, each missing one a
// profile needs, and a turn through each runtime a profile uses (every
// installed one with `all`). Returns whether any agent CLI is installed or
// needed (node then matters).
bool check_agents(std::vector<check>& out, const config::settings* settings, bool all) {
  std::map<std::string, std::string, std::less<>> needed_by;  // agent CLI -> the profiles using it
  std::set<std::string, std::less<>> configured;              // the agent runtime kinds profiles use
  if (settings != nullptr) {
    for (const auto& [name, p] : settings->profiles) {
      const auto program = program_of(p.runtime);
      const auto& command = p.kind_settings<runtime::agent::agent_settings>().command;
      if (program.empty() || !command.empty()) continue;  // native, or a command of its own
      auto& names = needed_by[std::string(program)];
      names += (names.empty() ? "" : ", ") + name;
      configured.emplace(p.runtime);
    }
  }
  std::set<std::string_view> installed;  // each CLI looked up once
  for (const auto kind : runtime::agent::agent_kinds()) {
    const auto it = needed_by.find(kind);
    if (check_agent_program(out, kind, it == needed_by.end() ? std::string() : it->second)) installed.insert(kind);
  }
  for (const auto& k : runtime::kinds()) {
    const bool used = configured.contains(k.config.name);
    if ((used || all) && installed.contains(k.program)) check_agent_smoke(out, k.config.name, used);
  }
  return !needed_by.empty() || !installed.empty();
}

void check_server(std::vector<check>& out, const common_args& args) {
  auto options = resolve_client_options(args);
  options.connect_timeout = 3s;
  options.response_timeout = 5s;
  client c(options);
  auto health = c.get("/v1/health");
  if (!health) {
    const auto state = health.error() == client_errc::unreachable ? status::warn : status::broken;
    out.push_back({"server", state, health.error().message});
    return;
  }
  std::string version;
  std::string node;
  if (health->is_object()) {
    if (const auto* v = health->as_object().if_contains("version"); v != nullptr && v->is_string())
      version = v->as_string();
    if (const auto* n = health->as_object().if_contains("node"); n != nullptr && n->is_string()) node = n->as_string();
  }
  out.push_back({"server", status::ok, fmt::format("{} answers: version {}, node {}", options.server, version, node)});
  auto sessions = c.get("/v1/sessions");
  if (sessions) {
    out.push_back({"token", status::ok, fmt::format("accepted (from {})", options.token_source)});
  } else {
    out.push_back({"token", status::broken, sessions.error().message});
  }
}

// The bash tool's sandbox: whether bubblewrap runs here, and which profiles
// would run commands without one (loudly: they reach the user's files).
void check_sandbox(std::vector<check>& out, const config::settings* settings) {
  using runtime::sandbox_mode;
  const auto probed = runtime::probe_sandbox();
  std::vector<std::string> wanting;
  std::vector<std::string> off;
  if (settings != nullptr)
    for (const auto& [name, p] : settings->profiles)
      (p.kind_settings<runtime::native::native_settings>().sandbox == sandbox_mode::off ? off : wanting)
          .push_back(name);
  auto names = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& n : v) s += (s.empty() ? "" : ", ") + n;
    return s;
  };
  if (probed) {
    out.push_back({"sandbox", status::ok, fmt::format("bubblewrap works ({})", probed->string())});
  } else if (wanting.empty()) {
    out.push_back({"sandbox", status::warn, probed.error().message});
  } else {
    out.push_back({"sandbox", status::warn,
                   fmt::format("WARNING: {}; profiles {} would run bash commands WITHOUT a sandbox",
                               probed.error().message, names(wanting))});
  }
  if (!off.empty())
    out.push_back({"sandbox off", status::warn,
                   fmt::format("WARNING: profiles {} set sandbox = \"off\": bash commands run as this user, with "
                               "its files and network",
                               names(off))});
}

// One line per profile: what answers it, and whether it can run (its key
// variable set, its own agent command found).
void check_profiles(std::vector<check>& out, const config::settings& settings) {
  for (const auto& [name, p] : settings.profiles) {
    const bool native = program_of(p.runtime).empty();  // the kind drives no agent program
    const auto& n = p.kind_settings<runtime::native::native_settings>();
    const auto& command = p.kind_settings<runtime::agent::agent_settings>().command;
    std::string what = native ? fmt::format("{}, {}", p.runtime, runtime::native::to_string(n.provider))
                              : fmt::format("runtime {}", p.runtime);
    what +=
        fmt::format(", model {}, {}", p.model, p.scripted() ? std::string("the built-in scripted model") : p.base_url);
    if (native) what += fmt::format(", sandbox {}{}", process::to_string(n.sandbox), n.network ? " with network" : "");
    if (!command.empty()) {
      const auto program = program_of(p.runtime);
      auto found = runtime::agent::find(program.empty() ? std::string_view("acp") : program, {.command = command});
      if (!found) {
        out.push_back({"profile " + name, status::broken, fmt::format("{}: {}", what, found.error().message)});
        continue;
      }
      what += fmt::format(", command {}", found->path.string());
    }
    if (p.api_key_env.empty()) {
      out.push_back({"profile " + name, status::ok, what + ", no API key needed"});
    } else if (const char* key = std::getenv(p.api_key_env.c_str()); key != nullptr && *key != '\0') {
      out.push_back({"profile " + name, status::ok, fmt::format("{}, {} is set", what, p.api_key_env)});
    } else {
      out.push_back({"profile " + name, status::broken,
                     fmt::format("{}, {} is NOT set: the server disables this profile", what, p.api_key_env)});
    }
  }
}

// Each configured environment but local: reached (host key and identity
// accepted), the free disk where leases go, and the agent programs its
// profiles drive found on its PATH. Unreachable or refused: broken; a
// program a profile needs missing: broken; nothing needs one: ok.
void check_environments(std::vector<check>& out, const config::settings& settings) {
  for (const auto& [name, e] : settings.environments) {
    if (e.kind == "local") continue;
    std::set<std::string> needed;
    for (const auto& [pname, p] : settings.profiles) {
      if (p.environment == name && !program_of(p.runtime).empty()) needed.insert(std::string(program_of(p.runtime)));
    }
    std::vector<std::string> programs = {"sh", "tar"};
    programs.insert(programs.end(), needed.begin(), needed.end());
    auto made = env::make_environment(e);
    if (!made) {
      out.push_back({"env " + name, status::broken, fmt::format("{}: {}", e.kind, made.error().message)});
      continue;
    }
    auto probe = (*made)->probe(programs);
    if (!probe) {
      out.push_back({"env " + name, status::broken, fmt::format("{}: {}", e.kind, probe.error().message)});
      continue;
    }
    std::string detail = fmt::format("{} {}: reachable, host key and identity accepted", e.kind, probe->where);
    if (probe->free_bytes) detail += fmt::format(", {} MiB free", *probe->free_bytes >> 20);
    bool missing = false;
    for (const auto& [program, path] : probe->programs) {
      detail += fmt::format("; {} {}", program, path.empty() ? "NOT found" : path);
      missing = missing || path.empty();
    }
    out.push_back({"env " + name, missing ? status::broken : status::ok, detail});
  }
}

// The configured store: SQLite (nothing to reach), or a PostgreSQL database:
// the connection, the schema version and the database's clock against ours.
void check_store(std::vector<check>& out, const std::string& setting) {
  if (setting.empty() || setting == "sqlite") {
    out.push_back({"store", status::ok, "SQLite in the data directory"});
    return;
  }
  if (!store::is_postgres_url(setting)) {
    out.push_back({"store", status::broken, "store must be \"sqlite\" or a postgres:// URL"});
    return;
  }
  const auto where = store::redacted_url(setting);
  auto c = store::check_postgres(setting);
  if (!c) {
    out.push_back({"store", status::broken, c.error().message});
    return;
  }
  out.push_back({"store", status::ok, fmt::format("PostgreSQL {} at {}", c->server_version, where)});
  const int mine = store::postgres_schema_version();
  if (c->schema_version > mine)
    out.push_back(
        {"store schema", status::broken,
         fmt::format("version {} is newer than this Tether's ({}): upgrade Tether", c->schema_version, mine)});
  else if (c->schema_version == 0)
    out.push_back({"store schema", status::ok, "none yet: the first `serve` creates it"});
  else
    out.push_back({"store schema", status::ok,
                   fmt::format("version {}{}", c->schema_version,
                               c->schema_version < mine ? fmt::format(" (the next `serve` migrates it to {})", mine)
                                                        : std::string())});
  // Leases use the database's clock, so skew does not break them; a large
  // one still makes logs and event times confusing to read.
  const auto skew = std::abs(c->clock_skew_ms);
  out.push_back({"store clock", skew > 5'000 ? status::warn : status::ok,
                 fmt::format("the database's clock is {} ms {} this machine's", skew,
                             c->clock_skew_ms >= 0 ? "ahead of" : "behind")});
}

int run_doctor(const common_args& args, bool all_runtimes) {
  std::vector<check> out;
  out.push_back({"tether", status::ok, version_line()});

  std::optional<fs::path> config_file;
  if (!args.config.empty()) {
    config_file = args.config;
  } else if (const char* env = std::getenv("TETHER_CONFIG"); env != nullptr && *env != '\0') {
    config_file = env;
  }
  auto settings = config::load(config_file, runtime::config_kinds(), env::config_kinds());
  if (!config_file) {
    out.push_back({"config", status::ok, "no file (--config, $TETHER_CONFIG): built-in defaults"});
  } else if (!fs::exists(*config_file)) {
    out.push_back({"config", status::broken, fmt::format("{} does not exist", config_file->string())});
  } else if (!settings) {
    out.push_back({"config", status::broken, fmt::format("{}: {}", config_file->string(), settings.error().message)});
  } else {
    out.push_back({"config", status::ok, fmt::format("{} is valid", config_file->string())});
  }

  std::string data = args.data;
  if (data.empty() && settings) data = settings->data_dir;
  if (data.empty()) data = config::default_data_dir();
  out.push_back({"data dir", status::ok,
                 fs::is_directory(data) ? fs::absolute(data).string()
                                        : fmt::format("{} (not created yet: the first `run` or `serve` creates it)",
                                                      fs::absolute(data).string())});
  const auto token = find_token(args);
  if (fs::exists(token.file) && token.source == "the file " + token.file) {
    const auto perms = fs::status(token.file).permissions();
    const bool shared = (perms & (fs::perms::group_all | fs::perms::others_all)) != fs::perms::none;
    out.push_back({"token file", shared ? status::warn : status::ok,
                   shared ? fmt::format("{} is readable by others", token.file) : token.file});
  }

  if (settings) check_profiles(out, *settings);
  if (settings) check_environments(out, *settings);
  check_sandbox(out, settings ? &*settings : nullptr);
  check_server(out, args);
  out.push_back({"sqlite", status::ok, fmt::format("{} (linked)", sqlite3_libversion())});
  check_store(out, !args.store.empty() ? args.store : settings ? settings->store : std::string());
  const bool agents = check_agents(out, settings ? &*settings : nullptr, all_runtimes);
  check_program(out, "node", "the agent CLIs need it", agents);
  check_program(out, "npm", "installs the agent CLIs", agents);

  bool broken = false;
  json::array doc;
  for (const auto& c : out) {
    broken = broken || c.state == status::broken;
    if (args.json) {
      doc.push_back(json::object{{"check", c.name}, {"status", to_string(c.state)}, {"detail", c.detail}});
    } else {
      fmt::print("{:<7} {:<24} {}\n", to_string(c.state), c.name, c.detail);
    }
  }
  if (args.json) print_json_line(json::object{{"ok", !broken}, {"checks", std::move(doc)}});
  return broken ? exit_failed : exit_ok;
}

}  // namespace

void add_doctor_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<common_args>();
  auto all = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("doctor", "Check what is installed, configured and reachable");
  add_common_options(*cmd, *args);
  cmd->add_option("--store", args->store, "the store to check (a postgres:// URL; default: the config's store)");
  cmd->add_flag("--all-runtimes", *all,
                "Run a turn through every installed agent runtime, not only the ones a profile uses");
  cmd->callback([args, all, &exit_code] { exit_code = run_doctor(*args, *all); });
}

}  // namespace tether::cli
