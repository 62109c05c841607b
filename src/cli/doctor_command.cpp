// `tether doctor`: what is installed and reachable, one line per check.
//
//   ok      works
//   warn    missing but optional, or not running now (the server, an agent CLI)
//   broken  will make a run fail: an invalid config, a profile whose API key
//           variable is unset, a server that refuses the token
//
// Exit 0 when nothing is broken, 1 otherwise. Keys are never printed, only
// whether their variable is set.
#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <boost/json.hpp>

#include "cli/client.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "config/config.h"
#include "process/run_to_end.h"
#include "runtime/agent/programs.h"
#include "runtime/native/tools/sandbox.h"

#ifndef TETHER_VERSION
#define TETHER_VERSION "unknown"
#endif

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

void check_program(std::vector<check>& out, std::string_view program, std::string_view why) {
  const auto found = process::find_program(std::string(program));
  if (!found) {
    out.push_back({std::string(program), status::warn, fmt::format("not on PATH ({})", why)});
    return;
  }
  if (auto v = version_of(*found, 10s)) {
    out.push_back({std::string(program), status::ok, fmt::format("{} ({})", *v, found->string())});
  } else {
    out.push_back({std::string(program), status::warn,
                   fmt::format("{} did not answer --version within 10 s, or failed", found->string())});
  }
}

// One line per agent runtime: its CLI's version, where it was found
// (runtime/agent/programs.h: command, prefix or path) and its path.
void check_agent_program(std::vector<check>& out, std::string_view kind) {
  const std::string name = fmt::format("agent {}", kind);
  auto found = runtime::agent::find(kind);
  if (!found) {
    out.push_back({name, status::warn, found.error().message});
    return;
  }
  auto version = runtime::agent::installed_version(*found);
  if (!version) {
    out.push_back({name, status::warn,
                   fmt::format("found in {} ({}) but {}", to_string(found->where), found->path.string(),
                               version.error().message)});
    return;
  }
  out.push_back({name, status::ok,
                 fmt::format("{}, found in {}: {}", *version, to_string(found->where), found->path.string())});
}

// A one-line turn of each agent runtime whose CLI is installed, through
// `tether run` against the built-in scripted model, in a temporary data
// directory (removed afterwards).
void check_agent_smoke(std::vector<check>& out, std::string_view runtime_kind, std::string_view program) {
  const std::string name = fmt::format("runtime {}", runtime_kind);
  if (!runtime::agent::find(program)) {
    out.push_back({name, status::warn, fmt::format("not checked: {} is not installed", program)});
    return;
  }
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
  o.argv = {fs::read_symlink("/proc/self/exe", ec).string(), "run", "--data", (dir / "data").string(), "--workspace",
            (dir / "work").string(), "--config", (dir / "tether.toml").string(), "--profile", "smoke",
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
  out.push_back({name, status::warn, "a turn against the scripted model failed: " + why});
}

void check_agents(std::vector<check>& out) {
  for (const auto kind : runtime::agent::agent_kinds()) check_agent_program(out, kind);
  check_agent_smoke(out, "codex-exec", "codex");
  check_agent_smoke(out, "claude-print", "claude");
  check_agent_smoke(out, "opencode-run", "opencode");
  // The warm runtimes: the same turn through the agent's own protocol.
  check_agent_smoke(out, "codex", "codex");
  check_agent_smoke(out, "claude", "claude");
  check_agent_smoke(out, "opencode", "opencode");
  check_agent_smoke(out, "acp-codex", "codex-acp");
  check_agent_smoke(out, "acp-claude", "claude-agent-acp");
  check_agent_smoke(out, "acp-opencode", "opencode");
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
  using runtime::native::sandbox_mode;
  const auto probed = runtime::native::probe_sandbox();
  std::vector<std::string> wanting;
  std::vector<std::string> off;
  if (settings != nullptr)
    for (const auto& [name, p] : settings->profiles)
      (p.sandbox == sandbox_mode::off ? off : wanting).push_back(name);
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

int run_doctor(const common_args& args) {
  std::vector<check> out;
  out.push_back({"tether", status::ok, fmt::format("version {}", TETHER_VERSION)});

  std::optional<fs::path> config_file;
  if (!args.config.empty()) {
    config_file = args.config;
  } else if (const char* env = std::getenv("TETHER_CONFIG"); env != nullptr && *env != '\0') {
    config_file = env;
  }
  auto settings = config::load(config_file);
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
  if (fs::is_directory(data)) {
    out.push_back({"data dir", status::ok, fs::absolute(data).string()});
  } else {
    out.push_back({"data dir", status::warn,
                   fmt::format("{} does not exist yet (`tether serve` creates it)", fs::absolute(data).string())});
  }
  const auto token = find_token(args);
  if (!token.token.empty() && token.source != "the file " + token.file) {
    out.push_back({"token file", status::ok, fmt::format("not needed: the token comes from {}", token.source)});
  } else if (fs::exists(token.file)) {
    const auto perms = fs::status(token.file).permissions();
    const bool shared = (perms & (fs::perms::group_read | fs::perms::others_read)) != fs::perms::none;
    out.push_back({"token file", shared ? status::warn : status::ok,
                   shared ? fmt::format("{} is readable by others", token.file) : token.file});
  } else {
    out.push_back({"token file", status::warn, fmt::format("{} missing (`tether serve` writes it)", token.file)});
  }

  if (settings) {
    for (const auto& [name, p] : settings->profiles) {
      const std::string what = fmt::format("{}, model {}, {}", runtime::native::to_string(p.provider), p.model,
                                           p.scripted() ? std::string("the built-in scripted model") : p.base_url) +
                             fmt::format(", sandbox {}{}", runtime::native::to_string(p.sandbox),
                                         p.network ? " with network" : "");
      if (p.api_key_env.empty()) {
        out.push_back({"profile " + name, status::ok, what + ", no API key needed"});
        continue;
      }
      const char* key = std::getenv(p.api_key_env.c_str());
      if (key != nullptr && *key != '\0') {
        out.push_back({"profile " + name, status::ok, fmt::format("{}, {} is set", what, p.api_key_env)});
      } else {
        out.push_back({"profile " + name, status::broken, fmt::format("{}, {} is NOT set", what, p.api_key_env)});
      }
    }
  }

  check_sandbox(out, settings ? &*settings : nullptr);
  check_server(out, args);
  out.push_back({"sqlite", status::ok, fmt::format("{} (linked)", sqlite3_libversion())});
  check_agents(out);
  check_program(out, "node", "the agent CLIs need it");
  check_program(out, "npm", "installs the agent CLIs");

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
  auto* cmd = app.add_subcommand("doctor", "Check what is installed and reachable");
  add_common_options(*cmd, *args);
  cmd->callback([args, &exit_code] { exit_code = run_doctor(*args); });
}

}  // namespace tether::cli
