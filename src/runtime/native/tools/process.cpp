#include "runtime/native/tools/process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

extern char** environ;  // NOLINT: POSIX

namespace tether::runtime::native::tool_detail {

namespace {

bool iequals_suffix(std::string_view name, std::string_view suffix) {
  if (name.size() < suffix.size()) return false;
  const auto tail = name.substr(name.size() - suffix.size());
  for (std::size_t i = 0; i < tail.size(); ++i) {
    char c = tail[i];
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (c != suffix[i]) return false;
  }
  return true;
}

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

}  // namespace

bool is_secret_name(std::string_view name) {
  for (const std::string_view s : {"API_KEY", "TOKEN", "SECRET"}) {
    if (name.size() == s.size() && iequals_suffix(name, s)) return true;
    if (name.size() > s.size() && name[name.size() - s.size() - 1] == '_' && iequals_suffix(name, s)) return true;
  }
  return false;
}

std::vector<std::string> tool_environment() {
  std::vector<std::string> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos || is_secret_name(entry.substr(0, eq))) continue;
    out.emplace_back(entry);
  }
  return out;
}

result<spawned_shell> spawn_shell(const std::string& command, const std::filesystem::path& dir) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return os_error("cannot create a pipe", errno);
  unique_fd read_end(fds[0]);
  unique_fd write_end(fds[1]);

  spawn_setup setup;
  auto* fa = setup.actions();
  int rc = ::posix_spawn_file_actions_addopen(fa, 0, "/dev/null", O_RDONLY, 0);
  if (rc == 0) rc = ::posix_spawn_file_actions_adddup2(fa, write_end.get(), 1);
  if (rc == 0) rc = ::posix_spawn_file_actions_adddup2(fa, write_end.get(), 2);
  if (rc == 0) rc = ::posix_spawn_file_actions_addchdir_np(fa, dir.c_str());
  sigset_t none;
  sigset_t all;
  sigemptyset(&none);
  sigfillset(&all);
  if (rc == 0) rc = ::posix_spawnattr_setsigmask(setup.attr(), &none);
  if (rc == 0) rc = ::posix_spawnattr_setsigdefault(setup.attr(), &all);
  if (rc == 0)
    rc = ::posix_spawnattr_setflags(setup.attr(), POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  if (rc != 0) return os_error("cannot prepare the shell", rc);

  std::vector<std::string> env = tool_environment();
  std::vector<char*> envp;
  envp.reserve(env.size() + 1);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string bash = "/bin/bash";
  std::string flag = "-c";
  std::string cmd = command;
  char* argv[] = {bash.data(), flag.data(), cmd.data(), nullptr};

  pid_t pid = -1;
  rc = ::posix_spawn(&pid, "/bin/bash", fa, setup.attr(), argv, envp.data());
  if (rc != 0) return os_error("cannot start /bin/bash", rc);
  spawned_shell out;
  out.pid = pid;
  out.output = std::move(read_end);
  return out;  // write_end closes here: the child holds the only copies
}

unique_fd open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  const auto fd = ::syscall(SYS_pidfd_open, pid, 0);
  if (fd >= 0) {
    ::fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC);
    return unique_fd(static_cast<int>(fd));
  }
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

}  // namespace tether::runtime::native::tool_detail
