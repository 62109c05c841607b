#include "process/spawn.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "process/errors.h"

extern char** environ;  // NOLINT: POSIX

namespace tether::process {

namespace fs = std::filesystem;

namespace {

// What the child reports through the exec-status pipe when a step fails.
enum class step : int { pdeathsig, dup, close_range, chdir, gate, exec, ready };

const char* step_name(step s) {
  switch (s) {
    case step::pdeathsig: return "the parent-death signal";
    case step::dup: return "the standard descriptors";
    case step::close_range: return "closing inherited descriptors";
    case step::chdir: return "the working directory";
    case step::gate: return "the start gate";
    case step::exec: return "exec";
    case step::ready: return "ready";
  }
  return "?";
}

struct child_report {
  int at = 0;
  int err = 0;
};

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

tether::error spawn_error(const std::string& what, int err) {
  return make_error(process_errc::spawn_failed, what + ": " + std::strerror(err));
}

// Everything the forked child needs, prepared before the fork: after it only
// async-signal-safe system calls run (the server has other threads, whose
// locks may be held at the fork).
struct child_plan {
  std::vector<char*> argv;
  std::vector<char*> envp;
  const char* program = nullptr;
  const char* cwd = nullptr;
  int sources[4] = {-1, -1, -1, -1};  // what becomes fd 0, 1, 2, 3 (-1: fd 3 unused)
  int report = -1;                    // the exec-status pipe's write end
  pid_t parent = 0;
  bool die_with_parent = true;
  bool set_umask = false;
  mode_t umask_value = 0;
};

[[noreturn]] void child_fail(int report, step at, int err) {
  const child_report r{static_cast<int>(at), err};
  (void)!::write(report, &r, sizeof r);
  ::_exit(127);
}

[[noreturn]] void run_child(const child_plan& p) {
  ::setsid();
  if (p.die_with_parent) {
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) child_fail(p.report, step::pdeathsig, errno);
    if (::getppid() != p.parent) ::_exit(125);  // the parent died during the fork
  }
  // The raw call, not sigaction(3): glibc refuses to touch its own signals
  // (32 and 33, thread cancellation and set*id), and whoever started the
  // server may have left them ignored, which exec would pass on. An all-zero
  // kernel sigaction is SIG_DFL with no flags whatever the field order.
  const unsigned long dfl[8] = {};
  for (int sig = 1; sig < NSIG; ++sig) ::syscall(SYS_rt_sigaction, sig, dfl, nullptr, (NSIG - 1) / 8);  // EINVAL for KILL/STOP: fine
  if (p.set_umask) ::umask(p.umask_value);
  // Lift every source above the targets first, so a source that already is
  // 0..3 is not overwritten by an earlier dup2.
  int lifted[4];
  int report = p.report;
  for (int i = 0; i < 4; ++i) {
    lifted[i] = -1;
    if (p.sources[i] < 0) continue;
    lifted[i] = ::fcntl(p.sources[i], F_DUPFD_CLOEXEC, 4);
    if (lifted[i] < 0) child_fail(report, step::dup, errno);
  }
  if (report <= 3) {
    report = ::fcntl(report, F_DUPFD_CLOEXEC, 4);
    if (report < 0) ::_exit(127);
  }
  const int last = p.sources[3] >= 0 ? 3 : 2;
  for (int i = 0; i <= last; ++i)
    if (::dup2(lifted[i], i) < 0) child_fail(report, step::dup, errno);  // dup2 clears close-on-exec
  // Everything else goes, except the status pipe (close-on-exec, so the
  // exec itself closes it): whatever a library opened without O_CLOEXEC, or
  // before it could set it, stops here.
  const unsigned first = static_cast<unsigned>(last) + 1;
  const unsigned keep = static_cast<unsigned>(report);
  if (keep > first && ::syscall(SYS_close_range, first, keep - 1, 0) != 0) child_fail(report, step::close_range, errno);
  if (::syscall(SYS_close_range, keep + 1, ~0U, 0) != 0) child_fail(report, step::close_range, errno);
  if (p.cwd != nullptr && ::chdir(p.cwd) != 0) child_fail(report, step::chdir, errno);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  if (last == 3) {
    // Set up (its own group, descriptors, directory): the spawner may now
    // identify and record it, then open the gate.
    const child_report ready{static_cast<int>(step::ready), 0};
    if (::write(report, &ready, sizeof ready) != static_cast<ssize_t>(sizeof ready)) ::_exit(127);
    char go = 0;
    ssize_t n = -1;
    do {
      n = ::read(3, &go, 1);
    } while (n < 0 && errno == EINTR);
    if (n != 1) ::_exit(125);  // the spawner is gone or gave up: never run argv
    ::close(3);
  }
  ::execve(p.program, p.argv.data(), p.envp.data());
  child_fail(report, step::exec, errno);
}

// Reads the child's next report: nullopt at EOF (exec closed the pipe, or
// the child died), the step it reached (ready) or failed at otherwise.
result<std::optional<child_report>> next_report(int fd, const std::string& program) {
  child_report r;
  ssize_t n = -1;
  do {
    n = ::read(fd, &r, sizeof r);
  } while (n < 0 && errno == EINTR);
  if (n == 0) return std::optional<child_report>();
  if (n != static_cast<ssize_t>(sizeof r)) return spawn_error("cannot start " + program, n < 0 ? errno : EIO);
  return std::optional<child_report>(r);
}

// Ok at EOF (the exec closed the pipe), the failure the child reported otherwise.
result<void> read_report(int fd, const std::string& program) {
  auto r = next_report(fd, program);
  if (!r) return r.error();
  if (!*r) return ok();
  return spawn_error("cannot start " + program + " (" + step_name(static_cast<step>((*r)->at)) + ")", (*r)->err);
}

// A gated child's first report: ready (it waits at its gate), or why not.
result<void> read_ready(int fd, const std::string& program) {
  auto r = next_report(fd, program);
  if (!r) return r.error();
  if (!*r) return make_error(process_errc::gate_closed, "cannot start " + program + ": it died during its setup");
  if ((*r)->at == static_cast<int>(step::ready)) return ok();
  return spawn_error("cannot start " + program + " (" + step_name(static_cast<step>((*r)->at)) + ")", (*r)->err);
}

class posix_spawner final : public spawner {
 public:
  result<spawned> spawn(const spawn_options& o) override;
};

struct pipe_pair {
  unique_fd parent;
  unique_fd child;
};

result<pipe_pair> make_pipe(bool child_reads) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return spawn_error("cannot create a pipe", errno);
  if (child_reads) return pipe_pair{unique_fd(fds[1]), unique_fd(fds[0])};
  return pipe_pair{unique_fd(fds[0]), unique_fd(fds[1])};
}

result<pipe_pair> make_socket_pair() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    return spawn_error("cannot create a socket pair", errno);
  return pipe_pair{unique_fd(fds[0]), unique_fd(fds[1])};
}

result<spawned> posix_spawner::spawn(const spawn_options& o) {
  if (o.argv.empty()) return make_error(process_errc::spawn_failed, "cannot start a process without argv");
  if (o.stdout_mode == output::stdout_pipe)
    return make_error(process_errc::spawn_failed, "stdout cannot be merged into itself");
  std::vector<std::string> argv = o.argv;
  if (o.sandbox && o.sandbox->mode != sandbox_mode::off) {
    auto box = *o.sandbox;
    if (box.root.empty()) box.root = o.cwd;
    argv = sandbox_argv(box, argv);
  }
  std::vector<std::string> env = o.env;

  spawned out;
  out.grace = o.grace;
  unique_fd null_in;
  unique_fd null_out;
  unique_fd log;
  unique_fd child_in;
  unique_fd child_out;
  unique_fd child_err;
  unique_fd child_gate;
  auto open_null = [](unique_fd& fd, int flags) -> result<int> {
    if (!fd.valid()) fd = unique_fd(::open("/dev/null", flags | O_CLOEXEC));
    if (!fd.valid()) return spawn_error("cannot open /dev/null", errno);
    return fd.get();
  };
  auto open_log = [&]() -> result<int> {
    if (!log.valid()) log = unique_fd(::open(o.log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600));
    if (!log.valid()) return spawn_error("cannot open " + o.log.string(), errno);
    return log.get();
  };

  child_plan plan;
  if (o.stdin_mode == input::pipe) {
    auto p = make_socket_pair();
    if (!p) return p.error();
    out.stdin_fd = std::move(p->parent);
    child_in = std::move(p->child);
    plan.sources[0] = child_in.get();
  } else {
    auto fd = open_null(null_in, O_RDONLY);
    if (!fd) return fd.error();
    plan.sources[0] = *fd;
  }
  auto wire = [&](output mode, unique_fd& parent_end, unique_fd& child_end) -> result<int> {
    switch (mode) {
      case output::pipe: {
        auto p = make_pipe(false);
        if (!p) return p.error();
        parent_end = std::move(p->parent);
        child_end = std::move(p->child);
        return child_end.get();
      }
      case output::null: return open_null(null_out, O_WRONLY);
      case output::log_file: return open_log();
      case output::stdout_pipe: return plan.sources[1];
    }
    return spawn_error("unknown output mode", EINVAL);
  };
  auto out_fd = wire(o.stdout_mode, out.stdout_fd, child_out);
  if (!out_fd) return out_fd.error();
  plan.sources[1] = *out_fd;
  auto err_fd = wire(o.stderr_mode, out.stderr_fd, child_err);
  if (!err_fd) return err_fd.error();
  plan.sources[2] = *err_fd;
  if (o.gate == start_gate::gated) {
    // A socket pair: send(MSG_NOSIGNAL) to a child that died is EPIPE, not SIGPIPE.
    auto p = make_socket_pair();
    if (!p) return p.error();
    out.gate = std::move(p->parent);
    child_gate = std::move(p->child);
    plan.sources[3] = child_gate.get();
  }
  auto report = make_pipe(false);
  if (!report) return report.error();

  auto argp = pointers(argv);
  auto envp = pointers(env);
  plan.argv = std::move(argp);
  plan.envp = std::move(envp);
  plan.program = argv[0].c_str();
  plan.cwd = o.cwd.empty() ? nullptr : o.cwd.c_str();
  plan.report = report->child.get();
  plan.parent = ::getpid();
  plan.die_with_parent = o.death == parent_death::kill;
  plan.set_umask = o.umask.has_value();
  plan.umask_value = o.umask.value_or(0);

  // No handler of the parent's may run in the child between the fork and the
  // reset of the dispositions (an Asio signal_set would write to its pipe).
  sigset_t all;
  sigset_t saved;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &saved);
  const pid_t pid = ::fork();
  if (pid == 0) run_child(plan);
  const int fork_err = errno;
  ::pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  if (pid < 0) return spawn_error("cannot fork", fork_err);
  out.pid = pid;
  report->child.reset();  // the child holds the only write end now
  if (auto fd = ::syscall(SYS_pidfd_open, pid, 0); fd >= 0) out.pidfd = unique_fd(static_cast<int>(fd));
  if (o.gate == start_gate::gated) {
    // Wait for its setup (setsid included), so a caller that records the
    // child sees its final process group; the exec is tried (and checked)
    // when the gate opens.
    if (auto ready = read_ready(report->parent.get(), argv[0]); !ready) {
      (void)reap(out.release());
      return ready.error();
    }
    out.exec_status = std::move(report->parent);
    out.program = argv[0];
    return out;
  }
  if (auto started = read_report(report->parent.get(), argv[0]); !started) {
    (void)reap(out.release());
    return started.error();
  }
  return out;
}

}  // namespace

spawned::spawned(spawned&& o) noexcept
    : pid(std::exchange(o.pid, -1)),
      stdin_fd(std::move(o.stdin_fd)),
      stdout_fd(std::move(o.stdout_fd)),
      stderr_fd(std::move(o.stderr_fd)),
      pidfd(std::move(o.pidfd)),
      gate(std::move(o.gate)),
      exec_status(std::move(o.exec_status)),
      grace(o.grace),
      program(std::move(o.program)) {}

spawned& spawned::operator=(spawned&& o) noexcept {
  if (this != &o) {
    if (pid > 0) (void)kill_and_reap(pid);
    pid = std::exchange(o.pid, -1);
    stdin_fd = std::move(o.stdin_fd);
    stdout_fd = std::move(o.stdout_fd);
    stderr_fd = std::move(o.stderr_fd);
    pidfd = std::move(o.pidfd);
    gate = std::move(o.gate);
    exec_status = std::move(o.exec_status);
    grace = o.grace;
    program = std::move(o.program);
  }
  return *this;
}

spawned::~spawned() {
  if (pid > 0) (void)kill_and_reap(pid);
}

pid_t spawned::release() { return std::exchange(pid, -1); }

result<void> spawned::open_gate() {
  if (!gate.valid()) return ok();
  const ssize_t n = ::send(gate.get(), "g", 1, MSG_NOSIGNAL);
  const int err = errno;
  gate.reset();
  // An exec that failed reported why before the child exited: that reason
  // first, then the gate's own failure.
  auto started = read_report(exec_status.get(), program);
  exec_status.reset();
  if (!started) {
    (void)reap(release());
    return started.error();
  }
  if (n != 1) {
    (void)reap(release());
    return make_error(process_errc::gate_closed, std::string("the process ended before it was started: ") +
                                                     std::strerror(n < 0 ? err : EIO));
  }
  return ok();
}

spawner& system_spawner() {
  static posix_spawner s;
  return s;
}

void signal_group(pid_t pid, int sig) {
  if (pid > 0) ::kill(-pid, sig);
}

bool has_exited(pid_t pid) {
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) return errno == ECHILD;
  return info.si_pid == pid;
}

exit_status reap(pid_t pid) {
  if (pid <= 0) return {};
  int status = 0;
  pid_t r = -1;
  do {
    r = ::waitpid(pid, &status, 0);
  } while (r < 0 && errno == EINTR);
  if (r != pid) return {};
  return exit_status::from_wait_status(status);
}

exit_status kill_and_reap(pid_t pid) {
  signal_group(pid, SIGKILL);
  return reap(pid);
}

std::vector<std::string> shell_argv(const std::string& command) { return {"/bin/sh", "-c", command}; }

std::vector<std::string> inherited_environment(const std::map<std::string, std::string>& overrides) {
  std::vector<std::string> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view kv(*e);
    const auto name = kv.substr(0, kv.find('='));
    if (!overrides.contains(std::string(name))) out.emplace_back(kv);
  }
  for (const auto& [k, v] : overrides) out.push_back(k + "=" + v);
  return out;
}

bool is_executable(const fs::path& p) { return ::access(p.c_str(), X_OK) == 0 && !fs::is_directory(p); }

std::optional<fs::path> find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) {
    if (is_executable(name)) return fs::path(name);
    return std::nullopt;
  }
  const char* path = std::getenv("PATH");
  std::string_view rest(path != nullptr ? path : "/usr/bin:/bin");
  while (!rest.empty()) {
    const auto colon = rest.find(':');
    const std::string dir(rest.substr(0, colon));
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    if (dir.empty() || dir.front() != '/') continue;  // never a relative PATH entry
    if (is_executable(fs::path(dir) / name)) return fs::path(dir) / name;
  }
  return std::nullopt;
}

}  // namespace tether::process
