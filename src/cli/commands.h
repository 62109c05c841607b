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

// `tether run [--data DIR] [--provider …] [--base-url URL] PROMPT…`: one turn
// of a new session, embedded; prints the transcript and where the data
// lives. Exit 0 when the run succeeded, 3 when it waits for an answer, 1 when
// it failed, 2 for bad usage, 130 when Ctrl-C (or SIGTERM) stopped it.
void add_run_command(CLI::App& app, int& exit_code);

}  // namespace tether::cli
