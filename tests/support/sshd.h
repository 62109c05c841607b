// A real OpenSSH server for the SSH environment's tests: Debian's sshd, run
// inside bubblewrap with its own root (the host's /usr read-only, its own
// /etc with a user `agent`, its own /home, /tmp and /run), its own PID, IPC
// and UTS namespaces, on a loopback address 127.0.0.N (N random, 2-254) and
// a free port. Fresh host and user keys each time. Paths inside differ from
// the host's, so a workspace sync is a real transfer.
//
//   auto server = test::sshd::start();            // result<unique_ptr<sshd>>
//   ASSERT_TRUE(server) << server.error().describe();
//   auto env = env::ssh::make_environment((*server)->options());
//   (*server)->kill();                              // SIGKILL: the server and every session die
//   (*server)->restart();                           // the same keys, address and port
//
// Faults: kill() (sshd and its sessions, as a crashed host), a small tmpfs
// at /home/agent/small (small_disk) for a full remote disk, and
// wrong_known_hosts() for a host key that does not match.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "env/ssh/ssh.h"
#include "util/result.h"

namespace tether::test {

struct sshd_options {
  std::size_t small_disk_bytes = 0;  // > 0: a tmpfs of that size at /home/agent/small
  // More of this machine seen inside, read-only: (path here, path inside),
  // e.g. the agent programs and `tether` for turns run there.
  std::vector<std::pair<std::filesystem::path, std::string>> read_only;
};

class sshd {
 public:
  static result<std::unique_ptr<sshd>> start(sshd_options o = {});
  ~sshd();
  sshd(const sshd&) = delete;
  sshd& operator=(const sshd&) = delete;

  // SIGKILL to the server's namespace: every session dies with it.
  void kill();
  // Starts it again (after kill()) with the same keys, address and port.
  result<void> restart();

  // Options that reach it as `agent`, leases under remote_root (control
  // sockets under this server's directory).
  [[nodiscard]] env::ssh::ssh_options options(const std::string& remote_root = "/home/agent/leases") const;
  // A known_hosts file with another key for this address.
  [[nodiscard]] std::filesystem::path wrong_known_hosts() const;
  // Where a path under /home inside is on this machine.
  [[nodiscard]] std::filesystem::path host_path(const std::string& remote) const;

  [[nodiscard]] const std::string& address() const { return address_; }
  [[nodiscard]] int port() const { return port_; }
  [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }
  [[nodiscard]] std::string log() const;

 private:
  sshd() = default;
  result<void> launch();

  sshd_options o_;
  std::filesystem::path dir_;
  std::string address_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace tether::test
