// What a bash command can reach: the sandbox mode, the network, the
// environment, and the paths it must never see.
//
//   sandbox_policy p;
//   p.mode = sandbox_mode::workspace_write;   // the default
//   p.hidden = data_dir;                      // invisible inside the sandbox
//   p.withheld = {"OPENAI_API_KEY"};          // never in a tool's environment
//   auto bwrap = probe_sandbox();             // once at start: can bubblewrap run here?
//
// Modes (a profile's `sandbox` setting):
//   workspace-write  bubblewrap: new PID, IPC and network namespaces (the
//                    network only when `network` is false), the system
//                    directories (/usr, /bin, /sbin, /lib*, /etc, /opt) read-only,
//                    a fresh /tmp, /proc (this PID namespace only) and /dev, the
//                    workspace read-write at its own path, `hidden` (the data
//                    directory: database, token, spills, other workspaces)
//                    replaced by an empty tmpfs wherever it would be visible,
//                    and --die-with-parent so the tree dies with the server.
//   read-only        the same with the workspace mounted read-only (and the
//                    write and edit tools refuse).
//   off              no sandbox: the command runs as the server's user with the
//                    server's view of the files and network. Its process group
//                    is recorded (process_records.h) so a restart can kill it.
// In every mode the environment is an allow-list (tool_environment below) and
// the command inherits no descriptor but its stdio.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace tether::runtime::native {

enum class sandbox_mode { workspace_write, read_only, off };

// "workspace-write", "read-only", "off".
std::string_view to_string(sandbox_mode m);
std::optional<sandbox_mode> parse_sandbox_mode(std::string_view name);

struct sandbox_policy {
  sandbox_mode mode = sandbox_mode::workspace_write;
  bool network = false;                // only with a sandbox: false unshares the network
  std::filesystem::path bwrap = "bwrap";  // the bubblewrap binary (a name is looked up in PATH)
  std::vector<std::string> env;        // variable names passed through beyond the base list
  std::vector<std::string> withheld;   // never passed, even when named in env
  std::filesystem::path hidden;        // canonical; never visible inside the sandbox (empty: none)
  std::filesystem::path records;       // where process records go (empty: none; see process_records.h)
};

// The variables a tool sees, as "NAME=value": PATH (the server's, else
// /usr/local/bin:/usr/bin:/bin), LANG, LANGUAGE, LC_*, TERM, TZ, USER, LOGNAME,
// the names in policy.env that are set, and HOME = `home`; never a name in
// policy.withheld nor TETHER_TOKEN. `environ` is the server's environment.
std::vector<std::string> tool_environment(const sandbox_policy& policy, const std::filesystem::path& home,
                                          char** environ_entries);

// The bubblewrap command line that runs `command` (argv) in `workspace` under
// `policy` (mode not off): `bwrap` is the binary to use.
std::vector<std::string> bwrap_argv(const sandbox_policy& policy, const std::filesystem::path& bwrap,
                                    const std::filesystem::path& workspace, const std::vector<std::string>& command);

// Where bubblewrap is (policy.bwrap resolved through PATH when it has no '/').
std::optional<std::filesystem::path> find_bwrap(const std::filesystem::path& bwrap);

// Runs an empty command in the sandbox bubblewrap would build (namespaces,
// read-only system, fresh /tmp, /proc and /dev) and waits for it (at most 10
// s). The bwrap binary used on success; an error saying why it cannot run
// otherwise (not installed, user namespaces refused, …). Blocking.
result<std::filesystem::path> probe_sandbox(const std::filesystem::path& bwrap = "bwrap");

}  // namespace tether::runtime::native
