// What a bash command can reach: the sandbox mode, the network, the
// environment, and the paths it must never see.
//
//   sandbox_policy p;
//   p.mode = sandbox_mode::workspace_write;   // the default
//   p.hidden = data_dir;                      // invisible inside the sandbox
//   p.withheld = {"OPENAI_API_KEY"};          // never in a tool's environment
//   auto bwrap = probe_sandbox();             // once at start: can bubblewrap run here?
//
// Modes (a profile's `sandbox` setting; the sandbox itself is the process
// layer's, process/sandbox.h):
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
//                    is recorded (process/records.h) so a restart can kill it.
// In every mode the environment is an allow-list (tool_environment below) and
// the command inherits no descriptor but its stdio.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "process/sandbox.h"
#include "util/result.h"

namespace tether::runtime {

// The mode, its names ("workspace-write", "read-only", "off"), finding and
// probing bubblewrap: the process layer's.
using process::sandbox_mode;
using process::to_string;
using process::parse_sandbox_mode;
using process::find_bwrap;
using process::probe_sandbox;

struct sandbox_policy {
  sandbox_mode mode = sandbox_mode::workspace_write;
  bool network = false;                // only with a sandbox: false unshares the network
  std::filesystem::path bwrap = "bwrap";  // the bubblewrap binary (a name is looked up in PATH)
  std::vector<std::string> env;        // variable names passed through beyond the base list
  std::vector<std::string> withheld;   // never passed, even when named in env
  std::filesystem::path hidden;        // canonical; never visible inside the sandbox (empty: none)
  std::vector<std::filesystem::path> masked;  // never readable inside either (node/masks.h)
  std::filesystem::path records;       // where process records go (empty: none; see process/records.h)
};

// The variables a tool sees, as "NAME=value": PATH (the server's, else
// /usr/local/bin:/usr/bin:/bin), LANG, LANGUAGE, LC_*, TERM, TZ, USER, LOGNAME,
// the names in policy.env that are set, and HOME = `home`; never a name in
// policy.withheld, TETHER_TOKEN, a PG* variable or DATABASE_URL (the store's
// credentials). `environ` is the server's environment.
std::vector<std::string> tool_environment(const sandbox_policy& policy, const std::filesystem::path& home,
                                          char** environ_entries);

// The process layer's sandbox for a command of `policy` in `workspace`, run
// by the bubblewrap binary `bwrap`.
process::sandbox sandbox_for(const sandbox_policy& policy, const std::filesystem::path& bwrap,
                             const std::filesystem::path& workspace);

// The bubblewrap command line that runs `command` (argv) in `workspace` under
// `policy` (mode not off): `bwrap` is the binary to use.
std::vector<std::string> bwrap_argv(const sandbox_policy& policy, const std::filesystem::path& bwrap,
                                    const std::filesystem::path& workspace, const std::vector<std::string>& command);

}  // namespace tether::runtime
