// The subcommands of `tether`. Each add_*_command registers one subcommand
// on the app; when CLI11 selects it, its callback runs the command and stores
// the process exit code in `exit_code` (0 success, 1 failure, 2 bad usage or
// environment, e.g. an address already in use).
#pragma once

#include <CLI/CLI.hpp>

namespace tether::cli {

// `tether mock-llm --listen HOST:PORT [--record FILE]`: the scripted model
// server until SIGINT/SIGTERM.
void add_mock_llm_command(CLI::App& app, int& exit_code);

}  // namespace tether::cli
