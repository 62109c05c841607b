// The remote side of an SSH lease, as shell text: quoting, and the line that
// runs one journaled command. Pure functions, so they are tested alone.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <sys/types.h>

#include <map>
#include <mutex>
#include <optional>

#include "env/environment.h"
#include "process/spawn.h"
#include "util/result.h"

namespace tether::env::ssh {

// A new command id: "c", the time in ms (13 digits, so ids sort by time), "-", 6 hex digits.
std::string new_command_id();

// `s` as one word of a POSIX shell: 'it'\''s'.
std::string quote(std::string_view s);

// A command as the remote's login shell runs it (`sh -c LINE` there).
struct remote_spec {
  std::string journal;                // the lease's command journal directory
  std::string id;                     // the command's id ([A-Za-z0-9-]+)
  std::string cwd;                    // where it runs
  std::vector<std::string> env;       // "NAME=value": the whole environment
  std::vector<std::string> argv;      // argv[0] found on env's PATH
  std::string label;                  // what the journal names it ("": argv[0])
};

// The line: records "$$ LABEL" (argv[0] without one) in JOURNAL/ID.pid (the shell sshd started
// is its session's leader, so $$ is the process group to signal), changes to
// cwd, runs argv under `env -i` with exactly `env` and TETHER_COMMAND_ID=ID
// (every process it starts inherits it unless it clears its environment:
// signal_command finds them by it), and records the exit
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

// A spawn as a journaled remote command: its new id and the line that runs
// o's argv there (PATH `default_path` when o.env names none, `default_cwd`
// when o.cwd is empty).
struct journaled {
  std::string id;
  std::string line;
};
result<journaled> journal_spawn(const process::spawn_options& o, std::string_view journal,
                                const std::string& default_cwd, const std::string& default_path);

// The local relays of a lease's remote commands: each spawned with o's
// stdio, gate and grace but its own argv and environment (no sandbox, no
// cwd), and which journal id it carries.
class relays {
 public:
  result<process::spawned> spawn(const process::spawn_options& o, std::vector<std::string> argv,
                                 std::vector<std::string> env, const std::string& id);
  [[nodiscard]] std::optional<std::string> id_of(pid_t relay) const;

 private:
  mutable std::mutex mu_;
  std::map<pid_t, std::string> ids_;
};

// The records of journal_listing's output.
std::vector<command_record> parse_journal(std::string_view listing);

// The line that sends `sig` to a journaled command's process group, to
// every descendant of its shell whatever group or session it put itself in
// (listed before any is signalled), and to every process that carries its
// TETHER_COMMAND_ID (one whose parent died before); prints
// "tether:unknown" when the journal has no such command, "tether:sent"
// otherwise. env_errc::invalid for an id outside [A-Za-z0-9-] or a signal
// other than TERM, KILL, INT, HUP, QUIT, USR1, USR2.
result<std::string> signal_command(std::string_view journal, const std::string& id, int sig);

// Shell text that expands to the KiB free on the filesystem of `path` (a
// shell word), from POSIX df's last line (no awk: a host may have none).
std::string free_kib(const std::string& path);

// Shell text that prints "tether:stamp HEX": a digest of every entry under
// the directory `workspace` (path, type, inode, mode, size, modification
// time, link target; no content read), from GNU find; exits non-zero when it
// cannot (no such directory, a find without -printf). parse_stamp reads it.
std::string stamp_script(const std::string& workspace);
// The stamp a stamp_script printed; env_errc::failed when it printed none.
result<std::string> parse_stamp(std::string_view output);

// The "tether:WORD…" lines a remote script printed, without the prefix.
std::vector<std::string> marked_lines(std::string_view output);

}  // namespace tether::env::ssh
