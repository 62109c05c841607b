#include "runtime/native/tools/sandbox.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "runtime/native/tools/process.h"
#include "util/errors.h"

namespace tether::runtime::native {

namespace fs = std::filesystem;

namespace {

// The system the command may read: these top-level entries, read-only (or
// as the same symlink when the host has a merged /usr).
constexpr const char* system_entries[] = {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"};

// Where /etc/resolv.conf may point; only with the network on.
constexpr const char* resolver_dirs[] = {"/run/systemd/resolve", "/run/resolvconf"};

constexpr const char* base_names[] = {"PATH", "LANG", "LANGUAGE", "TERM", "TZ", "USER", "LOGNAME"};

bool inside(const fs::path& p, const fs::path& dir) {
  auto pi = p.begin();
  for (auto di = dir.begin(); di != dir.end(); ++di, ++pi) {
    if (di->empty()) continue;  // a trailing separator
    if (pi == p.end() || *pi != *di) return false;
  }
  return true;
}

std::size_t depth(const fs::path& p) { return static_cast<std::size_t>(std::distance(p.begin(), p.end())); }

struct mount_op {
  fs::path at;
  std::vector<std::string> args;
};

bool named(std::string_view entry, const std::vector<std::string>& names) {
  const auto eq = entry.find('=');
  const auto name = entry.substr(0, eq);
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

std::string_view to_string(sandbox_mode m) {
  switch (m) {
    case sandbox_mode::workspace_write: return "workspace-write";
    case sandbox_mode::read_only: return "read-only";
    case sandbox_mode::off: return "off";
  }
  return "?";
}

std::optional<sandbox_mode> parse_sandbox_mode(std::string_view name) {
  for (const auto m : {sandbox_mode::workspace_write, sandbox_mode::read_only, sandbox_mode::off})
    if (to_string(m) == name) return m;
  return std::nullopt;
}

std::vector<std::string> tool_environment(const sandbox_policy& policy, const fs::path& home, char** environ_entries) {
  std::vector<std::string> withheld = policy.withheld;
  withheld.emplace_back("TETHER_TOKEN");
  withheld.emplace_back("HOME");
  std::vector<std::string> allowed(std::begin(base_names), std::end(base_names));
  allowed.insert(allowed.end(), policy.env.begin(), policy.env.end());
  std::vector<std::string> out;
  bool has_path = false;
  for (char** e = environ_entries; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    if (named(entry, withheld)) continue;
    if (!named(entry, allowed) && !entry.starts_with("LC_")) continue;
    if (std::find_if(out.begin(), out.end(), [&](const std::string& o) {
          return o.compare(0, eq + 1, entry.substr(0, eq + 1)) == 0;
        }) != out.end())
      continue;  // a duplicate name: the first wins, as getenv does
    has_path = has_path || entry.starts_with("PATH=");
    out.emplace_back(entry);
  }
  if (!has_path) out.emplace_back("PATH=/usr/local/bin:/usr/bin:/bin");
  out.push_back("HOME=" + home.string());
  return out;
}

std::vector<std::string> bwrap_argv(const sandbox_policy& policy, const fs::path& bwrap, const fs::path& workspace,
                                    const std::vector<std::string>& command) {
  std::vector<std::string> argv = {bwrap.string(), "--die-with-parent", "--unshare-pid", "--unshare-ipc",
                                   "--unshare-uts", "--unshare-cgroup-try",
                                   // A root server's command would otherwise keep every capability
                                   // (and could unmount what hides the data directory).
                                   "--cap-drop", "ALL"};
  if (!policy.network) argv.emplace_back("--unshare-net");

  std::vector<mount_op> mounts;
  std::vector<fs::path> readable;  // what the system mounts expose
  for (const char* entry : system_entries) {
    struct stat st {};
    if (::lstat(entry, &st) != 0) continue;
    if (S_ISLNK(st.st_mode)) {
      std::error_code ec;
      const auto target = fs::read_symlink(entry, ec);
      if (!ec) mounts.push_back({entry, {"--symlink", target.string(), entry}});
    } else if (S_ISDIR(st.st_mode)) {
      mounts.push_back({entry, {"--ro-bind", entry, entry}});
      readable.emplace_back(entry);
    }
  }
  mounts.push_back({"/proc", {"--proc", "/proc"}});
  mounts.push_back({"/dev", {"--dev", "/dev"}});
  mounts.push_back({"/tmp", {"--tmpfs", "/tmp"}});
  if (policy.network)
    for (const char* dir : resolver_dirs) mounts.push_back({dir, {"--ro-bind-try", dir, dir}});
  const std::string ws = workspace.string();
  mounts.push_back({workspace, {policy.mode == sandbox_mode::read_only ? "--ro-bind" : "--bind", ws, ws}});
  readable.push_back(workspace);
  // The data directory disappears under an empty tmpfs wherever a mount above
  // would show it; a workspace inside it is mounted again on top (deeper
  // mounts come later).
  if (!policy.hidden.empty() && std::any_of(readable.begin(), readable.end(),
                                             [&](const fs::path& r) { return inside(policy.hidden, r); }))
    mounts.push_back({policy.hidden, {"--tmpfs", policy.hidden.string()}});
  std::stable_sort(mounts.begin(), mounts.end(),
                   [](const mount_op& a, const mount_op& b) { return depth(a.at) < depth(b.at); });
  for (auto& m : mounts) argv.insert(argv.end(), m.args.begin(), m.args.end());
  argv.insert(argv.end(), {"--chdir", ws});
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

std::optional<fs::path> find_bwrap(const fs::path& bwrap) {
  auto usable = [](const fs::path& p) { return ::access(p.c_str(), X_OK) == 0 && !fs::is_directory(p); };
  if (bwrap.string().find('/') != std::string::npos) {
    if (usable(bwrap)) return bwrap;
    return std::nullopt;
  }
  const char* path = std::getenv("PATH");
  std::string_view rest(path != nullptr ? path : "/usr/bin:/bin");
  while (!rest.empty()) {
    const auto colon = rest.find(':');
    const std::string dir(rest.substr(0, colon));
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    if (dir.empty() || dir.front() != '/') continue;  // never a relative PATH entry
    if (usable(fs::path(dir) / bwrap)) return fs::path(dir) / bwrap;
  }
  return std::nullopt;
}

result<fs::path> probe_sandbox(const fs::path& bwrap) {
  const auto found = find_bwrap(bwrap);
  if (!found)
    return make_error(util_errc::invalid_argument,
                      "bubblewrap (" + bwrap.string() + ") is not installed (Debian package bubblewrap)");
  sandbox_policy policy;
  policy.mode = sandbox_mode::read_only;
  tool_detail::spawn_options o;
  o.argv = bwrap_argv(policy, *found, "/usr", {"/bin/sh", "-c", "exit 0"});
  o.env = {"PATH=/usr/bin:/bin"};
  auto done = tool_detail::run_to_end(o, std::chrono::seconds(10));
  if (!done) return done.error();
  if (done->status < 0)
    return make_error(util_errc::invalid_argument, found->string() + " did not finish within 10 s");
  if (!WIFEXITED(done->status) || WEXITSTATUS(done->status) != 0) {
    std::string why = done->output;
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    return make_error(util_errc::invalid_argument,
                      found->string() + " cannot create a sandbox here" + (why.empty() ? "" : ": " + why));
  }
  return *found;
}

}  // namespace tether::runtime::native
