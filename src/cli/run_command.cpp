// `tether run`: one turn of a new session, embedded (no server): opens the
// store in the data directory, runs the native runtime, prints the
// transcript and where the data lives. With no --base-url the built-in
// scripted model runs in-process on a loopback port, and the command says so.
#include <filesystem>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "config/config.h"
#include "mock/server.h"
#include "runtime/native/native_runtime.h"
#include "session/service.h"
#include "store/sqlite/sqlite_store.h"

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

// An io_context on two threads, and a way to wait for a coroutine from main.
class runner {
 public:
  runner() : guard_(io_.get_executor()) {
    for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { io_.run(); });
  }
  ~runner() {
    guard_.reset();
    for (auto& t : threads_) t.join();
  }
  template <class T>
  T run(asio::awaitable<T> a) {
    return asio::co_spawn(io_, std::move(a), asio::use_future).get();
  }
  void run(asio::awaitable<void> a) { asio::co_spawn(io_, std::move(a), asio::use_future).get(); }
  asio::any_io_executor executor() { return io_.get_executor(); }

 private:
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> guard_;
  std::vector<std::thread> threads_;
};

std::string indent(const std::string& text) {
  std::string out = "    ";
  for (const char c : text) {
    out += c;
    if (c == '\n') out += "    ";
  }
  return out;
}

// Prints one turn as it happens: the answer streams in as the model writes
// it, tool calls and results appear as they are recorded.
class live_printer {
 public:
  void on(const store::tail_item& item) {
    const auto& e = item.event;
    if (const auto* d = e.as<model::text_delta>()) {
      if (streamed_.empty()) fmt::print("assistant:\n    ");
      fmt::print("{}", indent_rest(d->text));
      streamed_ += d->text;
    } else if (const auto* a = e.as<model::input_admitted>()) {
      fmt::print("user:\n{}\n", indent(a->prompt));
    } else if (const auto* t = e.as<model::text_ended>()) {
      if (streamed_.empty()) {
        fmt::print("assistant:\n{}\n", indent(t->text));
      } else {
        // Deltas a slow terminal missed are printed from the stored text.
        if (t->text.starts_with(streamed_)) fmt::print("{}", indent_rest(t->text.substr(streamed_.size())));
        fmt::print("\n");
      }
      streamed_.clear();
    } else if (const auto* c = e.as<model::tool_called>()) {
      end_stream();
      fmt::print("tool call {} {}\n", c->tool, boost::json::serialize(c->input));
    } else if (const auto* ok = e.as<model::tool_succeeded>()) {
      fmt::print("tool result:\n{}\n", indent(ok->content));
    } else if (const auto* f = e.as<model::tool_failed>()) {
      fmt::print("tool failed:\n{}\n", indent(f->error));
    } else if (const auto* q = e.as<model::interaction_requested>()) {
      fmt::print("question ({}): {}\n", q->interaction.str(), boost::json::serialize(q->payload));
    } else if (const auto* r = e.as<model::step_retry_scheduled>()) {
      end_stream();
      fmt::print("retry {} scheduled: {}\n", r->attempt, r->error);
    } else if (const auto* sf = e.as<model::step_failed>()) {
      end_stream();
      fmt::print("step failed: {}\n", sf->error);
    } else if (const auto* x = e.as<model::execution_finished>()) {
      end_stream();
      const std::string cost =
          x->usage.cost_usd ? fmt::format("${:.6f}", *x->usage.cost_usd) : std::string("unavailable");
      fmt::print("run {}{}{} — {} input tokens ({} cached), {} output tokens, cost {} ({})\n",
                 model::to_string(x->outcome), x->error.empty() ? "" : ": ", x->error, x->usage.input_tokens,
                 x->usage.cached_input_tokens, x->usage.output_tokens, cost,
                 x->usage.cost_status.empty() ? "not metered" : x->usage.cost_status);
      finished_ = true;
    }
    std::fflush(stdout);
  }
  [[nodiscard]] bool finished() const { return finished_; }

 private:
  // Deltas of text that never ended (the stream was cut) end their line.
  void end_stream() {
    if (!streamed_.empty()) fmt::print("\n");
    streamed_.clear();
  }
  static std::string indent_rest(std::string_view text) {
    std::string out;
    for (const char c : text) {
      out += c;
      if (c == '\n') out += "    ";
    }
    return out;
  }

  std::string streamed_;
  bool finished_ = false;
};

asio::awaitable<void> follow(std::shared_ptr<store::event_tail> tail, std::shared_ptr<live_printer> printer) {
  while (!printer->finished()) {
    auto items = co_await tail->next();
    if (!items) co_return;
    for (const auto& item : *items) printer->on(item);
  }
}

int run_once(const run_args& args) {
  std::string prompt;
  for (const auto& w : args.prompt) prompt += (prompt.empty() ? "" : " ") + w;
  if (prompt.empty()) {
    fmt::print(stderr, "tether run: give a prompt\n");
    return 2;
  }
  auto settings = config::load(args.config.empty() ? std::nullopt : std::optional<fs::path>(args.config));
  if (!settings) {
    fmt::print(stderr, "tether run: {}\n", settings.error().message);
    return 2;
  }
  auto chosen = settings->find(args.profile);
  if (!chosen) {
    fmt::print(stderr, "tether run: {}\n", chosen.error().message);
    return 2;
  }
  config::profile prof = *chosen;
  if (!args.provider.empty()) {
    const auto api = runtime::native::parse_wire_api(args.provider);
    if (!api) {
      fmt::print(stderr, "tether run: unknown provider '{}' (openai-chat, openai-responses, anthropic)\n",
                 args.provider);
      return 2;
    }
    prof.provider = *api;
  }
  if (!args.base_url.empty()) prof.base_url = args.base_url;
  if (!args.model.empty()) prof.model = args.model;
  if (!args.api_key_env.empty()) prof.api_key_env = args.api_key_env;
  if (args.max_steps > 0) prof.max_steps = args.max_steps;
  const std::string data_arg =
      !args.data.empty() ? args.data : !settings->data_dir.empty() ? settings->data_dir : std::string("tether-data");
  std::error_code ec;
  fs::create_directories(data_arg, ec);
  if (ec) {
    fmt::print(stderr, "tether run: cannot create {}: {}\n", data_arg, ec.message());
    return 2;
  }
  const fs::path data = fs::canonical(data_arg);

  std::optional<mock::server> scripted;
  runtime::native::native_options o;
  o.provider.api = prof.provider;
  o.provider.model = prof.model;
  o.data_dir = data;
  o.max_steps = prof.max_steps;
  o.compaction.context_window = prof.context_window;
  o.compaction.reserve = std::min<std::int64_t>(o.compaction.reserve, prof.context_window / 4);
  o.prices = settings->prices;
  if (prof.scripted()) {
    scripted.emplace(mock::server_options{});
    if (auto r = scripted->start(); !r) {
      fmt::print(stderr, "tether run: cannot start the scripted model: {}\n", r.error().describe());
      return 1;
    }
    o.provider.base_url = scripted->base_url() + "/v1";
    o.provider.no_proxy = "*";  // it is ours, on loopback
    fmt::print(stderr, "no model configured: using the built-in scripted model at {}\n", o.provider.base_url);
  } else {
    o.provider.base_url = prof.base_url;
    if (!prof.api_key_env.empty()) {
      const char* key = std::getenv(prof.api_key_env.c_str());
      if (key == nullptr || *key == '\0') {
        fmt::print(stderr, "tether run: {} is not set (profile {})\n", prof.api_key_env, prof.name);
        return 2;
      }
      o.provider.api_key = key;
    }
  }

  store::sqlite_options so;
  so.path = (data / "tether.db").string();
  auto st = store::open_sqlite_store(so);
  if (!st) {
    fmt::print(stderr, "tether run: {}\n", st.error().describe());
    return 1;
  }
  auto store = std::move(st).value();
  auto rt = runtime::native::make_native_runtime(o);
  int code = 0;
  {
    runner io;
    session::session_service service(io.executor(), *store, *rt, real_clock(), session::make_node_identity("run"));
    if (auto r = io.run(service.start()); !r) {
      fmt::print(stderr, "tether run: {}\n", r.error().describe());
      return 1;
    }
    session::create_request create;
    if (!args.workspace.empty()) create.workspace = fs::absolute(args.workspace).string();
    auto created = io.run(service.create_session(create));
    if (!created) {
      fmt::print(stderr, "tether run: {}\n", created.error().describe());
      io.run(service.stop());
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
      io.run(service.stop());
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
    const std::string workspace = args.workspace.empty() ? (data / "workspaces" / s.str()).string()
                                                         : fs::absolute(args.workspace).string();
    fmt::print("session {}\ndata: {}\nworkspace: {}\n", s.str(), data.string(), workspace);
    io.run(service.stop());
  }
  store->stop();
  if (scripted) scripted->stop();
  return code;
}

}  // namespace

void add_run_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<run_args>();
  auto* cmd = app.add_subcommand("run", "Run one turn of a new session here, without a server, and print it");
  cmd->add_option("--config", args->config, "the TOML configuration (default: $TETHER_CONFIG, else built-in defaults)");
  cmd->add_option("--profile", args->profile, "the profile to run")->capture_default_str();
  cmd->add_option("--data", args->data, "data directory (default: the config's data_dir, else ./tether-data)");
  cmd->add_option("--workspace", args->workspace, "the agent's working directory (default: one per session under --data)");
  cmd->add_option("--provider", args->provider, "override: openai-chat | openai-responses | anthropic");
  cmd->add_option("--base-url", args->base_url, "override: the provider's API base, e.g. https://api.openai.com/v1");
  cmd->add_option("--model", args->model, "override: the model name");
  cmd->add_option("--api-key-env", args->api_key_env, "override: the environment variable holding the API key");
  cmd->add_option("--max-steps", args->max_steps, "override: model requests per turn at most");
  cmd->add_option("prompt", args->prompt, "what to ask (the words are joined with spaces)")->required();
  cmd->callback([args, &exit_code] { exit_code = run_once(*args); });
}

}  // namespace tether::cli
