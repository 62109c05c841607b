#include "runtime/agent/agent_env.h"

#include <algorithm>
#include <cstdlib>

#include "runtime/agent/agent_runtime.h"
#include "runtime/agent/errors.h"

extern char** environ;

namespace tether::runtime::agent {

namespace fs = std::filesystem;

namespace {

// Stands in for a key when the model needs none (the scripted model):
// every agent refuses to start without one.
constexpr std::string_view placeholder_key = "tether-no-key";

bool basic(std::string_view name) {
  static constexpr std::string_view names[] = {"PATH", "LANG", "TERM", "TZ", "USER", "LOGNAME"};
  return std::find(std::begin(names), std::end(names), name) != std::end(names) || name.starts_with("LC_");
}

result<void> make_private_dir(const fs::path& p) {
  std::error_code ec;
  fs::create_directories(p, ec);
  if (ec) return make_error(agent_errc::io, "cannot create " + p.string() + ": " + ec.message());
  fs::permissions(p, fs::perms::owner_all, fs::perm_options::replace, ec);
  return ok();
}

}  // namespace

result<agent_dirs> prepare_dirs(const fs::path& data_dir, const session_id& s, const std::string& workspace) {
  agent_dirs d;
  d.home = data_dir / "agents" / s.str() / "home";
  for (const auto& sub : {fs::path(), fs::path(".config"), fs::path(".local/share"), fs::path(".local/state"),
                          fs::path(".cache"), fs::path("tmp")})
    TETHER_TRY(make_private_dir(d.home / sub));
  std::error_code ec;
  d.workspace = workspace.empty() ? data_dir / "workspaces" / s.str() : fs::path(workspace);
  fs::create_directories(d.workspace, ec);
  if (ec)
    return make_error(agent_errc::io, "cannot create the workspace " + d.workspace.string() + ": " + ec.message());
  d.workspace = fs::weakly_canonical(d.workspace, ec);
  return d;
}

std::vector<std::string> agent_environment(const agent_options& o, const agent_dirs& dirs,
                                           const std::map<std::string, std::string>& extra) {
  std::map<std::string, std::string> env;
  const auto withheld = [&](const std::string& n) {
    return std::find(o.withheld.begin(), o.withheld.end(), n) != o.withheld.end();
  };
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view kv(*e);
    const auto eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string name(kv.substr(0, eq));
    const bool passed = std::find(o.pass_env.begin(), o.pass_env.end(), name) != o.pass_env.end();
    if ((basic(name) || passed) && !withheld(name)) env[name] = std::string(kv.substr(eq + 1));
  }
  if (!env.contains("PATH")) env["PATH"] = "/usr/local/bin:/usr/bin:/bin";
  env["HOME"] = dirs.home.string();
  env["XDG_CONFIG_HOME"] = (dirs.home / ".config").string();
  env["XDG_DATA_HOME"] = (dirs.home / ".local/share").string();
  env["XDG_STATE_HOME"] = (dirs.home / ".local/state").string();
  env["XDG_CACHE_HOME"] = (dirs.home / ".cache").string();
  env["TMPDIR"] = (dirs.home / "tmp").string();
  for (const auto& [k, v] : o.settings.set_env) env[k] = v;
  for (const auto& [k, v] : extra) env[k] = v;
  if (!o.endpoint.key_variable.empty())
    env[o.endpoint.key_variable] = o.api_key.empty() ? std::string(placeholder_key) : o.api_key;
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

}  // namespace tether::runtime::agent
