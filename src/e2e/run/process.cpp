#include "e2e/run/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <thread>

namespace tether::e2e {

namespace {

using steady = std::chrono::steady_clock;

// Every live child's pid, for stop_all_children().
std::mutex live_mu;
std::set<pid_t>& live() {
  static std::set<pid_t> pids;
  return pids;
}

int millis_left(steady::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 100));
}

}  // namespace

result<std::unique_ptr<child_process>> child_process::start(const std::vector<std::string>& argv,
                                                            const std::filesystem::path& log,
                                                            const std::map<std::string, std::string>& env) {
  if (argv.empty()) return make_error(e2e_errc::infrastructure, "no program to start");
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) return make_error(e2e_errc::infrastructure, "pipe failed");
  // Everything the child needs is prepared before fork: after it, only
  // async-signal-safe calls.
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view kv(*e);
    const auto name = kv.substr(0, kv.find('='));
    if (!env.contains(std::string(name))) env_strings.emplace_back(kv);
  }
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  const int err = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (err < 0) {
    ::close(pipefd[0]);
    ::close(pipefd[1]);
    return make_error(e2e_errc::infrastructure, "cannot open " + log.string());
  }
  const pid_t parent = ::getpid();
  std::unique_ptr<child_process> p(new child_process());
  {
    std::lock_guard lock(live_mu);
    p->pid_ = ::fork();
    if (p->pid_ > 0) live().insert(p->pid_);
  }
  if (p->pid_ < 0) {
    ::close(pipefd[0]);
    ::close(pipefd[1]);
    ::close(err);
    return make_error(e2e_errc::infrastructure, "fork failed");
  }
  if (p->pid_ == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::dup2(pipefd[1], 1);
    ::dup2(err, 2);
    ::execve(args[0], args.data(), envp.data());
    ::_exit(127);
  }
  ::close(pipefd[1]);
  ::close(err);
  p->out_ = pipefd[0];
  return p;
}

child_process::~child_process() {
  if (running()) {
    signal(SIGKILL);
    wait(std::chrono::seconds(10));
  }
  if (out_ >= 0) ::close(out_);
}

result<std::string> child_process::wait_line(const std::string& prefix, std::chrono::milliseconds timeout,
                                             const std::function<bool()>& cancelled) {
  const auto deadline = steady::now() + timeout;
  for (;;) {
    for (auto nl = pending_.find('\n'); nl != std::string::npos; nl = pending_.find('\n')) {
      std::string line = pending_.substr(0, nl);
      pending_.erase(0, nl + 1);
      if (line.starts_with(prefix)) return line;
    }
    if (cancelled && cancelled()) return make_error(e2e_errc::interrupted, "interrupted");
    if (steady::now() >= deadline)
      return make_error(e2e_errc::infrastructure,
                        "no line starting with '" + prefix + "' within " + std::to_string(timeout.count()) + " ms");
    pollfd p{out_, POLLIN, 0};
    if (::poll(&p, 1, millis_left(deadline)) <= 0) continue;
    char buf[4096];
    const auto n = ::read(out_, buf, sizeof buf);
    if (n <= 0) return make_error(e2e_errc::infrastructure, "the program exited before printing '" + prefix + "'");
    pending_.append(buf, static_cast<std::size_t>(n));
  }
}

std::string child_process::rest_of_stdout(std::chrono::milliseconds timeout) {
  const auto deadline = steady::now() + timeout;
  std::string out = std::move(pending_);
  pending_.clear();
  while (steady::now() < deadline) {
    pollfd p{out_, POLLIN, 0};
    if (::poll(&p, 1, millis_left(deadline)) <= 0) continue;
    char buf[4096];
    const auto n = ::read(out_, buf, sizeof buf);
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
  status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  std::lock_guard lock(live_mu);
  live().erase(pid_);
  return false;
}

std::optional<int> child_process::wait(std::chrono::milliseconds timeout) {
  const auto deadline = steady::now() + timeout;
  while (running()) {
    if (steady::now() >= deadline) {
      ::kill(pid_, SIGKILL);
      int st = 0;
      ::waitpid(pid_, &st, 0);
      status_ = 128 + SIGKILL;
      std::lock_guard lock(live_mu);
      live().erase(pid_);
      return std::nullopt;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return status_;
}

void stop_all_children() {
  std::lock_guard lock(live_mu);
  for (const pid_t p : live()) ::kill(p, SIGKILL);
}

}  // namespace tether::e2e
