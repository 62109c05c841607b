// `tether`: the command-line entry point. Subcommands live in their own
// files (commands.h); this only wires them.
#include <csignal>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "util/log.h"

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);  // a client closing mid-write is an error value, not a death
  tether::setup_logging("info");
  CLI::App app{"tether: a durable runner for coding agents"};
  app.require_subcommand(1);
  int exit_code = 0;
  tether::cli::add_mock_llm_command(app, exit_code);
  tether::cli::add_run_command(app, exit_code);
  tether::cli::add_client_commands(app, exit_code);
  tether::cli::add_chat_command(app, exit_code);
  tether::cli::add_doctor_command(app, exit_code);
  tether::cli::add_serve_command(app, exit_code);
  tether::cli::add_e2e_command(app, exit_code);
  tether::cli::add_mcp_command(app, exit_code);
  try {
    app.parse(argc, argv);  // runs the chosen subcommand's callback
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // --help is success; any other usage error is 2
  }
  return exit_code;
}
