// The SSH environment's tests' sshd: e2e::ssh_host (a real OpenSSH server in
// its own namespaces, e2e/run/ssh_host.h) with the options that reach it.
//
//   auto server = test::sshd::start();            // result<unique_ptr<sshd>>
//   ASSERT_TRUE(server) << server.error().describe();
//   auto env = env::ssh::make_environment((*server)->options());
#pragma once

#include <memory>
#include <string>

#include "e2e/run/ssh_host.h"
#include "env/ssh/ssh.h"
#include "util/result.h"

namespace tether::test {

using sshd_options = e2e::ssh_host_options;

class sshd : public e2e::ssh_host {
 public:
  static result<std::unique_ptr<sshd>> start(sshd_options o = {});

  // Options that reach it as `agent`, leases under remote_root (control
  // sockets under this server's directory).
  [[nodiscard]] env::ssh::ssh_options options(const std::string& remote_root = "/home/agent/leases") const;

 private:
  sshd() = default;
};

}  // namespace tether::test
