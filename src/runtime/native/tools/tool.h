// Local tools of the native runtime: what the model can do in the workspace.
//
//   tool_set tools = make_local_tools();                  // read, write, edit, list, glob, grep, bash, ask_user
//   const tool* t = tools.find("bash");
//   tool_outcome out = co_await t->run(input, ctx);
//
// A tool validates its JSON input itself (a missing or mistyped argument is a
// failed outcome with a clear message, never a crash), runs, and returns one
// tool_outcome:
//   succeeded — content for the model (text, possibly spilled: see below)
//   failed    — an error message for the model; no success is recorded
//   waiting   — ask_user: the execution must wait for a human; the agent loop
//               records interaction.requested with this kind and payload and
//               ends the turn with turn_status::waiting
// run() never throws for bad input or I/O errors. Input must be a JSON object
// (null counts as {}, and a string holding a JSON object is parsed); keys not
// in the schema are refused ("unknown argument 'x'; expected one of: …").
//
// The tools, as the model sees them (each spec is a closed JSON Schema):
//   read {path, offset?, limit?}
//       Text with every line prefixed by its number and a tab, like `cat -n`
//       ("     7\tint x;"); CR of CRLF line ends is not shown. A page stays
//       under the spill limits, so a read is never spilled (the spill file is
//       outside the workspace, out of read's reach); a partial page ends with
//       "(showing lines A-B of N; continue with offset=B+1)". Lines over 2,000
//       bytes are cut. Files over limits.read_max_bytes are refused. PNG,
//       JPEG, GIF and WebP (by magic bytes) succeed with one image_part; the
//       bytes are stored once as blob_dir/<sha256>.<ext> (temp + rename;
//       skipped when present) and the content names that blob. Anything else
//       with a NUL byte or invalid UTF-8 in its first 8 KiB fails
//       "binary file, N bytes: …".
//   write {path, content}
//       Creates missing parent directories; writes a temp file beside the
//       target, fsyncs it and renames it over the target (an existing file
//       keeps its permission bits); reports "wrote N bytes to 'p'".
//   edit {path, old_string, new_string, replace_all?}
//       Exact replacement, written like write. Fails "old_string not found in
//       'p'", or "old_string matches N times in 'p'" without replace_all; an
//       empty old_string is refused. An LF old_string also matches a CRLF
//       file (the replacement then gets CRLF too).
//   list {path?}
//       Entries sorted by name; directories end with '/', symlinks read
//       "name -> target". Capped at limits.max_results.
//   glob {pattern, path?}
//       '**', '*', '?', '[…]', '{a,b}' over paths relative to path; results
//       are workspace-relative, sorted, capped. The walk skips .git and never
//       follows symlinks (so never leaves the workspace).
//   grep {pattern, path?, glob?, ignore_case?}
//       std::regex ECMAScript per line (a pattern that does not compile is
//       searched as literal text, and the output says so); "file:line: text",
//       files in path order, capped. Skips .git, binary files and files over
//       read_max_bytes; does not follow symlinks. A glob without '/' filters
//       file names, one with '/' paths relative to path. A regex sees only
//       the first 4 KiB of a line (libstdc++'s matcher recurses per
//       character).
//   bash {command, timeout_ms?}
//       `/bin/bash -c COMMAND` — not -l: a login shell would source profile
//       files that print, cd, reset PATH or are slow. It runs in the sandbox
//       ctx.sandbox describes (sandbox.h: bubblewrap with its own PID, IPC and
//       network namespaces, the workspace writable or read-only, the system
//       read-only, the data directory invisible; or no sandbox with `off`).
//       cwd is the workspace, stdin /dev/null, stdout and stderr merged into
//       one pipe read asynchronously, a new session (setsid: its own process
//       group, no terminal), no other descriptor of the server. The
//       environment is an allow-list (sandbox.h tool_environment: PATH, LANG,
//       LC_*, TERM, TZ, USER, LOGNAME, the profile's names, HOME = the
//       workspace), never an api_key_env of any profile nor TETHER_TOKEN. The
//       process is recorded in ctx.sandbox.records (process/records.h) before
//       it runs, and the record removed once it is reaped. Output past
//       limits.bash_output_cap is read and dropped, and the output says how
//       much. The content ends with "exit code N" (or "killed by signal N
//       (SIGX)" without a sandbox; inside one a death by signal N reads as
//       exit code 128+N); a non-zero exit is still succeeded — the model
//       reads the code; failed means the tool could not run the command to
//       its end. When the command ends, times out (min of timeout_ms and
//       limits.bash_timeout) or is interrupted, its whole process group gets
//       SIGTERM, then SIGKILL after limits.bash_kill_grace: background jobs
//       do not outlive the call (without a sandbox, a process that left the
//       group with setsid does; if it still holds the output pipe, reading
//       stops after the grace; in a sandbox the PID namespace dies with its
//       first process). Timeout: failed with the partial output and "timed
//       out after N ms; …". The shell is always reaped; its orphaned children
//       are reaped by init.
//   bash in an environment (ctx.place set: the turn runs in a lease)
//       The command runs there — `bash -c COMMAND` found on the
//       environment's PATH, cwd its copy of the workspace, the same
//       allow-listed environment but for PATH, USER and LOGNAME (the
//       environment's own) and HOME (its workspace), no bubblewrap (the
//       environment is the isolation). The file tools keep working on the
//       host copy (ctx.workspace), so the two copies are kept in step around
//       each command: before it, the host copy's changes go there
//       (place->send_workspace(): nothing is sent when there are none);
//       after it, what the command changed comes back whole
//       (fetch_workspace()). A copy that cannot be sent fails the call
//       before the command runs; one that cannot come back fails it after,
//       with the command's output and the reason. Signals go to the
//       command there (place->signal), SIGKILL to the local relay too. The
//       turn runs a step's calls one at a time there, so no file tool
//       writes the host copy while it is being replaced.
//   ask_user {question, options?: [{id?, label}], multi_select?, allow_other?}
//       Up to 20 options with distinct ids (an id defaults to the label in
//       ASCII lowercase); allow_other defaults to true when there are no
//       options. Returns waiting, interaction_kind "question", payload
//       {"questions":[{"id":"q1","question":…,"options":[{"id","label"}],
//       "multi_select":bool,"allow_other":bool}]}.
//
// Confinement: every path argument is resolved against ctx.workspace and must
// stay inside it after resolving `..` and symlinks, component by component as
// the kernel does (a symlink that points outside is refused, in any
// component, dangling or not). Absolute paths inside the workspace are
// accepted. NUL bytes and invalid UTF-8 are refused. Files are then opened
// with O_NOFOLLOW and the opened descriptor is checked again; see paths.h for
// what race remains. Confinement guards the model's path arguments, it is
// not a sandbox (bash's sandbox is bubblewrap, see sandbox.h). With
// ctx.sandbox.mode read_only, write and edit refuse.
//
// Spill: output (succeeded or failed) over limits.spill_lines lines or
// spill_bytes bytes is written whole to ctx.spill_dir/<call_id>.txt (call_id
// with unsafe characters replaced; "call" when empty) and replaced by the
// first and last preview_lines lines around "… N lines (M bytes) omitted;
// full output in PATH …"; long lines are cut so the preview stays under
// spill_bytes; tool_outcome::output_path is set.
//
// Cancellation: when ctx.stop is requested a running tool stops promptly
// (bash kills its whole process group; glob and grep check between entries)
// and returns failed("interrupted"); a stop requested before run() starts
// returns that at once. Asio cancellation (terminal) of the coroutine
// awaiting run() acts like ctx.stop for bash; a file tool finishes its
// blocking step first. Either way run() returns an outcome rather than
// throwing operation_aborted.
//
// Threading: run() is a coroutine on the caller's executor. File tools do all
// their work (and the spill) on ctx.blocking, which must be set, and resume
// on the caller's executor. bash runs on a strand of the caller's executor
// (spawning is one fork and exec through the process layer, src/process;
// all waiting is asynchronous) and spills on
// ctx.blocking. ask_user does no I/O. Tools are stateless: one tool_set may
// serve concurrent calls. A SIGCHLD handler elsewhere in the process that
// reaps every child (waitpid(-1)) would steal bash's exit status ("exit
// status unknown").
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "runtime/common/tool_types.h"
#include "runtime/common/sandbox.h"
#include "util/result.h"

namespace tether::process {
class spawner;
}

namespace tether::runtime::native {

// Where bash runs when the turn runs in an environment: what it needs of the
// turn's session::turn_place (session/runtime.h), which the native runtime
// hands it through this seam (the tools sit below the session layer).
class command_place {
 public:
  virtual ~command_place() = default;
  [[nodiscard]] virtual const std::string& environment() const = 0;  // [environments.NAME]
  [[nodiscard]] virtual const std::string& workspace() const = 0;    // the workspace there
  virtual process::spawner& spawner() = 0;
  // `sig` to the command whose local relay is `relay`, where it runs.
  virtual void signal(int relay, int sig) = 0;
  // The two copies in step (session::turn_place::send_workspace, fetch_workspace).
  virtual boost::asio::awaitable<result<void>> send_workspace(bool even_unchanged) = 0;
  virtual boost::asio::awaitable<result<void>> fetch_workspace() = 0;
};

struct tool_limits {
  std::size_t spill_lines = 2'000;
  std::size_t spill_bytes = 50U * 1024U;
  std::size_t preview_lines = 100;        // head and tail lines each in a spilled preview
  std::chrono::milliseconds bash_timeout{120'000};
  std::size_t bash_output_cap = 8U << 20U;  // bytes kept from a command's output; the rest is dropped
  std::size_t read_max_bytes = 16U << 20U;  // larger files are refused
  // Added beyond the first sketch: how long a killed command's process group
  // gets between SIGTERM and SIGKILL (tests shorten it to prove the SIGKILL),
  // and how many entries list, glob and grep keep (tests shrink it to prove
  // the cap without creating thousands of files).
  std::chrono::milliseconds bash_kill_grace{2'000};
  std::size_t max_results = 1'000;
};

struct tool_context {
  std::filesystem::path workspace;  // canonical, existing directory
  std::filesystem::path spill_dir;  // where spilled outputs go (created on demand)
  std::filesystem::path blob_dir;   // where images are stored once by sha256 (created on demand)
  boost::asio::any_io_executor blocking;  // executor for blocking file work
  std::stop_token stop;
  std::string call_id;  // names spill files
  tool_limits limits;
  sandbox_policy sandbox;  // bash's sandbox and environment; read-only also stops write and edit
  // Set when the turn runs in an environment: bash runs there.
  std::shared_ptr<command_place> place;
};

enum class tool_status { succeeded, failed, waiting };

struct tool_outcome {
  tool_status status = tool_status::succeeded;
  std::string content;      // succeeded: text for the model; failed: the error
  std::string output_path;  // set when the output was spilled to a file
  std::vector<image_part> images;
  // waiting (ask_user)
  std::string interaction_kind;  // "question"
  boost::json::value interaction_payload;
};

class tool {
 public:
  virtual ~tool() = default;
  [[nodiscard]] virtual const tool_spec& spec() const = 0;
  virtual boost::asio::awaitable<tool_outcome> run(boost::json::value input, tool_context ctx) const = 0;
};

class tool_set {
 public:
  void add(std::unique_ptr<tool> t);
  [[nodiscard]] const tool* find(std::string_view name) const;
  [[nodiscard]] std::vector<tool_spec> specs() const;

 private:
  std::vector<std::unique_ptr<tool>> tools_;
};

// read, write, edit, list, glob, grep, bash, ask_user.
tool_set make_local_tools();

}  // namespace tether::runtime::native
