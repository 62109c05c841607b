// The subcommands of `tether`. Each add_*_command registers one subcommand
// on the app; when CLI11 selects it, its callback runs the command and stores
// the process exit code in `exit_code`.
//
// Exit codes, the same for every verb:
//   0    success
//   1    the server refused the request, or the run failed / was interrupted
//   2    bad usage or environment (unknown option, bad config)
//   3    the run is waiting for an answer (`tether answer`)
//   4    the server cannot be reached (`tether serve` not running?)
//   5    the data directory is in use by another Tether process (`tether
//        serve` and `tether run` hold theirs exclusively while they run)
//   6    `serve`/`run`: the database is damaged (PRAGMA quick_check at start);
//        the message says how to inspect it and recover
//   7    `serve`: the listen address is in use (another server on the port?)
//   130  interrupted by Ctrl-C (send/chat first ask the session to stop)
//
// The verbs that talk to a running `tether serve` (sessions, show, runs,
// send, attach, stop, reset, answer, events, chat) share these options;
// SESSION is an id, a unique prefix of one, or `last` (session_ref.h):
//   --server URL   default $TETHER_SERVER, else http://127.0.0.1:7420
//   --token T      default $TETHER_TOKEN, else the file <data>/token, where
//                  <data> is --data, else the config's data_dir
//                  (--config / $TETHER_CONFIG), else config::default_data_dir()
//   --json         the server's JSON instead of text (streams: one event
//                  per line), for scripts
#pragma once

#include <CLI/CLI.hpp>

namespace tether::cli {

inline constexpr int exit_ok = 0;
inline constexpr int exit_failed = 1;
inline constexpr int exit_usage = 2;
inline constexpr int exit_waiting = 3;
inline constexpr int exit_unreachable = 4;
inline constexpr int exit_data_dir_locked = 5;
inline constexpr int exit_damaged_store = 6;
inline constexpr int exit_address_in_use = 7;
inline constexpr int exit_interrupted = 130;

// `tether mock-llm --listen HOST:PORT [--record FILE] [--tls [--tls-cert FILE
// --tls-key FILE] [--tls-cert-out FILE]]`: the scripted model server until
// SIGINT/SIGTERM, over HTTPS with --tls (mock_llm_command.cpp).
void add_mock_llm_command(CLI::App& app, int& exit_code);

// `tether run [--continue | --session S [--answer …]] [--json] [--provider …]
// [PROMPT… | -]`: one turn, embedded, in the current directory (a new
// session, or one more of S); prints the transcript and where the data
// lives (run_command.cpp). Exit 0 when the run succeeded, 3 when it waits
// for an answer, 1 when it failed or no session matched, 2 for bad usage, 5
// when the data directory is in use, 6 when the database is damaged, 130
// when Ctrl-C (or SIGTERM) stopped it.
void add_run_command(CLI::App& app, int& exit_code);

// The API client verbs (client_commands.cpp):
//   tether new [--title T] [--profile P] [--workspace DIR] [--id ID]
//                                        creates a session, prints its id
//   tether sessions                      the sessions, most recent first
//   tether show SESSION                  the session and its transcript
//   tether runs SESSION                  its runs: outcome, duration, tokens, cost, model
//   tether attach SESSION                follows the running turn from its start
//   tether send SESSION TEXT… [--queue] [--no-resume] [--detach]
//                                        admits an input and, unless
//                                        --detach, prints the turn live;
//                                        exits with the run's outcome
//                                        (0, 1, 3, or 130 after Ctrl-C)
//   tether stop SESSION                  interrupts the running turn
//   tether reset SESSION                 starts a new context generation
//   tether answer INTERACTION OPTION… [--question QID] [--other TEXT] [--detach]
//                                        answers, then prints the rest of the turn like send
//   tether events SESSION [--after N] [--limit M] [--follow]
void add_client_commands(CLI::App& app, int& exit_code);

// The work layer's verbs (task_commands.cpp), with the client verbs' options:
//   tether project new NAME --repo URL[#BRANCH]… [--description D]   prints its id
//   tether project list
//   tether task new TITLE [--description D] [--mode standard|ask|planning]
//        [--status S] [--project P] [--parent T] [--profile P] [--message TEXT]
//                                        prints its id; --message starts it
//   tether task list [--project P] [--status S]
//   tether task show TASK                status, plan, what it waits for, runs, comments
//   tether task send TASK TEXT… [--queue] [--no-resume] [--detach]   like send
//   tether task approve TASK             accepts the plan waiting for approval
//   tether task reject TASK --reason R   rejects it, saying what to change
void add_task_commands(CLI::App& app, int& exit_code);

// `tether chat [SESSION]`: an interactive session (chat_command.cpp).
void add_chat_command(CLI::App& app, int& exit_code);

// `tether doctor`: what is installed and reachable; exit 0 when nothing is
// broken, 1 otherwise (doctor_command.cpp).
void add_doctor_command(CLI::App& app, int& exit_code);

// `tether serve [--data DIR] [--listen HOST:PORT] [--config FILE]`: the HTTP
// API until SIGTERM/SIGINT. Prints "listening on http://HOST:PORT" on stdout
// once it accepts connections. Exit 0 after a signal, 2 for a bad
// configuration, 7 for an address in use, 1 when recovery fails, 6 when the
// database is damaged.
void add_serve_command(CLI::App& app, int& exit_code);

// `tether e2e run|report|list`: the qualification harness (e2e_command.cpp).
// `run` exits 0 only when every selected cell passed, 1 otherwise, 2 for a
// bad definition or selection, 130 after Ctrl-C.
void add_e2e_command(CLI::App& app, int& exit_code);

// `tether completion bash|zsh` and `tether man`: the completion scripts and
// the manual page, made from the verbs' own help (completion_command.cpp).
// Registered last: they describe every verb added before them.
void add_completion_command(CLI::App& app, int& exit_code);

// `tether mcp`: the stdio MCP server an agent program runs for a turn's
// tools (newline-delimited JSON-RPC 2.0 on stdin/stdout, logs on stderr),
// which asks the turn's tool bridge at $TETHER_TOOLS_SOCKET with
// $TETHER_RUN_TOKEN (mcp_command.cpp). Exit 0 at EOF of stdin, 2 when either
// variable is missing, 1 when stdout is gone.
void add_mcp_command(CLI::App& app, int& exit_code);

// `tether relay-forward --port P --socket S -- PROGRAM…` (hidden): inside an
// agent's relay-only sandbox, 127.0.0.1:P to the model relay's socket, then
// PROGRAM (relay_forward_command.cpp).
void add_relay_forward_command(CLI::App& app, int& exit_code);

// `tether env-relay daytona …` (hidden): the local end of a command in a
// Daytona sandbox (env/daytona/relay.h; env_relay_command.cpp).
void add_env_relay_command(CLI::App& app, int& exit_code);

}  // namespace tether::cli
