#include "support/sshd.h"

#include <chrono>
#include <utility>

namespace tether::test {

result<std::unique_ptr<sshd>> sshd::start(sshd_options o) {
  std::unique_ptr<sshd> s(new sshd());
  if (auto r = s->open(std::move(o)); !r) return r.error();
  return s;
}

env::ssh::ssh_options sshd::options(const std::string& remote_root) const {
  env::ssh::ssh_options o;
  o.name = "test-ssh";
  o.host = address();
  o.port = port();
  o.user = user();
  o.identity_file = identity_file();
  o.known_hosts = known_hosts();
  o.remote_root = remote_root;
  o.control_dir = dir() / "c";
  o.connect_timeout = std::chrono::seconds(10);
  return o;
}

}  // namespace tether::test
