// `tether`: the command-line entry point. Subcommands live in their own
// files (commands.h); this only wires them, answers `--version` and
// `version`, and names the nearest verb for one it does not know.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/version.h"
#include "util/log.h"

namespace {

// Edit distance (insertions, deletions, substitutions, adjacent swaps).
std::size_t distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

bool known(const CLI::App& app, std::string_view word) {
  const auto subs = app.get_subcommands({});
  return std::any_of(subs.begin(), subs.end(), [&](const CLI::App* s) { return s->check_name(std::string(word)); });
}

// The verb `word` is closest to, when it is close enough to be a typo.
std::string nearest(const CLI::App& app, std::string_view word) {
  std::string best;
  std::size_t best_d = std::string::npos;
  for (const auto* sub : app.get_subcommands({})) {
    const auto d = distance(word, sub->get_name());
    if (d < best_d) {
      best_d = d;
      best = sub->get_name();
    }
  }
  return best_d <= std::max<std::size_t>(2, word.size() / 3) ? best : std::string();
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);  // a client closing mid-write is an error value, not a death
  tether::setup_logging("info");
  CLI::App app{"tether: a durable runner for coding agents"};
  app.set_version_flag("--version", tether::cli::version_line(), "Print the version and exit");
  app.require_subcommand(1);
  int exit_code = 0;
  tether::cli::add_mock_llm_command(app, exit_code);
  tether::cli::add_run_command(app, exit_code);
  tether::cli::add_client_commands(app, exit_code);
  tether::cli::add_task_commands(app, exit_code);
  tether::cli::add_chat_command(app, exit_code);
  tether::cli::add_doctor_command(app, exit_code);
  tether::cli::add_serve_command(app, exit_code);
  tether::cli::add_e2e_command(app, exit_code);
  tether::cli::add_mcp_command(app, exit_code);
  tether::cli::add_relay_forward_command(app, exit_code);
  tether::cli::add_env_relay_command(app, exit_code);
  app.add_subcommand("version", "Print the version and the revision it was built from")->callback([] {
    std::printf("%s\n", tether::cli::version_line().c_str());
  });
  tether::cli::add_completion_command(app, exit_code);
  if (argc > 1 && argv[1][0] != '-' && !known(app, argv[1])) {
    const std::string word = argv[1];
    const auto guess = nearest(app, word);
    std::fprintf(stderr, "tether: unknown command '%s'%s\nRun tether --help for the list of commands.\n", word.c_str(),
                 guess.empty() ? "" : (" (did you mean " + guess + "?)").c_str());
    return 2;
  }
  try {
    app.parse(argc, argv);  // runs the chosen subcommand's callback
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // --help and --version are success; any other usage error is 2
  }
  return exit_code;
}
