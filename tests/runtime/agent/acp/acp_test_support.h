// What the ACP tests share: an agent process started the way the warm
// runtime starts it (the dialect's prepare(), a home of its own, stdin a
// pipe, the workspace as cwd) and a connection over it on a strand, with
// every call bounded by a deadline (a bug fails a test, not hangs it: the
// agent is killed, which ends whatever waits on it).
#pragma once

#include <fstream>
#include <sstream>

#include <signal.h>

#include <cerrno>
#include <cstdlib>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_future.hpp>

#include "process/child.h"
#include "runtime/agent/agent_test_support.h"
#include "runtime/agent/warm_dialect.h"

namespace tether::runtime::agent::test {

// The text of every agent_message, joined by "\n".
inline std::string messages(const std::vector<agent_event>& evs) {
  std::string out;
  for (const auto& e : evs)
    if (const auto* m = std::get_if<agent_message>(&e)) out += (out.empty() ? "" : "\n") + m->text;
  return out;
}

template <class E>
std::vector<E> all_of(const std::vector<agent_event>& evs) {
  std::vector<E> out;
  for (const auto& e : evs)
    if (const auto* x = std::get_if<E>(&e)) out.push_back(*x);
  return out;
}

struct turn_outcome {
  std::vector<agent_event> events;
  std::optional<tether::error> error;  // next() failed
  [[nodiscard]] bool done() const { return !events.empty() && std::holds_alternative<turn_done>(events.back()); }
  [[nodiscard]] std::string failure() const {
    if (!events.empty())
      if (const auto* f = std::get_if<turn_failed>(&events.back())) return f->message;
    return {};
  }
};

class acp_session {
 public:
  explicit acp_session(std::unique_ptr<warm_dialect> d) : dialect_(std::move(d)) {
    home_ = dir_.path() / "home";
    workspace_ = dir_.path() / "ws";
    fs::create_directories(home_);
    fs::create_directories(workspace_);
    workspace_ = fs::canonical(workspace_);
  }
  ~acp_session() { stop(); }
  acp_session(const acp_session&) = delete;
  acp_session& operator=(const acp_session&) = delete;

  agent_settings settings;
  std::map<std::string, std::string> env;  // beside the launch's
  model_endpoint endpoint{"http://127.0.0.1:9/v1", "scripted", ""};
  std::optional<mcp_server> mcp;

  [[nodiscard]] const fs::path& home() const { return home_; }
  [[nodiscard]] const fs::path& workspace() const { return workspace_; }
  [[nodiscard]] const warm_dialect& dialect() const { return *dialect_; }
  process::child& proc() { return *proc_; }
  // SIGKILL to the agent's group, on the strand.
  void kill() {
    asio::post(strand_, asio::use_future([this] { proc_->signal(SIGKILL); })).get();
  }

  // prepare(), spawn, connect(); false (with a failure recorded) when it
  // cannot. After stop(), start() runs a new process in the same home and
  // workspace.
  bool start(const fs::path& program, std::optional<std::string> resume = std::nullopt) {
    launch_input in;
    in.program = program;
    in.home = home_;
    in.workspace = workspace_;
    in.resume = std::move(resume);
    in.endpoint = endpoint;
    in.endpoint.key_variable = std::string(dialect_->key_variable());
    in.settings = &settings;
    in.mcp = mcp;
    auto l = dialect_->prepare(in);
    if (!l) {
      ADD_FAILURE() << "prepare: " << l.error().describe();
      return false;
    }
    process::spawn_options so;
    so.argv = l->argv;
    const char* path = std::getenv("PATH");
    so.env = {"PATH=" + std::string(path != nullptr ? path : "/usr/bin:/bin"), "LANG=C.UTF-8",
              "HOME=" + home_.string()};
    for (const auto* x : {"XDG_CONFIG_HOME=.config", "XDG_DATA_HOME=.local/share", "XDG_STATE_HOME=.local/state",
                          "XDG_CACHE_HOME=.cache"}) {
      const std::string s(x);
      const auto eq = s.find('=');
      so.env.push_back(s.substr(0, eq + 1) + (home_ / s.substr(eq + 1)).string());
    }
    for (const auto& [k, v] : l->env) so.env.push_back(k + "=" + v);
    for (const auto& [k, v] : env) so.env.push_back(k + "=" + v);
    if (const char* log = std::getenv("FAKE_ACP_LOG")) so.env.push_back("FAKE_ACP_LOG=" + std::string(log));  // debugging
    if (!in.endpoint.key_variable.empty()) so.env.push_back(in.endpoint.key_variable + "=dummy-key");
    so.cwd = workspace_;
    so.stdin_mode = process::input::pipe;
    so.grace = 1s;
    auto c = process::child::start(strand_, so);
    if (!c) {
      ADD_FAILURE() << "spawn: " << c.error().describe();
      return false;
    }
    proc_ = std::move(*c);
    pid_ = proc_->pid();
    connect_options co;
    co.settings = &settings;
    co.workspace = workspace_;
    co.model = endpoint.model;
    co.mcp = mcp;
    conn_ = dialect_->connect(strand_, *proc_, co);
    return true;
  }

  // Runs `aw` on the strand for at most `limit`; past it the agent is killed.
  template <class T>
  T run(asio::awaitable<T> aw, std::chrono::seconds limit = 60s) {
    auto f = asio::co_spawn(strand_, std::move(aw), asio::use_future);
    if (f.wait_for(limit) != std::future_status::ready) {
      ADD_FAILURE() << "no answer within " << limit.count() << " s: the agent is killed";
      asio::post(strand_, [this] {
        if (proc_) proc_->signal(SIGKILL);
      });
      if (f.wait_for(20s) != std::future_status::ready) std::abort();
    }
    return f.get();
  }

  result<std::string> open(std::optional<std::string> resume = std::nullopt) {
    return run(conn_->open({.resume = std::move(resume)}));
  }
  // One turn: start_turn, then next() until turn_done or turn_failed (or an error).
  turn_outcome turn(std::string prompt, std::chrono::seconds limit = 90s) {
    turn_outcome out;
    if (auto s = run(conn_->start_turn(std::move(prompt))); !s) {
      out.error = s.error();
      return out;
    }
    return rest_of_turn(std::move(out), limit);
  }
  turn_outcome rest_of_turn(turn_outcome out = {}, std::chrono::seconds limit = 90s) {
    for (;;) {
      auto evs = run(conn_->next(), limit);
      if (!evs) {
        out.error = evs.error();
        return out;
      }
      for (auto& e : *evs) out.events.push_back(std::move(e));
      const auto& last = out.events.back();
      if (std::holds_alternative<turn_done>(last) || std::holds_alternative<turn_failed>(last)) return out;
    }
  }
  result<std::vector<agent_event>> next(std::chrono::seconds limit = 90s) { return run(conn_->next(), limit); }
  result<void> start_turn(std::string prompt) { return run(conn_->start_turn(std::move(prompt))); }
  void cancel() { run(conn_->cancel()); }
  agent_connection& connection() { return *conn_; }

  // close(), then the process stopped; the process is gone afterwards.
  void stop() {
    if (conn_) {
      const auto t0 = std::chrono::steady_clock::now();
      run(conn_->close(), 30s);
      EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s) << "close() took too long";
      conn_.reset();
    }
    if (proc_) {
      run(proc_->stop(), 30s);
      asio::post(strand_, asio::use_future([this] { proc_.reset(); })).get();
      EXPECT_EQ(::kill(pid_, 0), -1) << "the agent " << pid_ << " is still there";
      // The rest of the group got SIGKILL; a big process takes a moment to go.
      for (int i = 0; i < 50 && live_in_group(pid_) > 0; ++i) std::this_thread::sleep_for(100ms);
      EXPECT_EQ(live_in_group(pid_), 0) << "the agent's group " << pid_ << " is still there after 5 s";
    }
  }

 private:
  // Members of process group `pgid` that run: zombies (dead, not reaped:
  // PID 1 of a container may never reap an orphan) do not count.
  static int live_in_group(pid_t pgid) {
    int n = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/proc", ec)) {
      const auto name = e.path().filename().string();
      if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
      std::ifstream in(e.path() / "stat");
      std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      const auto close = stat.rfind(')');
      if (close == std::string::npos) continue;
      std::istringstream rest(stat.substr(close + 2));
      char state = 0;
      long ppid = 0;
      long pgrp = 0;
      if (rest >> state >> ppid >> pgrp && pgrp == pgid && state != 'Z' && state != 'X') ++n;
    }
    return n;
  }

  running_context ctx_;
  asio::strand<asio::any_io_executor> strand_{ctx_.executor()};
  temp_dir dir_;
  fs::path home_;
  fs::path workspace_;
  std::unique_ptr<warm_dialect> dialect_;
  std::unique_ptr<process::child> proc_;
  std::unique_ptr<agent_connection> conn_;
  pid_t pid_ = -1;
};

}  // namespace tether::runtime::agent::test
