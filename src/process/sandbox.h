// The sandbox a child can be spawned in: bubblewrap around its argv.
//
//   process::sandbox box;
//   box.mode = sandbox_mode::workspace_write;
//   box.bwrap = *process::probe_sandbox();    // once at start: can bubblewrap run here?
//   box.root = workspace;                      // the only directory it may write
//   box.hidden = data_dir;                     // invisible inside
//   options.sandbox = box;                     // spawn() wraps argv in sandbox_argv(box, argv)
//
// Modes:
//   workspace-write  new PID, IPC, UTS (and cgroup, where possible) namespaces,
//                    a new network namespace unless `network`, every
//                    capability dropped, the system directories (/usr, /bin,
//                    /sbin, /lib*, /etc, /opt) read-only, a fresh /tmp, /proc
//                    (this PID namespace only) and /dev, `root` read-write at
//                    its own path and the working directory, `hidden`
//                    replaced by an empty tmpfs wherever it would be visible,
//                    and --die-with-parent so the tree dies with its spawner.
//   read-only        the same with `root` mounted read-only.
//   contain          for programs that bring their own tools (agent CLIs):
//                    the host's filesystem read-only, with a fresh /tmp,
//                    /proc and /dev; `hidden` and every `masked` path
//                    unreadable (a directory under an empty tmpfs, a file
//                    under the host's /dev/null, which cannot be opened on
//                    that mount); the `visible` paths among them shown again
//                    read-only; only the `exposed` paths (its home, its
//                    workspace, the tool bridge's socket) and `root`
//                    writable; the host's network unless `network` is
//                    false; new PID, IPC and UTS namespaces, every
//                    capability dropped, and --die-with-parent: when the
//                    program exits or is killed, everything it started
//                    dies with its PID namespace, whatever process group or
//                    session it moved to.
//   off              no sandbox: argv runs as it is.
// The sandbox does not choose the environment: spawn_options::env is the
// whole of it, sandbox or not.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace tether::process {

enum class sandbox_mode { workspace_write, read_only, contain, off };

// "workspace-write", "read-only", "contain", "off".
std::string_view to_string(sandbox_mode m);
std::optional<sandbox_mode> parse_sandbox_mode(std::string_view name);

struct sandbox {
  sandbox_mode mode = sandbox_mode::workspace_write;
  bool network = false;          // false unshares the network
  std::filesystem::path bwrap;   // the bubblewrap binary, a path (find_bwrap, probe_sandbox)
  std::filesystem::path root;    // canonical; the directory the child works in and may write (by mode)
  std::filesystem::path hidden;  // canonical; never visible inside (empty: none)
  // contain: what the program may write (canonical), mounted read-write.
  std::vector<std::filesystem::path> exposed;
  // Never readable inside, in every mode (canonical; missing ones are
  // skipped): the server's configuration, PostgreSQL's socket directories
  // and password files, other sessions' workspaces.
  std::vector<std::filesystem::path> masked;
  // contain: paths inside `hidden` or `masked` shown again, read-only (the
  // program itself, the `tether` binary its tools run).
  std::vector<std::filesystem::path> visible;
};

// The bubblewrap command line that runs `command` under `box` (mode not off).
std::vector<std::string> sandbox_argv(const sandbox& box, const std::vector<std::string>& command);

// Where bubblewrap is: `bwrap` itself when it holds a '/', else looked up in
// PATH (absolute entries only).
std::optional<std::filesystem::path> find_bwrap(const std::filesystem::path& bwrap = "bwrap");

// Runs `/bin/sh -c "exit 0"` in a read-only sandbox of /usr and waits for it
// (at most 10 s). The bwrap binary on success; otherwise an error saying why
// it cannot run here (not installed, user namespaces refused, …). Blocking.
result<std::filesystem::path> probe_sandbox(const std::filesystem::path& bwrap = "bwrap");

}  // namespace tether::process
