// `tether run`: one turn, embedded (no server), the way `codex exec` and
// `claude -p` work: in the current directory, with the data in the user's
// data directory. It opens the store, runs the profile's runtime, prints the
// turn as it happens (or, with --json, its events one per line) and where
// the data lives. A new session unless --continue (the most recently active
// one) or --session ID names one; --answer replies to the question a run
// stopped on. The prompt is the words given, or stdin when it is `-` or not
// a terminal. The built-in scripted model answers only when no model is
// configured or --provider scripted says so; stderr names the model.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json.hpp>

#include "api/workspace.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/printer.h"
#include "cli/question.h"
#include "cli/session_ref.h"
#include "node/errors.h"
#include "node/node.h"
#include "runtime/native/native_runtime.h"
#include "runtime/native/settings.h"
#include "store/errors.h"
#include "util/log.h"

namespace tether::cli {

namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
namespace json = boost::json;

constexpr std::size_t max_stdin_prompt = 256U * 1024U;  // session_options::max_prompt_bytes

// Empty strings and 0 mean "from the profile".
struct run_args {
  std::string config;
  std::string profile;  // empty: `default`, or the continued session's
  std::string data;
  std::string workspace;
  std::string provider;
  std::string base_url;
  std::string model;
  std::string api_key_env;
  int max_steps = 0;
  bool json = false;
  bool continue_last = false;
  std::string session;
  std::vector<std::string> answer;
  std::vector<std::string> prompt;
};

// The prompt: the words, or all of stdin for `-` (or no words and a stdin
// that is not a terminal).
result<std::string> read_prompt(const run_args& args) {
  const bool from_stdin = (args.prompt.size() == 1 && args.prompt[0] == "-") ||
                          (args.prompt.empty() && args.answer.empty() && ::isatty(STDIN_FILENO) == 0);
  if (!from_stdin) {
    std::string prompt;
    for (const auto& w : args.prompt) prompt += (prompt.empty() ? "" : " ") + w;
    return prompt;
  }
  std::string text;
  char buf[65536];
  for (;;) {
    const auto n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return make_error(util_errc::invalid_argument, std::string("reading stdin: ") + std::strerror(errno));
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > max_stdin_prompt)
      return make_error(util_errc::invalid_argument,
                        fmt::format("the prompt on stdin is larger than {} KiB", max_stdin_prompt / 1024));
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

// The command line's overrides of the profile's model.
result<void> adjust_profile(const run_args& args, config::profile& prof) {
  if (!args.api_key_env.empty()) prof.api_key_env = args.api_key_env;
  // A profile of another kind keeps its own settings; the native kind's
  // (or none yet: the default profile) take --max-steps and --provider.
  runtime::native::native_settings ignored;
  const bool native_kind =
      !prof.settings.has_value() || std::any_cast<runtime::native::native_settings>(&prof.settings) != nullptr;
  auto& native = native_kind ? prof.kind_settings<runtime::native::native_settings>() : ignored;
  if (args.max_steps > 0) native.max_steps = args.max_steps;
  if (!args.provider.empty()) {
    auto api = runtime::native::parse_provider(args.provider);
    if (!api) return make_error(util_errc::invalid_argument, "--provider: " + api.error().message);
    if (!*api) {  // the built-in scripted model
      if (!args.base_url.empty())
        return make_error(util_errc::invalid_argument, "--provider scripted takes no --base-url");
      prof.scripted_model = true;
      prof.base_url.clear();
      if (!args.model.empty()) prof.model = args.model;
      return ok();
    }
    if (native.provider != **api && args.base_url.empty() && !prof.scripted()) prof.base_url.clear();  // its own URL
    native.provider = **api;
  }
  if (!args.base_url.empty()) prof.base_url = args.base_url;
  if (!args.model.empty()) prof.model = args.model;
  if (args.provider.empty() && args.base_url.empty() && args.model.empty()) return ok();
  if (auto real = config::use_provider(prof); !real)
    return make_error(util_errc::invalid_argument, "--model: " + real.error().message);
  return ok();
}

// The exit code for a node that did not open.
int open_failed(const error& e) {
  fmt::print(stderr, "tether run: {}\n", e.message);
  if (e == node::node_errc::data_dir_locked) return exit_data_dir_locked;
  return e == store::store_errc::damaged ? exit_damaged_store : exit_usage;
}

result<std::unique_ptr<node::node>> open_node(const run_args& args, const std::string& profile) {
  node::node_options o;
  o.config = args.config;
  o.data_dir = args.data;
  o.name = "run";
  o.only_profile = profile;  // only the profile used runs, with the command line's overrides
  o.adjust = [&args](config::profile& prof) { return adjust_profile(args, prof); };
  return node::node::open(o);
}

// Prints the turn's events until its execution.finished (or the tail's end).
// Runs on a strand with tick(), which shares the printer.
asio::awaitable<void> follow(std::shared_ptr<store::event_tail> tail, std::shared_ptr<live_printer> printer,
                             bool as_json, std::shared_ptr<bool> over) {
  while (!printer->finished()) {
    auto items = co_await tail->next();
    if (!items) break;
    for (const auto& item : *items) {
      if (as_json) print_json_line(model::to_json(item.event));
      printer->on(item.event);
    }
  }
  *over = true;
}

// The running tool's elapsed time, while follow() prints.
asio::awaitable<void> tick(std::shared_ptr<live_printer> printer, std::shared_ptr<bool> over) {
  asio::steady_timer t(co_await asio::this_coro::executor);
  while (!*over) {
    printer->tick(wall_clock_ms());
    t.expires_after(std::chrono::milliseconds(200));
    co_await t.async_wait(asio::use_awaitable);
  }
}

// The session --continue or --session names in this data directory.
result<store::session_row> find_session(node::node& io, std::string_view given) {
  auto id = resolve_session_with(
      given, [&io](const std::string& prefix, std::size_t limit) -> result<std::vector<std::string>> {
        auto listed = io.run(io.store().list_overviews(limit, prefix));
        if (!listed) return listed.error();
        std::vector<std::string> ids;
        for (const auto& o : *listed) ids.push_back(o.session.id.str());
        return ids;
      });
  if (!id) return id.error();
  return io.run(io.store().get_session(session_id::trusted(*id)));
}

// The body that answers the session's pending question with the words of
// --answer: option numbers or ids, else the words as the answer's own text.
result<std::pair<interaction_id, json::value>> answer_for(node::node& io, const session_id& s,
                                                          const std::vector<std::string>& words) {
  auto snap = io.run(io.store().snapshot(s));
  if (!snap) return snap.error();
  if (snap->pending_interactions.empty())
    return make_error(util_errc::invalid_argument, "session " + s.str() + " has no question waiting for an answer");
  const auto& pending = snap->pending_interactions.front();
  std::string line;
  for (const auto& w : words) line += (line.empty() ? "" : " ") + w;
  if (auto chosen = answer_from_line(pending.payload, line)) return std::pair{pending.id, std::move(*chosen)};
  answer_choice own;
  own.other_text = line;
  auto built = build_answer(pending.payload, own);
  if (!built) return built.error();
  return std::pair{pending.id, std::move(*built)};
}

int run_once(run_args args) {
  if (args.continue_last && !args.session.empty())
    return usage_error("run: --continue and --session name two sessions");
  if (!args.answer.empty() && args.session.empty() && !args.continue_last)
    return usage_error("run: --answer needs the session it answers (--session ID or --continue)");
  if (!args.answer.empty() && !args.prompt.empty())
    return usage_error("run: give either a prompt or --answer, not both");
  std::string prompt;
  if (args.answer.empty()) {
    auto read = read_prompt(args);
    if (!read) return usage_error("run: " + read.error().message);
    prompt = std::move(*read);
    if (prompt.empty()) return usage_error("run: give a prompt (words, or `-` to read it from stdin)");
  }
  const bool existing = args.continue_last || !args.session.empty();
  if (existing && !args.workspace.empty())
    return usage_error("run: --workspace is for a new session; a continued one keeps its own");
  ::umask(077);  // the data directory and all it holds are private to the user
  // A person reads this terminal: the node's routine notes (the store's
  // check, descriptors) stay out of it; warnings stay in (TETHER_LOG wins).
  setup_logging("warn");

  auto opened = open_node(args, args.profile.empty() ? std::string("default") : args.profile);
  if (!opened) return open_failed(opened.error());
  std::unique_ptr<node::node> io = std::move(*opened);
  std::optional<store::session_row> row;
  if (existing) {
    auto found = find_session(*io, args.continue_last ? "last" : args.session);
    if (!found) return report(found.error());  // 1 when no session matches, 2 when the text is no id
    const std::string its = found->profile.empty() ? std::string("default") : found->profile;
    const std::string opened_with = args.profile.empty() ? std::string("default") : args.profile;
    if (its != opened_with) {
      if (!args.profile.empty())
        return usage_error(fmt::format("run: session {} runs profile {}, not {}", found->id.str(), its, args.profile));
      io->close();
      io.reset();
      auto reopened = open_node(args, its);  // the session's own profile runs it
      if (!reopened) return open_failed(reopened.error());
      io = std::move(*reopened);
    }
    row = std::move(*found);
  }
  auto& service = io->service();
  auto* store = &io->store();
  const fs::path data = io->data_dir();

  fs::path workspace;
  if (!existing) {
    std::error_code ec;
    workspace = args.workspace.empty() ? fs::current_path(ec) : fs::absolute(args.workspace, ec);
    if (ec) return usage_error("run: the workspace: " + ec.message());
    if (!fs::is_directory(workspace))
      return usage_error("run: the workspace " + workspace.string() + " is not a directory");
    if (api::holds_data_dir(workspace, data))
      return usage_error(fmt::format(
          "run: the workspace {} holds Tether's data directory {}, which the agent's tools must not reach; run "
          "in a project directory, or give --workspace or --data",
          workspace.string(), data.string()));
    if (api::in_data_dir(workspace, data))
      return usage_error(fmt::format(
          "run: the workspace {} is inside Tether's data directory {} (other sessions' workspaces, agent homes); "
          "run in a project directory, or give --workspace or --data",
          workspace.string(), data.string()));
  }
  if (auto r = io->run(service.start()); !r) {
    fmt::print(stderr, "tether run: {}\n", r.error().message);
    return exit_failed;
  }
  if (!existing) {
    session::create_request create;
    create.profile = args.profile.empty() || args.profile == "default" ? std::string() : args.profile;
    create.workspace = fs::weakly_canonical(workspace).string();
    auto created = io->run(service.create_session(create));
    if (!created) {
      fmt::print(stderr, "tether run: {}\n", created.error().message);
      return exit_failed;
    }
    row = std::move(*created);
  }
  const session_id s = row->id;
  const std::string profile = row->profile.empty() ? std::string("default") : row->profile;
  if (!args.json) fmt::print(stderr, "model: {} (profile {})\n", io->model_label(profile), profile);
  if (const auto problem = io->profile_problem(profile); !problem.empty()) {
    fmt::print(stderr, "tether run: {}\n", problem);
    return exit_usage;
  }

  // From the session's last event on: a continued session's history is not
  // printed again.
  const event_seq from = row->last_seq;
  const bool status_line = !args.json && ::isatty(STDOUT_FILENO) == 1;
  auto printer =
      std::make_shared<live_printer>(args.json ? output_sink([](std::string_view) {}) : stdout_sink(), status_line);
  std::shared_ptr<store::event_tail> tail = store->tail(s, from);
  const auto strand = asio::make_strand(io->executor());
  auto over = std::make_shared<bool>(false);
  auto followed = asio::co_spawn(strand, follow(tail, printer, args.json, over), asio::use_future);
  std::future<void> ticked;  // only a terminal has a status line to tick
  if (status_line) ticked = asio::co_spawn(strand, tick(printer, over), asio::use_future);
  // Ctrl-C (or SIGTERM) stops the turn the way `stop` does: the run
  // finishes interrupted, its data stays, and the command exits 130.
  asio::signal_set signals(io->executor(), SIGINT, SIGTERM);
  bool interrupted = false;
  signals.async_wait([&service, &interrupted, s, ex = io->executor()](const boost::system::error_code& ec, int) {
    if (ec) return;
    interrupted = true;
    asio::co_spawn(ex, service.interrupt(s), asio::detached);
  });
  auto give_up = [&](const std::string& why, int code) {
    fmt::print(stderr, "tether run: {}\n", why);
    tail->close();
    followed.get();
    if (ticked.valid()) ticked.get();
    signals.cancel();
    return code;
  };
  if (!args.answer.empty()) {
    auto body = answer_for(*io, s, args.answer);
    if (!body) return give_up(body.error().message, exit_usage);
    if (auto a = io->run(service.submit_answer(body->first, std::move(body->second))); !a)
      return give_up(a.error().message, exit_usage);
  } else {
    session::input_request in;
    in.prompt = prompt;
    if (auto admitted = io->run(service.admit(s, in)); !admitted) return give_up(admitted.error().message, exit_usage);
  }
  io->run(service.idle(s));
  // The drain is over, so everything is recorded; a run that ended without
  // an execution.finished (it could not start) must not wait forever.
  if (followed.wait_for(std::chrono::seconds(2)) != std::future_status::ready) tail->close();
  followed.get();
  if (ticked.valid()) ticked.get();
  signals.cancel();
  int code = exit_failed;  // no run finished: it could not start
  auto exes = io->run(store->list_executions(s));
  if (exes && !exes->empty() && exes->back().outcome && exes->back().started_seq.value > from.value) {
    const auto outcome = *exes->back().outcome;
    code = outcome == model::outcome::succeeded ? exit_ok
           : outcome == model::outcome::waiting ? exit_waiting
                                                : exit_failed;
  }
  if (interrupted) code = exit_interrupted;
  if (!args.json) {
    fmt::print("session {}\ndata: {}\nworkspace: {}\n", s.str(), data.string(),
               !row->workspace.empty() ? row->workspace : (data / "workspaces" / s.str()).string());
    if (code == exit_waiting && printer->question())
      fmt::print("answer with: tether run --session {} --answer OPTION\n", s.str());
  }
  io->close();
  return code;
}

}  // namespace

void add_run_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<run_args>();
  auto* cmd = app.add_subcommand("run", "Run one turn here, without a server, and print it (like `codex exec`)");
  cmd->add_option("--config", args->config, "the TOML configuration (default: $TETHER_CONFIG, else built-in defaults)");
  cmd->add_option("--profile", args->profile, "the profile to run (default: `default`, or the continued session's)");
  cmd->add_option("--data", args->data,
                  "data directory (default: the config's data_dir, else $XDG_DATA_HOME/tether, else "
                  "~/.local/share/tether)");
  cmd->add_option("--workspace", args->workspace, "the agent's working directory (default: the current directory)");
  cmd->add_flag("--continue,-c", args->continue_last, "add the turn to the most recently active session");
  cmd->add_option("--session,-s", args->session,
                  "add the turn to this session: its id, a unique prefix of it, or `last`");
  cmd->add_option("--answer", args->answer,
                  "answer the question the session waits on (option numbers or ids, else your own words)");
  cmd->add_flag("--json", args->json, "print the turn's events, one JSON document per line");
  cmd->add_option("--provider", args->provider,
                  "override: openai-chat | openai-responses | anthropic (at its official URL unless --base-url) | "
                  "scripted (the built-in scripted model)");
  cmd->add_option("--base-url", args->base_url, "override: the provider's API base, e.g. https://api.openai.com/v1");
  cmd->add_option("--model", args->model, "override: the model name");
  cmd->add_option("--api-key-env", args->api_key_env, "override: the environment variable holding the API key");
  cmd->add_option("--max-steps", args->max_steps, "override: model requests per turn at most");
  cmd->add_option("prompt", args->prompt, "what to ask (the words are joined; `-` or none with a pipe: stdin)");
  cmd->callback([args, &exit_code] { exit_code = run_once(*args); });
}

}  // namespace tether::cli
