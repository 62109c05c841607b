#include "support/daytona/sandbox.h"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>

#include "process/spawn.h"

namespace tether::test::daytona {

namespace fs = std::filesystem;

result<void> namespaces::start(const fs::path& root, const std::vector<std::pair<fs::path, std::string>>& read_only) {
  if (running()) return {};
  process::spawn_options o;
  o.argv = {"/usr/bin/bwrap", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent",
            "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin",
            "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "--ro-bind", "/etc", "/etc",
            "--proc", "/proc", "--dev", "/dev",
            "--bind", (root / "tmp").string(), "/tmp", "--bind", (root / "home").string(), "/home"};
  // A program put in /usr/local/bin (on a sandbox's PATH, as Daytona's
  // images have it) needs a writable directory there to be bound onto.
  for (const auto& [here, inside] : read_only) {
    if (inside.rfind("/usr/local/bin/", 0) != 0) continue;
    o.argv.insert(o.argv.end(), {"--tmpfs", "/usr/local/bin"});
    break;
  }
  for (const auto& [here, inside] : read_only) {
    o.argv.emplace_back("--ro-bind");
    o.argv.push_back(here.string());
    o.argv.push_back(inside);
  }
  o.argv.emplace_back("/usr/bin/sleep");
  o.argv.emplace_back("infinity");
  o.env = {"PATH=/usr/bin:/bin"};
  o.stdout_mode = process::output::null;
  o.stderr_mode = process::output::null;
  auto s = process::system_spawner().spawn(o);
  if (!s) return s.error();
  outer_ = s->release();
  // Ready once the sleeper runs: bubblewrap's init (its child) has made the
  // mounts, then started it (the init's child), which exec'd sleep. Until
  // then a command entering the namespaces might find no root yet.
  const auto child_of = [](pid_t p) {
    std::ifstream in("/proc/" + std::to_string(p) + "/task/" + std::to_string(p) + "/children");
    pid_t c = -1;
    return in >> c ? c : pid_t{-1};
  };
  for (int i = 0; i < 1000 && inner_ <= 0; ++i) {
    const pid_t init = child_of(outer_);
    const pid_t sleeper = init > 0 ? child_of(init) : -1;
    std::string comm;
    if (sleeper > 0) std::getline(std::ifstream("/proc/" + std::to_string(sleeper) + "/comm"), comm);
    if (comm == "sleep") {
      inner_ = sleeper;
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  if (inner_ <= 0) {
    stop();
    return error(std::make_error_code(std::errc::io_error), "the sandbox's namespaces did not come up");
  }
  return {};
}

void namespaces::stop() {
  if (outer_ > 0) process::kill_and_reap(outer_);  // its init dies with it, and every process of the sandbox
  outer_ = -1;
  inner_ = -1;
}

std::vector<std::string> namespaces::argv(const std::map<std::string, std::string>& envs, const std::string& cwd,
                                          const std::string& command) const {
  std::vector<std::string> a = {"/usr/bin/nsenter", "-t", std::to_string(inner_), "-p", "-m", "-r", "-w", "--",
                                "/usr/bin/env", "-i", "HOME=/home/daytona", "PATH=/usr/local/bin:/usr/bin:/bin"};
  for (const auto& [k, v] : envs) a.push_back(k + "=" + v);
  std::string dir = cwd.empty() ? "/home/daytona" : cwd;
  std::string quoted = "'";
  for (char c : dir) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  quoted += "'";
  a.insert(a.end(), {"/bin/sh", "-c", "cd -- " + quoted + " || exit 1; " + command});
  return a;
}

std::optional<fs::path> host_path(const fs::path& root, const std::string& inside) {
  fs::path p = inside.empty() || inside[0] != '/' ? fs::path("/home/daytona") / inside : fs::path(inside);
  for (const auto& part : p) {
    if (part == "..") return std::nullopt;
  }
  const std::string s = p.lexically_normal().string();
  const bool allowed = s == "/home/daytona" || s.rfind("/home/daytona/", 0) == 0 || s == "/tmp" ||
                       s.rfind("/tmp/", 0) == 0;
  if (!allowed) return std::nullopt;
  return root / fs::path(s).relative_path();
}

result<void> command::start(const std::vector<std::string>& argv) {
  process::spawn_options o;
  o.argv = argv;
  o.env = {"PATH=/usr/bin:/bin"};
  o.stdin_mode = process::input::pipe;
  o.stdout_mode = process::output::pipe;
  o.stderr_mode = process::output::pipe;
  auto s = process::system_spawner().spawn(o);
  if (!s) return s.error();
  stdin_fd_ = s->stdin_fd.release();
  stdout_fd_ = s->stdout_fd.release();
  stderr_fd_ = s->stderr_fd.release();
  pid_ = s->release();
  reader_ = std::thread([this] { read_all(); });
  return {};
}

void command::read_all() {
  pollfd fds[2] = {{stdout_fd_, POLLIN, 0}, {stderr_fd_, POLLIN, 0}};
  int open = 2;
  char buf[16384];
  while (open > 0) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const auto n = ::read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        if (n < 0 && errno == EINTR) continue;
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open;
        continue;
      }
      std::lock_guard lock(mu_);
      const int stream = i + 1;
      if (stream != last_stream_) {
        log_.append(3, static_cast<char>(stream));  // 01 01 01 stdout, 02 02 02 stderr
        last_stream_ = stream;
      }
      log_.append(buf, static_cast<std::size_t>(n));
      (i == 0 ? out_ : err_).append(buf, static_cast<std::size_t>(n));
      changed_.notify_all();
    }
  }
  const auto status = process::reap(pid_);
  std::lock_guard lock(mu_);
  exit_code_ = status.shell_code();
  if (stdin_fd_ >= 0) ::close(stdin_fd_);
  stdin_fd_ = -1;
  changed_.notify_all();
}

command::~command() {
  kill();
  if (reader_.joinable()) reader_.join();
  if (stdin_fd_ >= 0) ::close(stdin_fd_);
}

std::optional<int> command::exit_code() const {
  std::lock_guard lock(mu_);
  return exit_code_;
}
std::string command::log() const {
  std::lock_guard lock(mu_);
  return log_;
}
std::string command::out() const {
  std::lock_guard lock(mu_);
  return out_;
}
std::string command::err() const {
  std::lock_guard lock(mu_);
  return err_;
}

std::pair<std::string, bool> command::log_from(std::size_t offset) const {
  std::lock_guard lock(mu_);
  return {offset < log_.size() ? log_.substr(offset) : std::string(), exit_code_.has_value()};
}

bool command::wait(std::chrono::milliseconds limit) const {
  std::unique_lock lock(mu_);
  return changed_.wait_for(lock, limit, [this] { return exit_code_.has_value(); });
}

bool command::input(const std::string& data) {
  std::lock_guard lock(mu_);
  if (exit_code_ || stdin_fd_ < 0) return false;
  std::size_t done = 0;
  while (done < data.size()) {
    const auto n = ::send(stdin_fd_, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

void command::kill() {
  std::lock_guard lock(mu_);
  if (!exit_code_ && pid_ > 0) process::signal_group(pid_, SIGKILL);
}

}  // namespace tether::test::daytona
