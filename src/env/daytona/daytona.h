// The Daytona environment kind: a lease is one Daytona sandbox per key,
// named provider_name(key) and labelled tether-key=KEY, so a retried or
// unanswered create finds the sandbox it made instead of making another.
//
//   env::daytona::daytona_options o;
//   o.name = "cloud"; o.api_url = "https://app.daytona.io/api"; o.api_key = getenv(…);
//   o.relay_program = "/usr/bin/tether";     // runs `tether env-relay daytona` for each command
//   auto env = env::daytona::make_environment(o);
//
// Acquire: the sandbox of that name, started again when it was stopped or
// archived (resumed); else created, with the quota-safe lifecycle of
// create_request (created, or replaced when the request names a previous
// provider id); a create that fails for want of an answer is followed by a
// lookup by name, which adopts the sandbox it may have made. Release: stop
// (kept: its files stay for the next acquire) or delete.
//
// Commands run as Daytona session commands, one session each
// ("tether-<command id>"), journaled as the SSH kind journals them (the same
// shell line, env/ssh/command.h): the local child a spawn returns is a relay
// (`RELAY env-relay daytona …`, relay.h) that starts the command, copies its
// stdin to the command's input and its output to stdout and stderr, and
// exits with its exit code.
//
// The workspace is /home/daytona/workspace; push and pull move it as one
// tar through the toolbox's file routes. No socket forwarding (a sandbox
// reaches Tether over TCP, not a Unix socket): forward_socket is invalid,
// and the tool bridge is reached through its TCP port (agent/placed.h).
// A port is reached at reach_host, which the account's network must route
// to this machine (forward_port is invalid without one).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "env/environment.h"

namespace tether::env::daytona {

struct daytona_options {
  std::string name;                    // [environments.NAME]
  std::string api_url = "https://app.daytona.io/api";
  std::string api_key_env = "DAYTONA_API_KEY";  // the variable that holds the key (never the key itself)
  std::string api_key;                 // read from api_key_env when the environment is made
  std::string target;                  // region; "" for the account's default
  std::string snapshot;
  std::string image;
  std::int64_t cpu = 0, memory = 0, disk = 0;
  std::int64_t auto_stop = 15, auto_archive = 60, auto_delete = 7 * 24 * 60;  // minutes
  std::string ca_file;
  // The name or address at which a sandbox reaches this machine (its
  // forward_port answers REACH_HOST:PORT); "" when none can: a turn that
  // needs the model relay there fails with that reason.
  std::string reach_host;
  std::filesystem::path relay_program;  // the tether binary
  std::chrono::milliseconds start_timeout{120'000};  // for a sandbox to be started
};

result<std::unique_ptr<environment>> make_environment(daytona_options o);

}  // namespace tether::env::daytona
