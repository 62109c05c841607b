#include "e2e/run/process.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <set>

#include "process/spawn.h"

namespace tether::e2e {

namespace {

using steady = std::chrono::steady_clock;

// Every live child's pid, for stop_all_children().
std::mutex live_mu;
std::set<pid_t>& live() {
  static std::set<pid_t> pids;
  return pids;
}

int millis_left(steady::time_point deadline, int cap) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, cap));
}

}  // namespace

result<std::unique_ptr<child_process>> child_process::start(const std::vector<std::string>& argv,
                                                            const std::filesystem::path& log,
                                                            const std::map<std::string, std::string>& env) {
  if (argv.empty()) return make_error(e2e_errc::infrastructure, "no program to start");
  process::spawn_options o;
  o.argv = argv;
  o.env = process::inherited_environment(env);
  o.stdout_mode = process::output::pipe;
  o.stderr_mode = process::output::log_file;
  o.log = log;
  std::unique_ptr<child_process> p(new child_process());
  std::lock_guard lock(live_mu);  // so stop_all_children() never misses a child that just started
  auto spawned = process::system_spawner().spawn(o);
  if (!spawned) return make_error(e2e_errc::infrastructure, spawned.error().message);
  p->out_ = std::move(spawned->stdout_fd);
  p->pidfd_ = std::move(spawned->pidfd);
  p->pid_ = spawned->release();
  live().insert(p->pid_);
  return p;
}

child_process::~child_process() {
  if (running()) {
    signal(SIGKILL);
    wait(std::chrono::seconds(10));
  }
}

result<std::string> child_process::wait_line(const std::string& prefix, std::chrono::milliseconds timeout,
                                             const std::function<bool()>& cancelled) {
  const auto deadline = steady::now() + timeout;
  for (;;) {
    while (auto line = lines_.next()) {
      if (line->has_value() && (*line)->starts_with(prefix)) return line->value();
    }
    if (cancelled && cancelled()) return make_error(e2e_errc::interrupted, "interrupted");
    if (steady::now() >= deadline)
      return make_error(e2e_errc::infrastructure,
                        "no line starting with '" + prefix + "' within " + std::to_string(timeout.count()) + " ms");
    pollfd p{out_.get(), POLLIN, 0};
    if (::poll(&p, 1, millis_left(deadline, 100)) <= 0) continue;
    char buf[4096];
    const auto n = ::read(out_.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      return make_error(e2e_errc::infrastructure,
                        "reading the program's output failed before it printed '" + prefix + "': " + std::strerror(errno));
    if (n == 0) return make_error(e2e_errc::infrastructure, "the program closed its output before printing '" + prefix + "'");
    lines_.feed(std::string_view(buf, static_cast<std::size_t>(n)));
  }
}

std::string child_process::rest_of_stdout(std::chrono::milliseconds timeout) {
  const auto deadline = steady::now() + timeout;
  std::string out = lines_.drain();
  while (steady::now() < deadline) {
    pollfd p{out_.get(), POLLIN, 0};
    if (::poll(&p, 1, millis_left(deadline, 100)) <= 0) continue;
    char buf[4096];
    const auto n = ::read(out_.get(), buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

void child_process::signal(int sig) {
  if (pid_ > 0 && !status_) ::kill(pid_, sig);
}

bool child_process::running() {
  if (status_ || pid_ <= 0) return false;
  int st = 0;
  if (::waitpid(pid_, &st, WNOHANG) != pid_) return true;
  status_ = process::exit_status::from_wait_status(st).shell_code();
  std::lock_guard lock(live_mu);
  live().erase(pid_);
  return false;
}

std::optional<int> child_process::wait(std::chrono::milliseconds timeout) {
  const auto deadline = steady::now() + timeout;
  while (running()) {
    if (steady::now() >= deadline) {
      ::kill(pid_, SIGKILL);
      (void)process::reap(pid_);
      status_ = 128 + SIGKILL;
      std::lock_guard lock(live_mu);
      live().erase(pid_);
      return std::nullopt;
    }
    // The pidfd turns readable at the exit (without one, a short poll).
    pollfd p{pidfd_.get(), POLLIN, 0};
    ::poll(&p, pidfd_.valid() ? 1 : 0, millis_left(deadline, pidfd_.valid() ? 1000 : 5));
  }
  return status_;
}

void stop_all_children() {
  std::lock_guard lock(live_mu);
  for (const pid_t p : live()) ::kill(p, SIGKILL);
}

}  // namespace tether::e2e
