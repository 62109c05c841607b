// A real OpenSSH server on this machine, for the qualification's `ssh`
// environment and the SSH environment's tests: Debian's sshd, run inside
// bubblewrap with its own root (the host's /usr read-only, its own /etc with
// a user `agent`, its own /home, /tmp and /run), its own PID, IPC and UTS
// namespaces, on a loopback address 127.0.0.N (N random, 2-254) and a free
// port. Fresh host and user keys each time. Paths inside differ from the
// host's, so a workspace sync is a real transfer. Needs root (bubblewrap
// gives sshd the capabilities it needs to change to `agent`).
//
//   auto host = e2e::ssh_host::start({.read_only = {{agents, agents.string()}}});
//   ASSERT_TRUE(host) << host.error().message;
//   (*host)->address(), (*host)->port(), (*host)->identity_file(), (*host)->known_hosts()
//   (*host)->kill();                              // SIGKILL: the server and every session die
//   (*host)->restart();                           // the same keys, address and port
//
// Faults: kill() (sshd and its sessions, as a crashed host), a small tmpfs
// at /home/agent/small (small_disk_bytes) for a full remote disk, and
// wrong_known_hosts() for a host key that does not match.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "util/result.h"

namespace tether::e2e {

struct ssh_host_options {
  std::size_t small_disk_bytes = 0;  // > 0: a tmpfs of that size at /home/agent/small
  // More of this machine seen inside, read-only: (path here, path inside),
  // e.g. the agent programs and `tether` for turns run there.
  std::vector<std::pair<std::filesystem::path, std::string>> read_only;
};

class ssh_host {
 public:
  static result<std::unique_ptr<ssh_host>> start(ssh_host_options o = {});
  virtual ~ssh_host();
  ssh_host(const ssh_host&) = delete;
  ssh_host& operator=(const ssh_host&) = delete;

  // SIGKILL to the server's namespace: every session dies with it.
  void kill();
  // Starts it again (after kill()) with the same keys, address and port.
  result<void> restart();

  [[nodiscard]] const std::string& address() const { return address_; }
  [[nodiscard]] int port() const { return port_; }
  [[nodiscard]] std::string user() const { return "agent"; }
  // The client's key and a known_hosts file holding this server's key.
  [[nodiscard]] std::filesystem::path identity_file() const { return dir_ / "client/id"; }
  [[nodiscard]] std::filesystem::path known_hosts() const { return dir_ / "client/known_hosts"; }
  // A known_hosts file with another key for this address.
  [[nodiscard]] std::filesystem::path wrong_known_hosts() const { return dir_ / "client/wrong_known_hosts"; }
  // Where a path under /home inside is on this machine.
  [[nodiscard]] std::filesystem::path host_path(const std::string& remote) const;
  // This server's directory here (keys, its root's /etc and /home, its log).
  [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }
  [[nodiscard]] std::string log() const;

 protected:
  ssh_host() = default;
  // Makes the directory, the keys and the configuration, and starts sshd.
  result<void> open(ssh_host_options o);

 private:
  result<void> launch();

  ssh_host_options o_;
  std::filesystem::path dir_;
  std::string address_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace tether::e2e
