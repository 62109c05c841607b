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
  auto keep = [&](const char* buf, std::size_t got) {
    const std::size_t room = limits.max_output - std::min(limits.max_output, out.output.size());
    out.output.append(buf, std::min(got, room));
    out.dropped += got - std::min(got, room);
  };
  // Reads what is ready; false at EOF or on an error.
  auto read_ready = [&](int wait_ms) {
    pollfd pfd{child.stdout_fd.get(), POLLIN, 0};
    const int r = ::poll(&pfd, 1, wait_ms);
    if (r < 0) return errno == EINTR;
    if (r == 0) return wait_ms != 0;  // nothing yet; with no wait, nothing more
    char buf[4096];
    const ssize_t n = ::read(child.stdout_fd.get(), buf, sizeof buf);
    if (n < 0) return errno == EINTR;
    if (n == 0) return false;
    keep(buf, static_cast<std::size_t>(n));
    return true;
  };
  const auto deadline = std::chrono::steady_clock::now() + limits.limit;
  // Until EOF or the leader's exit (a process it started may keep the pipe
  // open: it is killed below), polling the pidfd beside the pipe.
  bool eof = false;
  while (!eof && !has_exited(child.pid)) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      out.timed_out = true;
      break;
    }
    const int wait_ms = static_cast<int>(std::min<long long>(left.count(), child.pidfd.valid() ? left.count() : 20));
    pollfd fds[2] = {{child.stdout_fd.get(), POLLIN, 0}, {child.pidfd.get(), POLLIN, 0}};
    const int r = ::poll(fds, child.pidfd.valid() ? 2 : 1, wait_ms);
    if (r > 0 && (fds[0].revents & (POLLIN | POLLHUP)) != 0) eof = !read_ready(0);
  }
  // What is left in the pipe once the leader is done (never past the limit).
  while (!out.timed_out && !eof && std::chrono::steady_clock::now() < deadline) eof = !read_ready(0);
  // EOF first: the leader exits at about the same time.
  while (!out.timed_out && !has_exited(child.pid)) {
    if (std::chrono::steady_clock::now() >= deadline) {
      out.timed_out = true;
      break;
    }
    pollfd pfd{child.pidfd.get(), POLLIN, 0};
    ::poll(&pfd, child.pidfd.valid() ? 1 : 0, 20);
  }
  out.status = kill_and_reap(child.release());
  return out;
}

}  // namespace tether::process
