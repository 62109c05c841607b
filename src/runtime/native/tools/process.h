// Child processes (internal; the seed of the process layer DESIGN §2 names):
// spawning a program in its own session and process group with an explicit
// argv and environment, no inherited descriptor but its stdio, an optional
// start gate; watching for its exit without reaping it; reaping.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/native/tools/paths.h"
#include "util/result.h"

namespace tether::runtime::native::tool_detail {

struct spawn_options {
  std::vector<std::string> argv;  // argv[0] is the program's path
  std::vector<std::string> env;   // "NAME=value", the whole environment
  std::filesystem::path cwd;      // empty: the server's
  // Gated: the child first waits on descriptor 3 for one line and exits 125
  // without running argv if none comes (its parent died first). The caller
  // opens the gate with open_gate() once it is ready (e.g. the process is
  // recorded durably).
  bool gated = false;
};

struct spawned_process {
  pid_t pid = -1;     // also the process group id (a new session)
  unique_fd output;   // read end of the pipe that is the child's stdout and stderr
  unique_fd gate;     // write end of the gate (gated spawns only)
};

// posix_spawn with stdin /dev/null, stdout and stderr into one pipe, a new
// session (its own process group, no controlling terminal), default signal
// dispositions, an empty signal mask, and every descriptor above 2 (above 3
// when gated) closed in the child before exec, whatever its close-on-exec
// flag. The parent's ends are O_CLOEXEC.
result<spawned_process> spawn_process(const spawn_options& o);

// Lets a gated child run argv. An error when the child is already gone.
result<void> open_gate(spawned_process& p);

// A pidfd for `pid` (readable once it exits), or an invalid fd when the
// kernel has none (before Linux 5.3, or filtered): callers then poll.
unique_fd open_pidfd(pid_t pid);

// Whether `pid` has exited, without reaping it (waitid WNOWAIT): while the
// zombie stays unreaped its pid, and so the process group id, cannot be
// reused, which makes kill(-pid, …) safe until reap().
bool has_exited(pid_t pid);

// Reaps an exited child and describes how it ended: "exit code N" or
// "killed by signal N (SIGNAME)".
std::string reap(pid_t pid);

struct finished_process {
  int status = -1;  // waitpid status; -1 when it did not finish in time (it was killed)
  std::string output;
};

// Runs `o` to its end synchronously (output kept up to 64 KiB; killed with its
// group after `limit`). Blocking: for start-up checks, never on the network threads.
result<finished_process> run_to_end(const spawn_options& o, std::chrono::milliseconds limit);

}  // namespace tether::runtime::native::tool_detail
