// e2e::child_process — a program the harness starts (a `tether serve`, a
// `tether mock-llm`) with its stdout on a pipe and its stderr in a log file.
//
//   auto p = child_process::start({binary, "serve", ...}, log, env);   // result<unique_ptr<…>>
//   auto line = (*p)->wait_line("listening on ", 30s);                  // result<string>
//   (*p)->signal(SIGTERM); int status = (*p)->wait(10s);
//
// The child runs in its own process group (a Ctrl-C on the terminal reaches
// the harness only; the harness decides how its children stop), inherits no
// descriptor of the harness, and is killed with SIGKILL if the harness dies
// (the layer's parent-death signal: start it from a thread that outlives it).
// wait() waits on the child's pidfd. Destroying a child_process that still
// runs kills it with SIGKILL and reaps it. Stdout lines are framed by the
// layer's line_framer (at most 64 KiB a line).
//
// stop_all_children() sends SIGKILL to every child_process alive in this
// process (for Ctrl-C); it is safe to call from any thread.
//
// Errors: e2e_errc::infrastructure (the spawn failed, the line did not come
// in time, the child exited first); wait_line also stops early when
// `cancelled` returns true (e2e_errc::interrupted).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "e2e/errors.h"
#include "process/line_framer.h"
#include "process/types.h"
#include "util/result.h"

namespace tether::e2e {

class child_process {
 public:
  static result<std::unique_ptr<child_process>> start(const std::vector<std::string>& argv,
                                                      const std::filesystem::path& log,
                                                      const std::map<std::string, std::string>& env = {});
  ~child_process();
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  // The first stdout line starting with `prefix`.
  result<std::string> wait_line(const std::string& prefix, std::chrono::milliseconds timeout,
                                const std::function<bool()>& cancelled = {});
  // Everything still unread on stdout until the child closes it or `timeout`.
  std::string rest_of_stdout(std::chrono::milliseconds timeout);
  void signal(int sig);
  // Waits for the exit: the exit status, 128 + signal, or nullopt when it did
  // not exit within `timeout` (then it is killed with SIGKILL and reaped).
  std::optional<int> wait(std::chrono::milliseconds timeout);
  [[nodiscard]] pid_t pid() const { return pid_; }
  [[nodiscard]] bool running();

 private:
  child_process() = default;
  pid_t pid_ = -1;
  process::unique_fd out_;
  process::unique_fd pidfd_;
  process::line_framer lines_{{.max_bytes = 64 * 1024, .overlong = process::overlong_line::split}};
  std::optional<int> status_;
};

void stop_all_children();

}  // namespace tether::e2e
