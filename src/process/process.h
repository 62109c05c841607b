// The process layer: every child Tether starts (the bash tool's commands,
// the qualification harness's servers, `doctor`'s version checks, the
// dashboard's Chromium, and the agent programs to come) goes through here.
//
//   spawn.h        spawn_options (argv, environment, working directory,
//                  stdio, start gate, umask, sandbox, stop grace), the
//                  spawner interface and the real spawner, what every child
//                  gets (own process group, default signals, no inherited
//                  descriptor, death with the spawner), signal_group/reap.
//   child.h        a spawned child on the caller's executor: line-framed and
//                  raw reads, writes, exit through a pidfd, stop() = TERM,
//                  grace, KILL of the group, reap.
//   line_framer.h  line framing bounded by bytes (error or split past the limit).
//   run_to_end.h   the synchronous run for start-up checks.
//   sandbox.h      bubblewrap around a child's argv.
//   errors.h       process_errc.
//
// Rule: nothing in src/ calls fork, exec or posix_spawn but this layer.
#pragma once

#include "process/child.h"
#include "process/errors.h"
#include "process/line_framer.h"
#include "process/run_to_end.h"
#include "process/sandbox.h"
#include "process/spawn.h"
#include "process/types.h"
