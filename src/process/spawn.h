// Spawning a child: what it gets, and the spawner interface tests replace.
//
//   process::spawn_options o;
//   o.argv = {"/usr/bin/git", "status"};         // argv[0] is a path: no PATH search, no shell
//   o.env = {"PATH=/usr/bin:/bin", "HOME=/w"};   // the whole environment
//   o.cwd = "/w";
//   o.stdout_mode = output::pipe; o.stderr_mode = output::stdout_pipe;   // merged
//   auto s = process::system_spawner().spawn(o);  // result<spawned>
//
// What every child gets, whatever the options:
//   - its own session and process group (setsid): its pid is its group id,
//     so signal_group() reaches every process it starts that stays in the group;
//   - default dispositions for every signal and an empty signal mask;
//   - no descriptor but its stdio (and fd 3 when gated): everything above is
//     closed before exec (close_range), close-on-exec or not;
//   - death with its spawner (parent_death::kill, the default): SIGKILL
//     through PR_SET_PDEATHSIG, checked after it is set so a parent that died
//     during the fork is seen too. The kernel sends it when the *thread* that
//     spawned exits, so spawn from a thread that lives as long as the child
//     should (the server's io threads, a test's main thread);
//   - the umask of the options (default: inherited).
// A sandbox (sandbox.h) wraps argv in bubblewrap, which keeps the child in
// the same group and also dies with its parent.
//
// Start gate (start_gate::gated): the child is fully set up (spawn() returns
// once it is: its process group is final) but waits for one byte on fd 3
// before exec. open_gate() sends it; if the spawner dies (or closes the gate)
// first, the child exits 125 without running argv. Use it to make something
// durable (a record of the child) before the child runs.
//
// Errors: spawn() fails with process_errc::spawn_failed when a pipe, the fork
// or any step in the child up to exec fails (exec's errno included: a missing
// program is an error here, not an exit code 127). For a gated child the exec
// is only tried after open_gate(), so its failure is open_gate()'s error.
//
// Reaping: the pid stays reserved until the child is reaped, so signalling
// the group is safe until then. Whoever holds a `spawned` owns the child: its
// destructor SIGKILLs the group and reaps the child if nobody did
// (release() hands the pid over). No SIGCHLD handler in the process may reap
// with waitpid(-1): it would steal the exit status.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "process/sandbox.h"
#include "process/types.h"
#include "util/result.h"

namespace tether::process {

enum class input { null, pipe };
// stdout_pipe is for stderr only: the same pipe as stdout (merged, in order).
enum class output { pipe, null, log_file, stdout_pipe };
enum class start_gate { open, gated };
enum class parent_death { kill, ignore };

struct spawn_options {
  std::vector<std::string> argv;  // argv[0] is the program's path
  std::vector<std::string> env;   // "NAME=value", the whole environment (empty: none)
  std::filesystem::path cwd;      // empty: the spawner's
  input stdin_mode = input::null;
  output stdout_mode = output::pipe;
  output stderr_mode = output::pipe;
  std::filesystem::path log;      // output::log_file: appended to, created 0600
  start_gate gate = start_gate::open;
  parent_death death = parent_death::kill;
  std::optional<mode_t> umask;    // nullopt: the spawner's
  std::optional<process::sandbox> sandbox;  // mode off or nullopt: none
  // stop(): how long the group has after SIGTERM before SIGKILL.
  std::chrono::milliseconds grace{2000};
  // What an environment's command journal names it by ("": argv[0]): the
  // program a wrapper starts. Nothing else reads it.
  std::string label;
};

// A spawned child and the parent's ends of its pipes. stdin is a socket
// pair's end (a write to a child that closed it is EPIPE, never SIGPIPE).
class spawned {
 public:
  spawned() = default;
  spawned(spawned&& o) noexcept;
  spawned& operator=(spawned&& o) noexcept;
  ~spawned();

  pid_t pid = -1;            // also the process group id
  unique_fd stdin_fd;        // input::pipe
  unique_fd stdout_fd;       // output::pipe
  unique_fd stderr_fd;       // output::pipe for stderr
  unique_fd pidfd;           // readable once the child exited; invalid without pidfd_open (then poll)
  unique_fd gate;            // gated: the write end of fd 3
  unique_fd exec_status;     // gated: reports the exec's failure after the gate opens
  std::chrono::milliseconds grace{2000};
  std::string program;       // gated: argv[0] as exec'd, for open_gate()'s errors

  // Lets a gated child exec argv; an error when it is gone or the exec failed
  // (the child is reaped then). Nothing for an ungated child.
  result<void> open_gate();
  // Hands the child over: this object no longer kills or reaps it.
  pid_t release();
};

class spawner {
 public:
  virtual ~spawner() = default;
  virtual result<spawned> spawn(const spawn_options& o) = 0;
};

// The real spawner (fork + exec). Thread-safe.
spawner& system_spawner();

// Sends `sig` to the child's process group (a no-op for pid <= 0).
void signal_group(pid_t pid, int sig);
// Whether `pid` has exited, without reaping it (waitid WNOWAIT).
bool has_exited(pid_t pid);
// Reaps `pid` (blocking until it exits). An unknown status when it was reaped elsewhere.
exit_status reap(pid_t pid);
// SIGKILL to the group, then reap: for destructors and failure paths.
exit_status kill_and_reap(pid_t pid);

// {"/bin/sh", "-c", command}: the only way the layer runs a shell.
std::vector<std::string> shell_argv(const std::string& command);
// This process's environment with `overrides` set (for the harness's own
// tools; a server's child gets an explicit allow-list instead).
std::vector<std::string> inherited_environment(const std::map<std::string, std::string>& overrides = {});
// The first executable `name` in $PATH's absolute entries (a name with '/' is
// checked as it is).
std::optional<std::filesystem::path> find_program(const std::string& name);
bool is_executable(const std::filesystem::path& p);

}  // namespace tether::process
