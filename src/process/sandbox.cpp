#include "process/sandbox.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <optional>

#include "process/run_to_end.h"
#include "process/spawn.h"
#include "util/errors.h"

namespace tether::process {

namespace fs = std::filesystem;

namespace {

// The system the child may read: these top-level entries, read-only (or
// as the same symlink when the host has a merged /usr).
constexpr const char* system_entries[] = {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"};

// Where /etc/resolv.conf may point; only with the network on.
constexpr const char* resolver_dirs[] = {"/run/systemd/resolve", "/run/resolvconf"};

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

}  // namespace

std::string_view to_string(sandbox_mode m) {
  switch (m) {
    case sandbox_mode::workspace_write: return "workspace-write";
    case sandbox_mode::read_only: return "read-only";
    case sandbox_mode::contain: return "contain";
    case sandbox_mode::off: return "off";
  }
  return "?";
}

std::optional<sandbox_mode> parse_sandbox_mode(std::string_view name) {
  for (const auto m : {sandbox_mode::workspace_write, sandbox_mode::read_only, sandbox_mode::contain, sandbox_mode::off})
    if (to_string(m) == name) return m;
  return std::nullopt;
}

namespace {

// The mount that makes `p` unreadable: an empty tmpfs over a directory, the
// host's /dev/null over anything else (a device on that mount cannot be
// opened); nothing for a path that does not exist.
std::optional<mount_op> mask(const fs::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return std::nullopt;
  if (S_ISDIR(st.st_mode)) return mount_op{p, {"--tmpfs", p.string()}};
  return mount_op{p, {"--ro-bind", "/dev/null", p.string()}};
}

// Mounts run shallow to deep, so a path shown again inside a hidden one
// lands on top; at one depth, what hides goes before what shows.
void add_sorted(std::vector<std::string>& argv, std::vector<mount_op> hide, std::vector<mount_op> show) {
  std::vector<mount_op> all = std::move(hide);
  all.insert(all.end(), std::make_move_iterator(show.begin()), std::make_move_iterator(show.end()));
  std::stable_sort(all.begin(), all.end(), [](const mount_op& a, const mount_op& b) { return depth(a.at) < depth(b.at); });
  for (auto& m : all) argv.insert(argv.end(), m.args.begin(), m.args.end());
}

std::vector<std::string> contain_argv(const sandbox& box, const std::vector<std::string>& command) {
  std::vector<std::string> argv = {box.bwrap.string(), "--die-with-parent", "--unshare-pid", "--unshare-ipc",
                                   "--unshare-uts", "--cap-drop", "ALL", "--ro-bind", "/", "/"};
  if (!box.network) argv.emplace_back("--unshare-net");
  std::vector<mount_op> hide = {{"/proc", {"--proc", "/proc"}}, {"/dev", {"--dev", "/dev"}}, {"/tmp", {"--tmpfs", "/tmp"}}};
  if (!box.hidden.empty()) hide.push_back({box.hidden, {"--tmpfs", box.hidden.string()}});
  for (const auto& p : box.masked)
    if (auto m = mask(p)) hide.push_back(std::move(*m));
  std::vector<mount_op> show;
  for (const auto& p : box.visible) show.push_back({p, {"--ro-bind-try", p.string(), p.string()}});
  for (const auto& p : box.exposed) show.push_back({p, {"--bind", p.string(), p.string()}});
  if (!box.root.empty() && std::find(box.exposed.begin(), box.exposed.end(), box.root) == box.exposed.end())
    show.push_back({box.root, {"--bind", box.root.string(), box.root.string()}});  // where it works: writable
  add_sorted(argv, std::move(hide), std::move(show));
  if (!box.root.empty()) argv.insert(argv.end(), {"--chdir", box.root.string()});
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

}  // namespace

std::vector<std::string> sandbox_argv(const sandbox& box, const std::vector<std::string>& command) {
  if (box.mode == sandbox_mode::contain) return contain_argv(box, command);
  std::vector<std::string> argv = {box.bwrap.string(), "--die-with-parent", "--unshare-pid", "--unshare-ipc",
                                   "--unshare-uts", "--unshare-cgroup-try",
                                   // A root server's child would otherwise keep every capability
                                   // (and could unmount what hides the data directory).
                                   "--cap-drop", "ALL"};
  if (!box.network) argv.emplace_back("--unshare-net");

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
  if (box.network)
    for (const char* dir : resolver_dirs) mounts.push_back({dir, {"--ro-bind-try", dir, dir}});
  const std::string root = box.root.string();
  mounts.push_back({box.root, {box.mode == sandbox_mode::read_only ? "--ro-bind" : "--bind", root, root}});
  readable.push_back(box.root);
  // The hidden directory disappears under an empty tmpfs wherever a mount
  // above would show it; a root inside it is mounted again on top (deeper
  // mounts come later).
  if (!box.hidden.empty() &&
      std::any_of(readable.begin(), readable.end(), [&](const fs::path& r) { return inside(box.hidden, r); }))
    mounts.push_back({box.hidden, {"--tmpfs", box.hidden.string()}});
  // So is every masked path a mount above would show (the server's
  // configuration under /etc, say).
  for (const auto& p : box.masked)
    if (std::any_of(readable.begin(), readable.end(), [&](const fs::path& r) { return inside(p, r) && p != r; }))
      if (auto m = mask(p)) mounts.push_back(std::move(*m));
  std::stable_sort(mounts.begin(), mounts.end(),
                   [](const mount_op& a, const mount_op& b) { return depth(a.at) < depth(b.at); });
  for (auto& m : mounts) argv.insert(argv.end(), m.args.begin(), m.args.end());
  argv.insert(argv.end(), {"--chdir", root});
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

std::optional<fs::path> find_bwrap(const fs::path& bwrap) {
  if (bwrap.string().find('/') != std::string::npos) {
    if (is_executable(bwrap)) return bwrap;
    return std::nullopt;
  }
  return find_program(bwrap.string());
}

result<fs::path> probe_sandbox(const fs::path& bwrap) {
  const auto found = find_bwrap(bwrap);
  if (!found)
    return make_error(util_errc::invalid_argument,
                      "bubblewrap (" + bwrap.string() + ") is not installed (Debian package bubblewrap)");
  sandbox box;
  box.mode = sandbox_mode::read_only;
  box.bwrap = *found;
  box.root = "/usr";
  spawn_options o;
  o.argv = shell_argv("exit 0");
  o.env = {"PATH=/usr/bin:/bin"};
  o.sandbox = box;
  auto done = run_to_end(std::move(o), {.limit = std::chrono::seconds(10)});
  if (!done) return done.error();
  if (done->timed_out)
    return make_error(util_errc::invalid_argument, found->string() + " did not finish within 10 s");
  if (!done->status.success()) {
    std::string why = done->output;
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    return make_error(util_errc::invalid_argument,
                      found->string() + " cannot create a sandbox here" + (why.empty() ? "" : ": " + why));
  }
  return *found;
}

}  // namespace tether::process
