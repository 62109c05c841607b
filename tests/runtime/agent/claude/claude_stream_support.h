// What a warm-agent test needs (claude_stream_test.cpp): the agent spawned
// as the runtime spawns it (prepare(), agent_environment, stdin a pipe, the
// workspace as cwd, a per-test home), coroutines run on a strand with a
// deadline, and one turn played to its end with an optional steer, cancel or
// kill once the agent starts a tool, concurrently with next().
#pragma once

#include <signal.h>

#include <chrono>
#include <thread>
#include <fstream>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/serialize.hpp>

#include "process/child.h"
#include "runtime/agent/agent_env.h"
#include "runtime/agent/agent_runtime.h"
#include "runtime/agent/agent_test_support.h"
#include "runtime/agent/warm_dialect.h"

namespace tether::runtime::agent::warm_test {

namespace asio = boost::asio;
namespace json = boost::json;
namespace fs = std::filesystem;
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

enum class action { none, steer, cancel, kill };

struct turn_plan {
  std::string prompt;
  action on_tool = action::none;  // done once, at the first tool_start
  std::string steer_text;
  std::optional<fs::path> after_action;  // created a second after the steer returned
};

// What one turn produced.
struct turn_log {
  std::vector<std::string> sessions;
  std::vector<std::string> messages;
  std::vector<tool_start> starts;
  std::vector<tool_end> ends;
  model::usage usage;
  std::optional<double> cost;
  bool done = false;
  bool failed = false;
  std::string failure;
  std::optional<tether::error> error;  // next() (or start_turn) failed
  std::optional<bool> steered;         // what steer() returned

  [[nodiscard]] std::string describe() const {
    std::string s = fmt::format("done={} failed={} ({}) error={} messages:", done, failed, failure,
                                error ? error->message : "none");
    for (const auto& m : messages) s += " [" + m + "]";
    for (const auto& t : starts) s += " tool " + t.tool + " " + json::serialize(t.input);
    for (const auto& e : ends) s += fmt::format(" end ok={} {}", e.ok, e.output.substr(0, 200));
    return s;
  }
};

struct warm_agent {
  std::unique_ptr<process::child> proc;
  std::unique_ptr<agent_connection> conn;
};

inline std::string read_file(const fs::path& p) {
  std::ifstream f(p);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

class warm_fixture : public testing::Test {
 protected:
  warm_fixture() : strand_(asio::make_strand(ctx_.io())) {}

  [[nodiscard]] fs::path workspace() { return dirs().workspace; }

  // One home and workspace per test: a resumed session finds its files.
  const agent_dirs& dirs() {
    if (!dirs_) {
      auto d = prepare_dirs(tmp_.path() / "data", session_id::generate(), (tmp_.path() / "ws").string());
      if (!d) throw std::runtime_error(d.error().message);
      dirs_ = *d;
    }
    return *dirs_;
  }

  std::unique_ptr<warm_agent> spawn(const warm_dialect& d, const fs::path& program, const std::string& root,
                                    const std::string& model, std::optional<std::string> resume) {
    launch_input in;
    in.program = program;
    in.home = dirs().home;
    in.workspace = dirs().workspace;
    in.resume = std::move(resume);
    in.endpoint = {d.scripted_base_url(root), model, std::string(d.key_variable())};
    in.settings = &settings_;
    auto l = d.prepare(in);
    if (!l) {
      ADD_FAILURE() << "prepare: " << l.error().message;
      return nullptr;
    }
    agent_options o;
    o.settings = settings_;
    o.endpoint = in.endpoint;
    o.api_key = "dummy";
    return start(d, l->argv, agent_environment(o, dirs(), l->env, o.api_key), model);
  }

  // Any program as the agent (a fake one speaking the protocol), in the workspace.
  std::unique_ptr<warm_agent> start(const warm_dialect& d, std::vector<std::string> argv, std::vector<std::string> env,
                                    const std::string& model = "scripted") {
    process::spawn_options so;
    so.argv = argv;
    so.env = std::move(env);
    so.cwd = dirs().workspace;
    so.stdin_mode = process::input::pipe;
    auto child = process::child::start(strand_, so);
    if (!child) {
      ADD_FAILURE() << "spawn: " << child.error().message;
      return nullptr;
    }
    auto a = std::make_unique<warm_agent>();
    a->proc = std::move(*child);
    connect_options co{&settings_, dirs().workspace, model, std::nullopt};
    co.argv = std::move(argv);  // what the process was told to open, as warm_runtime passes it
    a->conn = d.connect(strand_, *a->proc, std::move(co));
    live_.push_back(a->proc.get());
    return a;
  }

  // Runs `work` on the strand; past `limit` the test fails and the agents are
  // killed, which ends any read the work waits on.
  template <class T>
  T run(asio::awaitable<T> work, std::chrono::seconds limit = std::chrono::seconds(120)) {
    auto f = asio::co_spawn(strand_, std::move(work), asio::use_future);
    if (f.wait_for(limit) != std::future_status::ready) {
      ADD_FAILURE() << "timed out after " << limit.count() << " s";
      for (auto* p : live_) p->signal(SIGKILL);
    }
    return f.get();
  }

  // NOLINTNEXTLINE(cppcoreguidelines-avoid-reference-coroutine-parameters): awaited at once by its owner
  asio::awaitable<turn_log> play(warm_agent& a, std::string prompt) { return play(a, turn_plan{std::move(prompt)}); }
  // NOLINTNEXTLINE(cppcoreguidelines-avoid-reference-coroutine-parameters): awaited at once by its owner
  asio::awaitable<turn_log> play(warm_agent& a, turn_plan p) { return play_turn(&a, std::move(p), true); }
  // The events of a turn already started, to its end.
  // NOLINTNEXTLINE(cppcoreguidelines-avoid-reference-coroutine-parameters): awaited at once by its owner
  asio::awaitable<turn_log> collect(warm_agent& a) { return play_turn(&a, {}, false); }

  // close(), then the process's end: it is reaped and its group is gone.
  void finish(warm_agent& a) {
    const auto pid = a.proc->pid();
    run(close_and_stop(&a), std::chrono::seconds(30));
    EXPECT_TRUE(a.proc->status().has_value());
    // The group got SIGKILL with the leader's reap; a member may still be
    // exiting for a moment (on a loaded machine), so its end is waited for.
    for (int i = 0; i < 100 && ::kill(-pid, 0) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_NE(::kill(-pid, 0), 0) << "processes of the agent's group are left";
    std::erase(live_, a.proc.get());
  }

  test::temp_dir tmp_;
  test::running_context ctx_;
  asio::any_io_executor strand_;
  agent_settings settings_;

 private:
  struct side_call {  // a steer or cancel running beside next()
    explicit side_call(const asio::any_io_executor& ex) : wake(ex) {}
    bool running = false;
    std::optional<bool> steered;
    asio::steady_timer wake;
  };

  static asio::awaitable<void> steer_beside(agent_connection* c, std::string text, std::optional<fs::path> then,
                                            std::shared_ptr<side_call> side) {
    auto r = co_await c->steer(std::move(text));
    side->steered = r && *r;
    if (then) {
      asio::steady_timer t(side->wake.get_executor());
      t.expires_after(std::chrono::seconds(1));
      co_await t.async_wait(use_tuple);
      std::ofstream(*then) << "go\n";
    }
    side->running = false;
    side->wake.cancel();
  }

  static asio::awaitable<void> cancel_beside(agent_connection* c, std::shared_ptr<side_call> side) {
    co_await c->cancel();
    side->running = false;
    side->wake.cancel();
  }

  asio::awaitable<turn_log> play_turn(warm_agent* a, turn_plan p, bool start) {
    turn_log log;
    auto side = std::make_shared<side_call>(strand_);
    // (Not a conditional expression around co_await: GCC 12 destroys its
    // temporaries twice inside a coroutine.)
    if (start) {
      auto s = co_await a->conn->start_turn(p.prompt);
      if (!s) {
        log.error = s.error();
        co_return log;
      }
    }
    bool acted = false;
    for (bool over = false; !over;) {
      auto evs = co_await a->conn->next();
      if (!evs) {
        log.error = evs.error();
        break;
      }
      EXPECT_FALSE(evs->empty());
      for (auto& e : *evs) {
        if (auto* s = std::get_if<agent_session>(&e)) log.sessions.push_back(s->id);
        if (auto* m = std::get_if<agent_message>(&e)) log.messages.push_back(m->text);
        if (auto* u = std::get_if<turn_usage>(&e)) {
          log.usage += u->usage;
          if (u->agent_cost_usd) log.cost = log.cost.value_or(0) + *u->agent_cost_usd;
        }
        if (auto* f = std::get_if<turn_failed>(&e)) {
          log.failed = true;
          log.failure = f->message;
          over = true;
        }
        if (std::holds_alternative<turn_done>(e)) {
          log.done = true;
          over = true;
        }
        if (auto* te = std::get_if<tool_end>(&e)) log.ends.push_back(*te);
        if (auto* ts = std::get_if<tool_start>(&e)) {
          log.starts.push_back(*ts);
          if (acted || p.on_tool == action::none) continue;
          acted = true;
          side->running = p.on_tool != action::kill;
          if (p.on_tool == action::steer)
            asio::co_spawn(strand_, steer_beside(a->conn.get(), p.steer_text, p.after_action, side), asio::detached);
          else if (p.on_tool == action::cancel)
            asio::co_spawn(strand_, cancel_beside(a->conn.get(), side), asio::detached);
          else
            a->proc->signal(SIGKILL);
        }
      }
    }
    while (side->running) {
      side->wake.expires_at(std::chrono::steady_clock::time_point::max());
      co_await side->wake.async_wait(use_tuple);
    }
    log.steered = side->steered;
    co_return log;
  }

  static asio::awaitable<int> close_and_stop(warm_agent* a) {
    co_await a->conn->close();
    a->conn.reset();
    (void)co_await a->proc->wait_exit(std::chrono::steady_clock::now() + std::chrono::seconds(10));
    const auto status = co_await a->proc->stop();
    co_return status.code;
  }

  std::optional<agent_dirs> dirs_;
  std::vector<process::child*> live_;
};

}  // namespace tether::runtime::agent::warm_test
