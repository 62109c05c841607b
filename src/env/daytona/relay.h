// The local end of a command in a Daytona sandbox: what a Daytona lease's
// spawner starts (`tether env-relay daytona …`), so that the runtimes see a
// local child with pipes like any other.
//
//   tether env-relay daytona --api-url URL --toolbox-url URL --sandbox ID
//                            --session NAME --command LINE
//   (the API key in $TETHER_DAYTONA_KEY, never on the command line)
//
// It opens the session, starts LINE there without waiting (runAsync),
// copies what it reads on stdin to the command's input, and polls the
// command's output (every 50 ms) onto stdout and stderr, apart; once the
// command has an exit code, the rest of its output follows and the relay
// exits with that code. The sandbox gone or unreachable: a line on stderr
// and exit 255 (the journal still knows the command, lease::commands()).
// Limits: Daytona has no end-of-input for a command, so a command that
// reads its stdin to the end never sees it (spawn such a one with stdin
// null: the line then reads /dev/null); each poll reads the whole output
// so far.
#pragma once

#include <string>

namespace tether::env::daytona {

struct relay_args {
  std::string api_url;
  std::string toolbox_url;
  std::string sandbox;
  std::string session;
  std::string command;
  std::string api_key;
};

// Runs the relay; its exit code.
int run_relay(const relay_args& a);

}  // namespace tether::env::daytona
