// The remote side of an SSH lease, as shell text: quoting, and the line that
// runs one journaled command. Pure functions, so they are tested alone.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace tether::env::ssh {

// `s` as one word of a POSIX shell: 'it'\''s'.
std::string quote(std::string_view s);

// A command as the remote's login shell runs it (`sh -c LINE` there).
struct remote_spec {
  std::string journal;                // the lease's command journal directory
  std::string id;                     // the command's id ([A-Za-z0-9-]+)
  std::string cwd;                    // where it runs
  std::vector<std::string> env;       // "NAME=value": the whole environment
  std::vector<std::string> argv;      // argv[0] found on env's PATH
};

// The line: records "$$ argv[0]" in JOURNAL/ID.pid (the shell sshd started
// is its session's leader, so $$ is the process group to signal), changes to
// cwd, runs argv under `env -i` with exactly `env`, and records the exit
// status in JOURNAL/ID.exit (also when the group got SIGTERM, SIGINT or
// SIGHUP: the shell traps them, so it outlives the command and records
// 128 + the signal; after SIGKILL of the group nothing is recorded, and the
// outcome reads back as indeterminate). Exit 126 when cwd cannot be entered.
// Errors: env_errc::invalid for an empty argv, an id outside [A-Za-z0-9-],
// a variable without '=' or a name that is not a shell name, an argv[0]
// with '=' (env(1) would take it for a variable).
result<std::string> remote_command(const remote_spec& spec);

// The line that lists a journal: one "ID STATE CODE PROGRAM" line per
// command, oldest first (ids sort by time); STATE is running, exited or
// indeterminate, CODE the exit code or '-'.
std::string journal_listing(std::string_view journal);

}  // namespace tether::env::ssh
