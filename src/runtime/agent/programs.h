// programs — where an agent CLI's binary is, and which version it is.
//
// The external runtimes drive agent CLIs installed from npm. Each *kind* is
// one CLI, installed under one or more binary names (preferred first):
//
//   kind               binary names                          npm package
//   codex              codex                                 @openai/codex
//   claude             claude                                @anthropic-ai/claude-code
//   opencode           opencode                              opencode-ai
//   codex-acp          codex-acp-linux-<arch>, codex-acp     @zed-industries/codex-acp
//   claude-agent-acp   claude-agent-acp                      @zed-industries/claude-agent-acp
//
// and one kind without a binary of its own: `acp`, any ACP agent, found
// only through an explicit command (a profile's `command`). It is not among
// agent_kinds() (nothing installs it), and find("acp") without a command is
// not_found.
//
// (codex-acp's native binary comes first: killing its node wrapper would
// orphan the native child.) scripts/install-agents installs all of them at
// pinned versions into the project prefix, the source tree's `.agents/`.
//
// find(kind, options) looks, in this order, and stops at the first hit:
//   1. command  the explicit command (a profile's `command`): an absolute
//               path, a path with a '/' (made absolute), or a name looked up
//               in PATH. When one is given it is the only place looked: a
//               profile that names a binary never silently runs another one.
//   2. prefix   PREFIX/node_modules/.bin/NAME for each binary name, where
//               PREFIX is $TETHER_AGENTS_PREFIX when set and non-empty, else
//               options.prefix (by default default_prefix(), the source
//               tree's .agents/ compiled in).
//   3. path     each absolute entry of PATH (relative entries are skipped),
//               for each binary name.
// A hit is a regular file this process may execute; the program's path is
// absolute (symlinks are kept, not resolved: npm's .bin entries are links).
// The environment (PATH, TETHER_AGENTS_PREFIX) is an argument with the
// process's own as the default, so tests pass their own.
//
//   auto codex = agent::find("codex", {.command = profile.command});
//   if (!codex) log(codex.error().message);   // "codex not found: looked in …"
//   auto v = agent::version(codex->path);      // "0.171.0"
//
// version(program) runs `PROGRAM --version` through the process layer
// (process::run_to_end): argv exactly that, stdin /dev/null, stdout and
// stderr merged, an explicit environment (PATH, LANG, and HOME set to a fresh
// empty temporary directory that is also its working directory and is removed
// afterwards, so nothing is written to the real home), killed with its
// process group at options.limit. It returns the first version-looking token
// of the output (digits.digits[.digits…][-+suffix], a leading 'v' dropped).
// The ACP agents have no --version (codex-acp rejects it, claude-agent-acp
// starts serving on stdin); package_version() reads the version of the npm
// package a binary belongs to instead.
//
// Everything here blocks (version() up to its limit): call it at start-up,
// from `tether doctor` or from a test, never on a network thread.
//
// Errors (errors.h):
//   unknown_kind       find()/binary_names() got a kind not listed above
//   not_found          nothing executable where find() looked; the message
//                      reads "KIND not installed (looked in …)", every place named
//   version_timed_out  --version did not finish within the limit
//   version_failed     --version exited unsuccessfully (its status and first
//                      output line), or no temporary HOME could be made
//   no_version         the output (or the package.json) has no version token
//   process_errc::spawn_failed (process/errors.h) when the program cannot be
//   started at all.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "process/spawn.h"
#include "runtime/agent/errors.h"
#include "util/result.h"

namespace tether::runtime::agent {

// The kinds of the table above, in its order (not `acp`).
std::span<const std::string_view> agent_kinds();
// A kind's binary names, preferred first (none for `acp`).
result<std::vector<std::string>> binary_names(std::string_view kind);

// Which of find()'s places held the program.
enum class found_in { command, prefix, path };
std::string_view to_string(found_in where);  // "command", "prefix", "path"

struct program {
  std::string kind;
  found_in where = found_in::path;
  std::filesystem::path path;  // absolute
};

// The parts of the environment find() reads.
struct search_environment {
  std::string path;           // PATH's value; empty: nothing is looked up in PATH
  std::string agents_prefix;  // TETHER_AGENTS_PREFIX's value; empty: unset
  // This process's PATH and TETHER_AGENTS_PREFIX.
  static search_environment current();
};

// The project prefix compiled in: the source tree's .agents/.
std::filesystem::path default_prefix();

struct find_options {
  std::string command;                              // explicit command; empty: none
  std::filesystem::path prefix = default_prefix();  // npm prefix holding node_modules/.bin; empty: none
};

result<program> find(std::string_view kind, const find_options& options = {},
                     const search_environment& env = search_environment::current());

struct version_options {
  std::chrono::milliseconds limit{10'000};
};

result<std::string> version(const std::filesystem::path& program, version_options options = {},
                            process::spawner& spawner = process::system_spawner());

// The "version" of the package.json nearest above the program's resolved
// path (at most 4 directories up): what npm installed it as.
result<std::string> package_version(const std::filesystem::path& program);

// The version of a found program as doctor and the tests report it:
// version() for codex, claude and opencode (running it proves the install
// works: a placeholder left by a skipped postinstall fails), package_version()
// for the ACP agents, which have no --version.
result<std::string> installed_version(const program& p, version_options options = {});

// The first version-looking token of `text`, without a leading 'v'.
std::optional<std::string> first_version(std::string_view text);

}  // namespace tether::runtime::agent
