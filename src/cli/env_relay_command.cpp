// `tether env-relay daytona …` (hidden): the local end of a command that a
// Daytona lease runs in its sandbox (env/daytona/relay.h). The API key comes
// in $TETHER_DAYTONA_KEY, never on the command line.
#include <cstdlib>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "env/daytona/relay.h"

namespace tether::cli {

void add_env_relay_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("env-relay", "The local end of a command in a remote environment");
  cmd->group("");  // not for people: a lease's spawner starts it
  auto* daytona = cmd->add_subcommand("daytona", "A Daytona session command: stdin to its input, its output here");
  auto a = std::make_shared<env::daytona::relay_args>();
  daytona->add_option("--api-url", a->api_url, "Daytona's API URL")->required();
  daytona->add_option("--toolbox-url", a->toolbox_url, "the sandbox's toolboxProxyUrl")->required();
  daytona->add_option("--sandbox", a->sandbox, "the sandbox's id")->required();
  daytona->add_option("--session", a->session, "the session to run it in")->required();
  daytona->add_option("--command", a->command, "the shell line to run")->required();
  daytona->callback([&exit_code, a] {
    const char* key = std::getenv("TETHER_DAYTONA_KEY");
    a->api_key = key != nullptr ? key : "";
    exit_code = env::daytona::run_relay(*a);
  });
  cmd->require_subcommand(1);
}

}  // namespace tether::cli
