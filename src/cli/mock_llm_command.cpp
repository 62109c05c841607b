// `tether mock-llm`: runs mock::server in the foreground. Prints exactly one
// line on stdout once bound ("mock-llm listening on http://HOST:PORT"), so a
// parent process can wait for it and read the port; logs go to stderr.
#include <csignal>
#include <cstdio>
#include <string>

#include <fmt/format.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include "cli/commands.h"
#include "mock/server.h"

namespace tether::cli {

namespace {

struct mock_llm_args {
  std::string listen = "127.0.0.1:0";
  std::string record;
  std::size_t max_kept_bytes = mock::server_options{}.max_kept_bytes;
};

int run_mock_llm(const mock_llm_args& args) {
  mock::server_options options;
  options.listen = args.listen;
  if (!args.record.empty()) options.record_file = args.record;
  options.max_kept_bytes = args.max_kept_bytes;
  mock::server server(options);

  // Signals are caught before the server starts, so a signal sent right after
  // the "listening" line is never lost.
  boost::asio::io_context io;
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  if (auto r = server.start(); !r) {
    fmt::print(stderr, "tether mock-llm: {}\n", r.error().describe());
    return 2;
  }
  fmt::print("mock-llm listening on {}\n", server.base_url());
  std::fflush(stdout);
  signals.async_wait([](const boost::system::error_code&, int) {});
  io.run();
  server.stop();
  return 0;
}

}  // namespace

void add_mock_llm_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<mock_llm_args>();
  auto* cmd = app.add_subcommand("mock-llm", "Serve the scripted model (OpenAI Chat/Responses, Anthropic Messages)");
  cmd->add_option("--listen", args->listen, "HOST:PORT to listen on (port 0 picks a free one)")->capture_default_str();
  cmd->add_option("--record", args->record, "append every model request to FILE as one JSON line");
  cmd->add_option("--max-kept-bytes", args->max_kept_bytes,
                  "memory for the requests /_mock/requests returns (the newest within it; --record keeps all)")
      ->capture_default_str();
  cmd->callback([args, &exit_code] { exit_code = run_mock_llm(*args); });
}

}  // namespace tether::cli
