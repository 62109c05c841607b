#include "e2e/run/ssh_host.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <thread>

#include "process/run_to_end.h"
#include "process/spawn.h"

namespace tether::e2e {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

result<void> write_file(const fs::path& p, const std::string& text, fs::perms perms = fs::perms::owner_read |
                                                                                       fs::perms::owner_write) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return error(std::make_error_code(std::errc::io_error), "cannot write " + p.string());
  std::error_code ec;
  fs::permissions(p, perms, ec);
  return {};
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

result<void> keygen(const fs::path& key) {
  auto done = process::run_to_end({.argv = {"/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "tether-test",
                                            "-f", key.string()},
                                   .env = {"PATH=/usr/bin:/bin"}});
  if (!done || !done->status.success()) {
    return error(std::make_error_code(std::errc::io_error),
                 "ssh-keygen failed: " + (done ? done->output : done.error().describe()));
  }
  return {};
}

// A free TCP port on `address`, found by binding to port 0.
int free_port(const std::string& address) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  ::inet_pton(AF_INET, address.c_str(), &a.sin_addr);
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    socklen_t len = sizeof a;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) port = ntohs(a.sin_port);
  }
  ::close(fd);
  return port;
}

}  // namespace

result<std::unique_ptr<ssh_host>> ssh_host::start(ssh_host_options o) {
  std::unique_ptr<ssh_host> h(new ssh_host());
  if (auto r = h->open(std::move(o)); !r) return r.error();
  return h;
}

result<void> ssh_host::open(ssh_host_options o) {
  auto* s = this;
  s->o_ = std::move(o);
  std::string tmpl = "/tmp/tether-sshd-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) return error(std::make_error_code(std::errc::io_error), "mkdtemp failed");
  s->dir_ = tmpl;
  std::error_code ec;
  for (const char* d : {"etc/ssh", "home/agent/leases", "client"}) fs::create_directories(s->dir_ / d, ec);
  if (::chown((s->dir_ / "home/agent").c_str(), 1000, 1000) != 0 ||
      ::chown((s->dir_ / "home/agent/leases").c_str(), 1000, 1000) != 0) {
    return error(std::make_error_code(std::errc::permission_denied), "cannot chown the agent's home");
  }
  if (auto r = keygen(s->dir_ / "etc/ssh/host_key"); !r) return r.error();
  if (auto r = keygen(s->dir_ / "client/id"); !r) return r.error();
  if (auto r = keygen(s->dir_ / "client/other_host_key"); !r) return r.error();

  std::mt19937 rng(std::random_device{}());
  s->address_ = "127.0.0." + std::to_string(2 + rng() % 253);
  s->port_ = free_port(s->address_);
  if (s->port_ == 0) return error(std::make_error_code(std::errc::address_in_use), "no free port on " + s->address_);

  const auto& d = s->dir_;
  if (auto r = write_file(d / "etc/passwd", "root:x:0:0:root:/root:/bin/sh\n"
                                            "sshd:x:103:65534::/run/sshd:/usr/sbin/nologin\n"
                                            "agent:x:1000:1000:agent:/home/agent:/bin/sh\n",
                          fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                              fs::perms::others_read);
      !r) {
    return r.error();
  }
  if (auto r = write_file(d / "etc/group", "root:x:0:\nnogroup:x:65534:\nagent:x:1000:\n",
                          fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                              fs::perms::others_read);
      !r) {
    return r.error();
  }
  const std::string config = "ListenAddress " + s->address_ + ":" + std::to_string(s->port_) +
                             "\n"
                             "HostKey /etc/ssh/host_key\n"
                             "PidFile none\n"
                             "UsePAM no\n"
                             "StrictModes no\n"
                             "PasswordAuthentication no\n"
                             "KbdInteractiveAuthentication no\n"
                             "PubkeyAuthentication yes\n"
                             "AuthorizedKeysFile /etc/ssh/authorized_keys\n"
                             "PermitRootLogin no\n"
                             "AllowStreamLocalForwarding yes\n"
                             "StreamLocalBindUnlink yes\n"
                             "MaxStartups 100\n"
                             "MaxSessions 100\n"
                             "LogLevel VERBOSE\n";
  if (auto r = write_file(d / "etc/ssh/sshd_config", config); !r) return r.error();
  // Read by sshd as the user: world-readable, as ~/.ssh/authorized_keys would be.
  if (auto r = write_file(d / "etc/ssh/authorized_keys", read_file(d / "client/id.pub"),
                          fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                              fs::perms::others_read);
      !r) {
    return r.error();
  }
  const auto host_pub = read_file(d / "etc/ssh/host_key.pub");
  const std::string host_name = "[" + s->address_ + "]:" + std::to_string(s->port_);
  if (auto r = write_file(d / "client/known_hosts", host_name + " " + host_pub); !r) return r.error();
  if (auto r = write_file(d / "client/wrong_known_hosts", host_name + " " + read_file(d / "client/other_host_key.pub"));
      !r) {
    return r.error();
  }
  return s->launch();
}

result<void> ssh_host::launch() {
  std::vector<std::string> argv = {
      "/usr/bin/bwrap", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent",
      "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin",
      "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
      "--dir", "/etc", "--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache",
      "--ro-bind", (dir_ / "etc/passwd").string(), "/etc/passwd",
      "--ro-bind", (dir_ / "etc/group").string(), "/etc/group",
      "--ro-bind", (dir_ / "etc/ssh").string(), "/etc/ssh",
      "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/run", "--dir", "/run/sshd",
      "--bind", (dir_ / "home").string(), "/home"};
  for (const auto& [here, inside] : o_.read_only) {
    // Its directories made traversable for `agent` (bubblewrap makes them 0700).
    std::vector<std::string> parents;
    for (auto d = fs::path(inside).parent_path(); d.has_relative_path(); d = d.parent_path()) parents.push_back(d.string());
    for (auto it = parents.rbegin(); it != parents.rend(); ++it) {
      for (const char* a : {"--perms", "0755", "--dir"}) argv.emplace_back(a);
      argv.push_back(*it);
    }
    argv.emplace_back("--ro-bind");
    argv.push_back(here.string());
    argv.push_back(inside);
  }
  if (o_.small_disk_bytes > 0) {
    for (const char* a : {"--perms", "0777", "--size"}) argv.emplace_back(a);
    argv.push_back(std::to_string(o_.small_disk_bytes));
    for (const char* a : {"--tmpfs", "/home/agent/small"}) argv.emplace_back(a);
  }
  for (const char* cap : {"CAP_SETUID", "CAP_SETGID", "CAP_SYS_CHROOT", "CAP_KILL", "CAP_CHOWN", "CAP_DAC_OVERRIDE",
                          "CAP_FOWNER", "CAP_NET_BIND_SERVICE", "CAP_AUDIT_WRITE"}) {
    argv.emplace_back("--cap-add");
    argv.emplace_back(cap);
  }
  for (const char* a : {"/usr/sbin/sshd", "-D", "-e", "-f", "/etc/ssh/sshd_config"}) argv.emplace_back(a);

  const fs::path log_path = dir_ / "sshd.log";
  std::error_code ec;
  fs::remove(log_path, ec);
  process::spawn_options o;
  o.argv = std::move(argv);
  o.env = {"PATH=/usr/bin:/bin"};
  o.stdout_mode = process::output::log_file;
  o.stderr_mode = process::output::log_file;
  o.log = log_path;
  auto s = process::system_spawner().spawn(o);
  if (!s) return s.error();
  pid_ = s->release();
  // Ready when it says so in its log; gone when it exited first.
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (read_file(log_path).find("Server listening on") != std::string::npos) return {};
    if (process::has_exited(pid_)) break;
    std::this_thread::sleep_for(10ms);
  }
  const auto text = read_file(log_path);
  kill();
  return error(std::make_error_code(std::errc::io_error), "sshd did not start: " + text);
}

void ssh_host::kill() {
  if (pid_ <= 0) return;
  process::kill_and_reap(pid_);
  pid_ = -1;
}

result<void> ssh_host::restart() {
  kill();
  return launch();
}

ssh_host::~ssh_host() {
  kill();
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

fs::path ssh_host::host_path(const std::string& remote) const { return dir_ / fs::path(remote).relative_path(); }

std::string ssh_host::log() const { return read_file(dir_ / "sshd.log"); }

}  // namespace tether::e2e
