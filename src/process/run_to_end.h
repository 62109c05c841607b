// A child run to its end synchronously, for start-up checks (`doctor`, the
// sandbox probe, the dashboard's screenshot): blocking, never on the network
// threads.
//
//   auto done = run_to_end({.argv = {"/usr/bin/git", "--version"}, .env = env}, {.limit = 10s});
//   if (done && !done->timed_out && done->status.success()) use(done->output);
//
// stdout is a pipe and stderr goes into it (unless the options send stderr
// to a log file or /dev/null); at most max_output bytes are kept, the rest is
// read and dropped so the child never blocks on a full pipe. The run ends
// when the leader exits (its pidfd is polled beside the pipe; what it left in
// the pipe is still read) or at EOF, or at `limit`: then it timed out. Either
// way the group gets SIGKILL (no process it started survives, even one that
// kept the pipe open) and the leader is reaped. Errors: the spawn's (process_errc::spawn_failed, gate_closed).
#pragma once

#include <chrono>
#include <string>

#include "process/spawn.h"

namespace tether::process {

struct run_limits {
  std::chrono::milliseconds limit{10'000};
  std::size_t max_output = 64 * 1024;
};

struct finished {
  exit_status status;      // how it ended (SIGKILL when it timed out)
  bool timed_out = false;  // it was killed at the limit
  std::string output;      // stdout and stderr as they came, up to max_output
  std::size_t dropped = 0; // bytes of output past max_output
};

result<finished> run_to_end(spawn_options o, run_limits limits = {}, spawner& s = system_spawner());

}  // namespace tether::process
