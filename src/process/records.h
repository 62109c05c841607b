// Durable records of the tool processes this server started, so a server
// that died without killing them (SIGKILL, a crash, the OOM killer) can be
// cleaned up after by the next start.
//
//   DATA/run/procs/<pid>     "tether-process 1\npid P\npgid P\nstart T\nboot B\nowner O S\n"
//
// T is the process's start time (field 22 of /proc/P/stat, clock ticks since
// boot) and B the kernel's boot id; O and S are the pid and start time of
// the server that started it. Together with the pid they name one
// process, never a later one that reuses the pid. A record is written (temp
// file, fsync, rename, fsync of the directory) while the child still waits
// at its start gate, so no tool process runs unrecorded; it is removed once
// the child is reaped.
//
// At start, kill_recorded_groups() sends SIGKILL to the process group of every
// recorded process that still runs with the recorded start time and boot id
// and whose owner no longer runs, and removes those records and the stale
// ones; a record whose owner still runs (another live server, e.g. a
// `tether run` beside a `tether serve`) is left alone. A group whose leader is gone is not killed: its
// pid may already belong to someone else. Run it only while this process
// owns the data directory (no other live server uses the same records).
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "process/spawn.h"
#include "util/result.h"

namespace tether::process {

struct process_identity {
  pid_t pid = -1;
  pid_t pgid = -1;
  unsigned long long start = 0;  // clock ticks since boot
  std::string boot;              // /proc/sys/kernel/random/boot_id
};

// Reads /proc/PID/stat and the boot id; nullopt when the process is gone.
std::optional<process_identity> identify_process(pid_t pid);

// Creates `dir` (0700) if needed and records `p`, started by `owner`, durably.
result<void> record_process(const std::filesystem::path& dir, const process_identity& p,
                            const process_identity& owner);

// Removes the record of `pid` (not an error when there is none).
void forget_process(const std::filesystem::path& dir, pid_t pid);

struct cleanup_report {
  int killed = 0;    // groups sent SIGKILL
  int gone = 0;      // records of processes that no longer run (or run under a reused pid)
  int owned = 0;     // left alone: the server that started them still runs
  std::vector<std::string> problems;  // unreadable or malformed records (removed as well)
};

// See above. A missing directory is an empty one.
cleanup_report kill_recorded_groups(const std::filesystem::path& dir);

// Spawns `o` gated, records the child in `dir` durably (nothing recorded
// when `dir` is empty), then opens the gate: the child never runs
// unrecorded. Blocks for the fsyncs. Remove the record (forget_process) once
// the child is reaped.
result<spawned> spawn_recorded(const spawn_options& o, const std::filesystem::path& dir);

}  // namespace tether::process
