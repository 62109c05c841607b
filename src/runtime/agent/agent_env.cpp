#include "runtime/agent/agent_env.h"


#include "runtime/agent/agent_runtime.h"
#include "runtime/agent/errors.h"
#include "runtime/native/tools/sandbox.h"

extern char** environ;

namespace tether::runtime::agent {

namespace fs = std::filesystem;

namespace {

// Stands in for a key when the model needs none (the scripted model):
// every agent refuses to start without one.
constexpr std::string_view placeholder_key = "tether-no-key";

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
  // The tools' allow-list (runtime/native/tools/sandbox.h): the basics, the
  // pass-through names, HOME; never a withheld name or TETHER_TOKEN.
  native::sandbox_policy policy;
  policy.env = o.pass_env;
  policy.withheld = o.withheld;
  std::map<std::string, std::string> env;
  for (const auto& kv : native::tool_environment(policy, dirs.home, environ)) {
    const auto eq = kv.find('=');
    env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
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
