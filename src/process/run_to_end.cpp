#include "process/run_to_end.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>

namespace tether::process {

result<finished> run_to_end(spawn_options o, run_limits limits, spawner& s) {
  o.stdout_mode = output::pipe;
  if (o.stderr_mode == output::pipe) o.stderr_mode = output::stdout_pipe;
  auto started = s.spawn(o);
  if (!started) return started.error();
  auto& child = started.value();
  TETHER_TRY(child.open_gate());

  finished out;
  const auto deadline = std::chrono::steady_clock::now() + limits.limit;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      out.timed_out = true;
      break;
    }
    pollfd pfd{child.stdout_fd.get(), POLLIN, 0};
    const int r = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (r <= 0) continue;  // EINTR, or the deadline: checked above
    char buf[4096];
    const ssize_t n = ::read(child.stdout_fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: every writer (the group, usually) is done
    const auto got = static_cast<std::size_t>(n);
    const std::size_t keep = std::min(got, limits.max_output - std::min(limits.max_output, out.output.size()));
    out.output.append(buf, keep);
    out.dropped += got - keep;
  }
  if (!out.timed_out) {
    // EOF came; the leader exits at about the same time. Wait for it within
    // the limit, polling (the synchronous path has no reactor).
    while (!has_exited(child.pid) && std::chrono::steady_clock::now() < deadline) ::usleep(1000);
    out.timed_out = !has_exited(child.pid);
  }
  out.status = kill_and_reap(child.release());
  return out;
}

}  // namespace tether::process
