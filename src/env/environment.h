// Environments: where a turn's programs run. An environment kind (ssh,
// daytona, local) gives a session — or a task — a *lease* on a machine or
// sandbox, and the lease gives everything a runtime needs to work there
// unchanged:
//
//   auto l = environment.acquire({.key = "session-01J…", .labels = {{"session", "01J…"}}});
//   if (!l) return l.error();                        // env_errc: unreachable, refused, no_space, …
//   (*l)->push(host_workspace);                      // the host copy goes up as a tar
//   auto c = process::child::start(ex, options, (*l)->spawner());   // argv, env, cwd are the remote's
//   …
//   auto synced = (*l)->pull(host_workspace);        // the agent's changes come back (tree_report)
//   environment.release(**l, release_mode::stop);    // kept for the next turn, or destroy
//
// Leases are named by their key. provider_name(key) is the name the kind
// gives the sandbox (or directory) on its side, so acquiring the same key
// again — after a retry, a crash of Tether, on another node — finds the same
// one: outcome `resumed` (or `replaced` when the request names a previous
// provider id that is gone), never a second sandbox. `created` when nothing
// of that name existed.
//
// Commands are journaled on the environment's side: each spawn gets an id,
// and the environment records its start, its process and its exit status
// there, so after a dropped connection or a crash of Tether its outcome is
// read back (command_record), never guessed and never re-run.
//
// Threads: the calls block (they run ssh, tar, HTTP requests); call them from
// a worker thread or through asio::post to a thread pool, never on the
// network threads. A lease is used by one caller at a time; its spawner()
// may be used from any thread, as process::system_spawner().
#pragma once

#include <sys/types.h>

#include <csignal>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "env/errors.h"
#include "process/spawn.h"
#include "util/result.h"

namespace tether::env {

struct lease_request {
  std::string key;                              // stable: "session-<id>", "task-<id>"
  std::map<std::string, std::string> labels;    // found by them when a create answered nothing
  std::optional<std::string> previous;          // the provider id recorded for the key, if any
};

// The provider-side name of a key's lease: "tether-" and the key with every
// character outside [a-z0-9-] replaced, cut to 40 characters, and 8 hex
// digits of the key's SHA-256 (so two keys never share a name). Deterministic.
std::string provider_name(std::string_view key);

enum class lease_outcome { created, resumed, replaced };
std::string_view to_string(lease_outcome o);

enum class release_mode {
  stop,     // kept (stopped where the kind can) for the key's next acquire
  destroy,  // deleted with its files
};

// A tree's digest, for env.workspace.synced: the SHA-256 of a manifest of
// every entry (path, type, mode, size, and the content's or target's SHA-256)
// in path order, the bytes of the regular files, and the number of entries.
struct tree_report {
  std::string sha256;
  std::uint64_t bytes = 0;
  std::size_t entries = 0;
  // A pull only: what of the received tree was not taken as it came (the
  // digest is of the tree as kept). `dropped`: device nodes, FIFOs and
  // sockets, never made here; `cleared`: files and directories that came
  // with a set-user-ID, set-group-ID or sticky bit, kept without it.
  std::size_t dropped = 0;
  std::size_t cleared = 0;
};

struct file_stat {
  bool exists = false;
  bool directory = false;
  std::uint64_t size = 0;
  unsigned mode = 0;  // permission bits
};

// What the environment knows of a journaled command.
struct command_record {
  enum class state { running, exited, indeterminate };
  std::string id;
  state status = state::indeterminate;  // indeterminate: it started, but neither runs nor left an exit status
  int exit_code = -1;                   // exited: the shell's code (128 + signal when killed)
  std::string program;                  // argv[0]
};
std::string_view to_string(command_record::state s);

class lease {
 public:
  virtual ~lease() = default;

  // The kind's id of the sandbox or directory ("ssh://agent@host:22/srv/tether/tether-…").
  [[nodiscard]] virtual const std::string& provider_id() const = 0;
  [[nodiscard]] virtual lease_outcome outcome() const = 0;
  // The workspace's path inside the environment: a spawn's default cwd.
  [[nodiscard]] virtual const std::string& workspace() const = 0;

  // Spawns inside the lease: argv[0] is found on the environment's PATH,
  // spawn_options::env is the whole environment there (PATH is the kind's
  // when it names none) but for TETHER_COMMAND_ID, the command's journal id,
  // which every process it starts inherits (signal() finds them by it),
  // cwd is a path there (empty: the workspace). stdio,
  // the start gate and the grace hold as for a local child; the sandbox
  // option does not apply (the environment is the isolation). Each spawn is
  // journaled (see commands()); the spawned child is a local process that
  // relays the remote one, so stop() ends the relay, and signal() ends the
  // remote program.
  virtual process::spawner& spawner() = 0;
  // The journal id of the command whose relay is the local process `relay`
  // (a spawned child's pid), if this lease's spawner started it.
  virtual std::optional<std::string> command_id(pid_t relay) = 0;
  // The journal: every command this lease's spawner started, oldest first.
  virtual result<std::vector<command_record>> commands() = 0;
  // `sig` to a journaled command's whole process group, where it runs.
  virtual result<void> signal(const std::string& command_id, int sig) = 0;

  // The host tree at `local` replaces the workspace (sent as a tar). The
  // report describes what was sent.
  virtual result<tree_report> push(const std::filesystem::path& local) = 0;
  // The workspace replaces the host tree at `local`. It is received whole
  // into a private directory beside it first (receive_tree, env/tree.h):
  // nothing of it runs or is reachable by another user there, no entry is
  // made outside it, no device node or set-ID bit is kept; then it is
  // swapped in at once. A transfer that fails leaves `local` as it was.
  virtual result<tree_report> pull(const std::filesystem::path& local) = 0;
  // A path under the workspace (relative), or absolute inside the environment.
  virtual result<file_stat> stat(const std::string& path) = 0;
  // `content` as the whole of the file at `path` there (as stat's), its
  // directories made (0700), with permission bits `mode`; written beside
  // and renamed in, so a reader never sees half of it.
  virtual result<void> put_file(const std::string& path, const std::string& content, unsigned mode) = 0;

  // A Unix socket inside the environment that reaches `local_socket` here
  // (the tool bridge's), open until the lease is released. Its path there.
  virtual result<std::string> forward_socket(const std::filesystem::path& local_socket) = 0;
  // A TCP address inside the environment ("127.0.0.1:PORT") that reaches
  // `host`:`port` as this machine sees it (the model relay's), open until
  // the lease is released. `host` is a name or an IPv4 address.
  virtual result<std::string> forward_port(const std::string& host, int port) = 0;
  // A TCP address here ("127.0.0.1:PORT") that reaches 127.0.0.1:`port`
  // inside the environment (an agent's own server there, opencode serve's),
  // open until the lease is released. env_errc::invalid where the kind
  // cannot (Daytona).
  virtual result<std::string> forward_here(int port) = 0;
  // A cheap stamp of the workspace there (env/ssh/command.h: stamp_script):
  // equal stamps of one lease mean nothing there changed between them. An
  // error when the environment cannot make one: a caller then transfers.
  virtual result<std::string> stamp() = 0;
  // Whether the lease still answers (a cheap round trip).
  virtual result<void> check() = 0;
};

// What `tether doctor` learns of an environment without taking a lease.
struct probe_report {
  std::string where;                                                // "agent@10.0.0.7:22"
  std::vector<std::pair<std::string, std::string>> programs;       // name, its path there ("" when missing)
  std::optional<std::uint64_t> free_bytes;                         // free disk where the leases go
};

class environment {
 public:
  virtual ~environment() = default;
  // The configured name ([environments.NAME]) and the kind ("ssh", …).
  [[nodiscard]] virtual const std::string& name() const = 0;
  [[nodiscard]] virtual std::string_view kind() const = 0;

  // The lease for request.key: found (resumed), or made (created).
  virtual result<std::unique_ptr<lease>> acquire(const lease_request& request) = 0;
  // Ends the use of a lease: kept for the key's next acquire, or destroyed.
  virtual result<void> release(lease& l, release_mode mode) = 0;
  // Reaches the environment (its errors are acquire's: unreachable,
  // refused…) and looks for `programs` on the PATH commands get there.
  virtual result<probe_report> probe(const std::vector<std::string>& programs) = 0;
};

}  // namespace tether::env
