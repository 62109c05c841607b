// `tether run`: one turn of a new session, embedded (no server): opens the
// store in the data directory, runs the native runtime, prints the
// transcript and where the data lives. With no --base-url the built-in
// scripted model runs in-process on a loopback port, and the command says so.
#include <sys/stat.h>

#include <filesystem>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json.hpp>

#include "cli/commands.h"
#include "cli/printer.h"
#include "node/errors.h"
#include "node/node.h"
#include "store/errors.h"
#include "runtime/native/native_runtime.h"

namespace tether::cli {

namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;

// Empty strings and 0 mean "from the profile".
struct run_args {
  std::string config;
  std::string profile = "default";
  std::string data;
  std::string workspace;
  std::string provider;
  std::string base_url;
  std::string model;
  std::string api_key_env;
  int max_steps = 0;
  std::vector<std::string> prompt;
};

asio::awaitable<void> follow(std::shared_ptr<store::event_tail> tail, std::shared_ptr<live_printer> printer) {
  while (!printer->finished()) {
    auto items = co_await tail->next();
    if (!items) co_return;
    for (const auto& item : *items) printer->on(item.event);
  }
}

int run_once(const run_args& args) {
  std::string prompt;
  for (const auto& w : args.prompt) prompt += (prompt.empty() ? "" : " ") + w;
  if (prompt.empty()) {
    fmt::print(stderr, "tether run: give a prompt\n");
    return 2;
  }
  ::umask(077);  // the data directory and all it holds are private to the user
  node::node_options o;
  o.config = args.config;
  o.data_dir = args.data;
  o.name = "run";
  o.note = [](const std::string& line) { fmt::print(stderr, "{}\n", line); };
  // Only the chosen profile runs, with the command line's overrides.
  o.only_profile = args.profile;
  o.adjust = [&args](config::profile& prof) -> result<void> {
    if (!args.provider.empty()) {
      const auto api = runtime::native::parse_wire_api(args.provider);
      if (!api)
        return make_error(util_errc::invalid_argument,
                          "unknown provider '" + args.provider + "' (openai-chat, openai-responses, anthropic)");
      prof.provider = *api;
    }
    if (!args.base_url.empty()) prof.base_url = args.base_url;
    if (!args.model.empty()) prof.model = args.model;
    if (!args.api_key_env.empty()) prof.api_key_env = args.api_key_env;
    if (args.max_steps > 0) prof.max_steps = args.max_steps;
    return ok();
  };
  auto opened = node::node::open(o);
  if (!opened) {
    fmt::print(stderr, "tether run: {}\n", opened.error().describe());
    if (opened.error() == node::node_errc::data_dir_locked) return exit_data_dir_locked;
    return opened.error() == store::store_errc::damaged ? exit_damaged_store : exit_usage;
  }
  auto& io = **opened;
  auto& service = io.service();
  auto* store = &io.store();
  const fs::path data = io.data_dir();
  int code = 0;
  {
    if (auto r = io.run(service.start()); !r) {
      fmt::print(stderr, "tether run: {}\n", r.error().describe());
      return 1;
    }
    session::create_request create;
    create.profile = args.profile == "default" ? std::string() : args.profile;
    if (!args.workspace.empty()) create.workspace = fs::absolute(args.workspace).string();
    auto created = io.run(service.create_session(create));
    if (!created) {
      fmt::print(stderr, "tether run: {}\n", created.error().describe());
      return 1;
    }
    const auto s = created->id;
    auto printer = std::make_shared<live_printer>();
    std::shared_ptr<store::event_tail> tail = store->tail(s, event_seq{0});
    auto followed = asio::co_spawn(io.executor(), follow(tail, printer), asio::use_future);
    session::input_request in;
    in.prompt = prompt;
    // Ctrl-C (or SIGTERM) stops the turn the way `stop` does: the run
    // finishes interrupted, its data stays, and the command exits 130.
    asio::signal_set signals(io.executor(), SIGINT, SIGTERM);
    bool interrupted = false;
    signals.async_wait([&service, &interrupted, s, ex = io.executor()](const boost::system::error_code& ec, int) {
      if (ec) return;
      interrupted = true;
      asio::co_spawn(ex, service.interrupt(s), asio::detached);
    });
    auto admitted = io.run(service.admit(s, in));
    if (!admitted) {
      fmt::print(stderr, "tether run: {}\n", admitted.error().describe());
      tail->close();
      followed.get();
      signals.cancel();
      return 2;
    }
    io.run(service.idle(s));
    // The drain is over, so everything is recorded; a run that ended without
    // an execution.finished (it could not start) must not wait forever.
    if (followed.wait_for(std::chrono::seconds(2)) != std::future_status::ready) tail->close();
    followed.get();
    signals.cancel();
    auto exes = io.run(store->list_executions(s));
    if (exes && !exes->empty() && exes->back().outcome) {
      const auto outcome = *exes->back().outcome;
      code = outcome == model::outcome::succeeded ? 0 : outcome == model::outcome::waiting ? 3 : 1;
    }
    if (interrupted) code = 130;
    const std::string workspace =
        args.workspace.empty() ? (data / "workspaces" / s.str()).string() : fs::absolute(args.workspace).string();
    fmt::print("session {}\ndata: {}\nworkspace: {}\n", s.str(), data.string(), workspace);
  }
  io.close();
  return code;
}

}  // namespace

void add_run_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<run_args>();
  auto* cmd = app.add_subcommand("run", "Run one turn of a new session here, without a server, and print it");
  cmd->add_option("--config", args->config, "the TOML configuration (default: $TETHER_CONFIG, else built-in defaults)");
  cmd->add_option("--profile", args->profile, "the profile to run")->capture_default_str();
  cmd->add_option("--data", args->data, "data directory (default: the config's data_dir, else ./tether-data)");
  cmd->add_option("--workspace", args->workspace,
                  "the agent's working directory (default: one per session under --data)");
  cmd->add_option("--provider", args->provider, "override: openai-chat | openai-responses | anthropic");
  cmd->add_option("--base-url", args->base_url, "override: the provider's API base, e.g. https://api.openai.com/v1");
  cmd->add_option("--model", args->model, "override: the model name");
  cmd->add_option("--api-key-env", args->api_key_env, "override: the environment variable holding the API key");
  cmd->add_option("--max-steps", args->max_steps, "override: model requests per turn at most");
  cmd->add_option("prompt", args->prompt, "what to ask (the words are joined with spaces)")->required();
  cmd->callback([args, &exit_code] { exit_code = run_once(*args); });
}

}  // namespace tether::cli
