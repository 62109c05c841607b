// Child processes for the bash tool (internal): spawning a shell in its own
// session and process group, watching for its exit without reaping it, and
// the environment a tool sees.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/native/tools/paths.h"
#include "util/result.h"

namespace tether::runtime::native::tool_detail {

struct spawned_shell {
  pid_t pid = -1;     // also the process group id (the child calls setsid)
  unique_fd output;   // read end of the pipe that is the child's stdout and stderr
};

// posix_spawn of `/bin/bash -c command` with cwd `dir`, stdin /dev/null,
// stdout and stderr into one pipe, a new session (so a new process group
// whose id is the pid, and no controlling terminal), default signal
// dispositions, an empty signal mask, and tool_environment(). The pipe is
// O_CLOEXEC in the parent, so other children never inherit it.
result<spawned_shell> spawn_shell(const std::string& command, const std::filesystem::path& dir);

// True for names that end in _API_KEY, _TOKEN or _SECRET, or are API_KEY,
// TOKEN or SECRET (ASCII case-insensitive).
bool is_secret_name(std::string_view name);

// The process environment minus secret variables, as "NAME=value" strings.
std::vector<std::string> tool_environment();

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

}  // namespace tether::runtime::native::tool_detail
