#include "runtime/native/tools/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

namespace tether::runtime::native::tool_detail {

namespace {

// The gate: wait for one line on descriptor 3, close it, then become argv.
// EOF (the parent died before opening the gate) exits without running it.
// The server runs with umask 077 so that its data directory stays private;
// a command gets the usual 022, so that what it creates in a user's own
// repository is as readable as what the user creates there.
constexpr const char* gate_script = "umask 022; read -r _ <&3 || exit 125; exec 3<&-; exec \"$@\"";

// posix_spawn's attribute and file-action objects, destroyed on every path.
class spawn_setup {
 public:
  spawn_setup() {
    ::posix_spawnattr_init(&attr_);
    ::posix_spawn_file_actions_init(&actions_);
  }
  ~spawn_setup() {
    ::posix_spawnattr_destroy(&attr_);
    ::posix_spawn_file_actions_destroy(&actions_);
  }
  spawn_setup(const spawn_setup&) = delete;
  spawn_setup& operator=(const spawn_setup&) = delete;
  posix_spawnattr_t* attr() { return &attr_; }
  posix_spawn_file_actions_t* actions() { return &actions_; }

 private:
  posix_spawnattr_t attr_{};
  posix_spawn_file_actions_t actions_{};
};

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

result<spawned_process> spawn_process(const spawn_options& o) {
  if (o.argv.empty()) return os_error("cannot start a process without argv", EINVAL);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return os_error("cannot create a pipe", errno);
  unique_fd read_end(fds[0]);
  unique_fd write_end(fds[1]);
  unique_fd gate_read;
  unique_fd gate_write;
  if (o.gated) {
    // A socket pair, not a pipe: send(MSG_NOSIGNAL) to a child that died
    // gives EPIPE instead of a SIGPIPE to the server.
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
      return os_error("cannot create a socket pair", errno);
    gate_read = unique_fd(fds[0]);
    gate_write = unique_fd(fds[1]);
  }

  spawn_setup setup;
  auto* fa = setup.actions();
  int rc = ::posix_spawn_file_actions_addopen(fa, 0, "/dev/null", O_RDONLY, 0);
  if (rc == 0) rc = ::posix_spawn_file_actions_adddup2(fa, write_end.get(), 1);
  if (rc == 0) rc = ::posix_spawn_file_actions_adddup2(fa, write_end.get(), 2);
  if (rc == 0 && o.gated) rc = ::posix_spawn_file_actions_adddup2(fa, gate_read.get(), 3);
  // Whatever a library opened without O_CLOEXEC (or before it could set it)
  // stops here: the child keeps its stdio and the gate, nothing else.
  if (rc == 0) rc = ::posix_spawn_file_actions_addclosefrom_np(fa, o.gated ? 4 : 3);
  if (rc == 0 && !o.cwd.empty()) rc = ::posix_spawn_file_actions_addchdir_np(fa, o.cwd.c_str());
  sigset_t none;
  sigset_t all;
  sigemptyset(&none);
  sigfillset(&all);
  if (rc == 0) rc = ::posix_spawnattr_setsigmask(setup.attr(), &none);
  if (rc == 0) rc = ::posix_spawnattr_setsigdefault(setup.attr(), &all);
  if (rc == 0)
    rc = ::posix_spawnattr_setflags(setup.attr(), POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  if (rc != 0) return os_error("cannot prepare the process", rc);

  std::vector<std::string> argv;
  if (o.gated) {
    argv = {"/bin/sh", "-c", gate_script, "sh"};
    argv.insert(argv.end(), o.argv.begin(), o.argv.end());
  } else {
    argv = o.argv;
  }
  std::vector<std::string> env = o.env;
  auto argp = pointers(argv);
  auto envp = pointers(env);
  pid_t pid = -1;
  rc = ::posix_spawn(&pid, argv[0].c_str(), fa, setup.attr(), argp.data(), envp.data());
  if (rc != 0) return os_error("cannot start " + argv[0], rc);
  spawned_process out;
  out.pid = pid;
  out.output = std::move(read_end);
  out.gate = std::move(gate_write);
  return out;  // write_end and gate_read close here: the child holds the only copies
}

result<void> open_gate(spawned_process& p) {
  if (p.gate.get() < 0) return ok();
  const ssize_t n = ::send(p.gate.get(), "go\n", 3, MSG_NOSIGNAL);
  const int err = errno;
  p.gate = unique_fd();
  if (n != 3) return os_error("cannot start the process", n < 0 ? err : EIO);
  return ok();
}

unique_fd open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  // A pidfd is always close-on-exec.
  const auto fd = ::syscall(SYS_pidfd_open, pid, 0);
  if (fd >= 0) return unique_fd(static_cast<int>(fd));
#endif
  (void)pid;
  return {};
}

bool has_exited(pid_t pid) {
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) return errno == ECHILD;
  return info.si_pid == pid;
}

std::string reap(pid_t pid) {
  int status = 0;
  pid_t r = -1;
  do {
    r = ::waitpid(pid, &status, 0);
  } while (r < 0 && errno == EINTR);
  if (r != pid) return "exit status unknown (the process was reaped elsewhere)";
  if (WIFEXITED(status)) return "exit code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* abbrev = ::sigabbrev_np(sig);
    return "killed by signal " + std::to_string(sig) + (abbrev != nullptr ? " (SIG" + std::string(abbrev) + ")" : "");
  }
  return "exit status " + std::to_string(status);
}

result<finished_process> run_to_end(const spawn_options& o, std::chrono::milliseconds limit) {
  auto p = spawn_process(o);
  if (!p) return p.error();
  if (auto g = open_gate(*p); !g) {
    ::kill(-p->pid, SIGKILL);
    ::waitpid(p->pid, nullptr, 0);
    return g.error();
  }
  finished_process out;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  bool timed_out = false;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd pfd{p->output.get(), POLLIN, 0};
    const int r = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    char buf[4096];
    const ssize_t n = ::read(p->output.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (out.output.size() < std::size_t{64} * 1024) out.output.append(buf, static_cast<std::size_t>(n));
  }
  if (timed_out) ::kill(-p->pid, SIGKILL);
  int status = 0;
  while (::waitpid(p->pid, &status, 0) < 0 && errno == EINTR) {
  }
  out.status = timed_out ? -1 : status;
  return out;
}

}  // namespace tether::runtime::native::tool_detail
