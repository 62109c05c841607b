// The SSH environment kind: leases are directories on a host reached with
// OpenSSH's own client.
//
//   env::ssh::ssh_options o;
//   o.name = "build-box"; o.host = "10.0.0.7"; o.user = "agent";
//   o.identity_file = "/etc/tether/id_ed25519"; o.known_hosts = "/etc/tether/known_hosts";
//   o.remote_root = "/srv/tether";
//   auto env = env::ssh::make_environment(o);   // result<unique_ptr<environment>>
//
// A lease is REMOTE_ROOT/<provider_name(key)>/ on the host: its workspace/
// and .tether/ (the command journal, labels, forwarded sockets). Acquiring a
// key whose directory exists resumes it; release(stop) keeps it, destroy
// removes it.
//
// Connections: one ControlMaster per lease (`ssh -f -N -M`, persisting
// control_persist after its last use), its socket under control_dir named
// by a digest of user, host, port and lease, so every command and transfer
// of the lease shares one authenticated connection, and a Tether restarted
// within control_persist finds it again. A command whose master is gone
// connects on its own.
//
// Security: the host key is always checked against known_hosts
// (StrictHostKeyChecking=yes, no global file, BatchMode: nothing is asked or
// learnt); only identity_file is offered; the user's ~/.ssh/config is not
// read (-F /dev/null), so nothing outside these options changes where ssh
// connects or what it runs. The local ssh gets PATH, HOME and LC_ALL=C only.
// Host and user may not start with '-'. Remote programs get exactly the
// spawn's environment (plus remote_path as PATH when it names none).
//
// Errors: env_errc::refused (host key mismatch or unknown, key not
// accepted), unreachable (no connection, dropped, timed out), no_space (the
// remote disk is full: the message gives `df` of the lease), failed (a
// remote command failed: its output), invalid (options).
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "env/environment.h"

namespace tether::env::ssh {

struct ssh_options {
  std::string name;                          // [environments.NAME]
  std::string host;                          // a name or an address
  int port = 22;
  std::string user;
  std::filesystem::path identity_file;       // a private key, readable only by its owner
  std::filesystem::path known_hosts;         // the host's key, as ssh-keyscan prints it
  std::string remote_root;                   // absolute: where the leases' directories go
  std::string remote_path = "/usr/local/bin:/usr/bin:/bin";  // PATH for a command that names none
  std::filesystem::path control_dir = "/tmp/tether-ssh";     // created 0700; keep the path short (sockets ≤ 107 bytes)
  std::filesystem::path program = "/usr/bin/ssh";
  std::chrono::seconds connect_timeout{10};
  std::chrono::seconds control_persist{300};
  std::chrono::milliseconds command_limit{60'000};    // housekeeping commands
  std::chrono::milliseconds transfer_limit{600'000};  // push and pull
};

// Checks the options (not the host: the first acquire connects).
result<std::unique_ptr<environment>> make_environment(ssh_options o);

}  // namespace tether::env::ssh
