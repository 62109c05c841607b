// opencode serve as a warm agent: the real opencode (scripts/install-agents)
// against the in-process scripted model, spawned as the warm runtime will
// spawn it (prepare()'s argv and environment, a home of its own, stdin a
// pipe) and driven through its connection on a strand. Every coroutine runs
// under a deadline, so a bug fails a test instead of hanging it; every
// process a test starts, it stops.
#include "runtime/agent/warm_dialect.h"

#include <signal.h>

#include <fstream>
#include <future>

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json.hpp>

#include "mock/request.h"
#include "mock/server.h"
#include "mock/usage.h"
#include "process/child.h"
#include "runtime/agent/agent_test_support.h"
#include "runtime/agent/errors.h"
#include "support/agents.h"

namespace tether::runtime::agent {
namespace {

using namespace test;

struct turn_outcome {
  std::vector<agent_event> events;
  std::optional<tether::error> error;  // next() failed
  [[nodiscard]] std::string messages() const {
    std::string out;
    for (const auto& e : events)
      if (const auto* m = std::get_if<agent_message>(&e)) out += (out.empty() ? "" : "\n") + m->text;
    return out;
  }
  template <class T>
  [[nodiscard]] std::vector<T> all() const {
    std::vector<T> out;
    for (const auto& e : events)
      if (const auto* x = std::get_if<T>(&e)) out.push_back(*x);
    return out;
  }
};

// Events until the turn ends (turn_done or turn_failed) or next() fails.
// `steer`: sent once, after the first piece of text.
asio::awaitable<turn_outcome> collect(agent_connection* c, std::optional<std::string> steer = std::nullopt,
                                      bool cancel = false) {
  turn_outcome out;
  bool acted = false;
  for (;;) {
    auto evs = co_await c->next();
    if (!evs) {
      out.error = evs.error();
      co_return out;
    }
    bool over = false;
    for (auto& e : *evs) {
      over = over || std::holds_alternative<turn_done>(e) || std::holds_alternative<turn_failed>(e);
      const bool text = std::holds_alternative<text_piece>(e);
      out.events.push_back(std::move(e));
      if (text && !acted && !over) {
        acted = true;
        if (steer) {
          auto s = co_await c->steer(*steer);
          EXPECT_TRUE(s && *s) << (s ? "refused" : s.error().message);
        }
        if (cancel) co_await c->cancel();
      }
    }
    if (over) co_return out;
  }
}

// One opencode serve process and its connection.
struct agent {
  std::unique_ptr<process::child> proc;
  std::unique_ptr<agent_connection> conn;
};

class opencode_serve : public testing::Test {
 protected:
  void SetUp() override {
    opencode_ = ::tether::test::require_agent("opencode");
    if (opencode_.empty()) return;
    ASSERT_TRUE(model_.start());
    home_ = dir_.path() / "home";
    workspace_ = dir_.path() / "workspace";
    for (const auto* sub : {"", ".config", ".local/share", ".local/state", ".cache", "tmp"})
      fs::create_directories(home_ / sub);
    fs::create_directories(workspace_);
    workspace_ = fs::canonical(workspace_);
  }

  void TearDown() override {
    for (auto& a : agents_) stop(a);
  }

  // Runs `a` on the strand; fails the test (and kills the agents so that
  // nothing waits any more) if it does not finish within `deadline`.
  template <class T>
  T run(asio::awaitable<T> a, std::chrono::seconds deadline = 90s) {
    auto f = asio::co_spawn(strand_, std::move(a), asio::use_future);
    if (f.wait_for(deadline) != std::future_status::ready) {
      ADD_FAILURE() << "timed out";
      for (auto& ag : agents_)
        if (ag.proc) ag.proc->signal(SIGKILL);
    }
    return f.get();
  }
  void run(asio::awaitable<void> a, std::chrono::seconds deadline = 90s) {
    auto f = asio::co_spawn(strand_, std::move(a), asio::use_future);
    if (f.wait_for(deadline) != std::future_status::ready) ADD_FAILURE() << "timed out";
    f.get();
  }

  launch_input input() {
    launch_input in;
    in.program = opencode_;
    in.home = home_;
    in.workspace = workspace_;
    in.endpoint = {model_.base_url() + "/v1", "scripted", std::string(dialect_->key_variable())};
    in.settings = &settings_;
    return in;
  }

  // Starts a process; `env` overrides what prepare() set (the password).
  agent& start(std::map<std::string, std::string> env_over = {}) {
    auto l = dialect_->prepare(input());
    EXPECT_TRUE(l) << l.error().message;
    process::spawn_options so;
    so.argv = l->argv;
    for (const auto* name : {"PATH", "LANG"})
      if (const char* v = std::getenv(name)) so.env.push_back(std::string(name) + "=" + v);
    so.env.push_back("HOME=" + home_.string());
    so.env.push_back("XDG_CONFIG_HOME=" + (home_ / ".config").string());
    so.env.push_back("XDG_DATA_HOME=" + (home_ / ".local/share").string());
    so.env.push_back("XDG_STATE_HOME=" + (home_ / ".local/state").string());
    so.env.push_back("XDG_CACHE_HOME=" + (home_ / ".cache").string());
    so.env.push_back("TMPDIR=" + (home_ / "tmp").string());
    so.env.push_back(std::string(dialect_->key_variable()) + "=dummy");
    for (const auto& [k, v] : l->env) so.env.push_back(k + "=" + v);
    so.cwd = workspace_;
    so.stdin_mode = process::input::pipe;
    so.stderr_mode = process::output::log_file;
    so.log = dir_.path() / "stderr.log";
    return attach(so, l->env, std::move(env_over));
  }

  agent& attach(const process::spawn_options& so, std::map<std::string, std::string> env,
                std::map<std::string, std::string> env_over) {
    auto c = process::child::start(strand_, so);
    EXPECT_TRUE(c) << c.error().message;
    agent a;
    a.proc = std::move(*c);
    connect_options o;
    o.settings = &settings_;
    o.workspace = workspace_;
    o.model = "scripted";
    o.env = std::move(env);
    for (auto& [k, v] : env_over) o.env[k] = v;
    a.conn = dialect_->connect(strand_, *a.proc, std::move(o));
    agents_.push_back(std::move(a));
    return agents_.back();
  }

  void stop(agent& a) {
    if (a.conn) run([](agent_connection* c) -> asio::awaitable<void> { co_await c->close(); }(a.conn.get()));
    a.conn.reset();
    if (a.proc) {
      run([](process::child* p) -> asio::awaitable<void> { (void)co_await p->stop(); }(a.proc.get()));
      EXPECT_TRUE(a.proc->status().has_value());  // reaped: nothing left behind
      a.proc.reset();
    }
  }

  result<std::string> open(agent& a, std::optional<std::string> resume = std::nullopt) {
    return run([](agent_connection* c, std::optional<std::string> r) -> asio::awaitable<result<std::string>> {
      session_open o{.resume = std::move(r)};  // not a temporary in the co_await (GCC 12)
      co_return co_await c->open(std::move(o));
    }(a.conn.get(), std::move(resume)));
  }

  turn_outcome turn(agent& a, std::string prompt, std::optional<std::string> steer = std::nullopt,
                    bool cancel = false) {
    return run(
        [](agent_connection* c, std::string p, std::optional<std::string> s, bool x) -> asio::awaitable<turn_outcome> {
          if (auto r = co_await c->start_turn(std::move(p)); !r) co_return turn_outcome{{}, r.error()};
          co_return co_await collect(c, std::move(s), x);
        }(a.conn.get(), std::move(prompt), std::move(steer), cancel));
  }

  // The text of the model requests' messages since `after`, one string per request.
  std::vector<std::string> requests(std::size_t after = 0) {
    std::vector<std::string> out;
    for (const auto& r : model_.requests(after)) out.push_back(json::serialize(r.as_object().at("body")));
    return out;
  }

  std::string stderr_log() {
    std::ifstream f(dir_.path() / "stderr.log");
    return {std::istreambuf_iterator<char>(f), {}};
  }

  std::filesystem::path opencode_;
  temp_dir dir_;
  fs::path home_;
  fs::path workspace_;
  mock::server model_{{}};
  agent_settings settings_;
  std::unique_ptr<warm_dialect> dialect_ = make_opencode_serve();
  running_context ctx_;
  asio::any_io_executor strand_ = asio::make_strand(ctx_.io());
  std::deque<agent> agents_;
};

TEST_F(opencode_serve, a_plain_reply_carries_its_text_and_the_models_usage) {
  if (opencode_.empty()) return;
  auto& a = start();
  auto id = open(a);
  ASSERT_TRUE(id) << id.error().message << "\n" << stderr_log();
  EXPECT_TRUE(id->starts_with("ses")) << *id;
  auto t = turn(a, "Reply with exactly: hello there");
  ASSERT_FALSE(t.error) << t.error->message;
  ASSERT_EQ(t.all<agent_session>().size(), 1U);
  EXPECT_EQ(t.all<agent_session>()[0].id, *id);
  EXPECT_EQ(t.messages(), "hello there");
  EXPECT_FALSE(t.all<text_piece>().empty());
  EXPECT_EQ(t.all<turn_done>().size(), 1U);
  EXPECT_TRUE(t.all<turn_failed>().empty());
  // One model request (the title is ours: no title generation), and the
  // usage the model reported for it.
  const auto reqs = model_.requests();
  ASSERT_EQ(reqs.size(), 1U);
  auto conv = mock::parse_chat_request(reqs[0].as_object().at("body"));
  ASSERT_TRUE(conv);
  const auto usage = t.all<turn_usage>();
  ASSERT_EQ(usage.size(), 1U);
  EXPECT_EQ(usage[0].usage.input_tokens, static_cast<std::int64_t>(mock::input_tokens(*conv)));
  EXPECT_EQ(usage[0].usage.output_tokens, static_cast<std::int64_t>(mock::count_tokens("hello there")));
  EXPECT_EQ(usage[0].usage.cached_input_tokens, 0);
  EXPECT_TRUE(usage[0].agent_cost_usd.has_value());
}

TEST_F(opencode_serve, a_tool_writes_a_file_then_the_turn_replies) {
  if (opencode_.empty()) return;
  auto& a = start();
  ASSERT_TRUE(open(a));
  const auto file = workspace_ / "out.txt";
  auto t = turn(a, "Write file " + file.string() + ": written by opencode\nReply with exactly: wrote it");
  ASSERT_FALSE(t.error) << t.error->message;
  const auto starts = t.all<tool_start>();
  ASSERT_EQ(starts.size(), 1U);
  EXPECT_EQ(starts[0].tool, "write");
  const auto ends = t.all<tool_end>();
  ASSERT_EQ(ends.size(), 1U);
  EXPECT_EQ(ends[0].id, starts[0].id);
  EXPECT_TRUE(ends[0].ok) << ends[0].output;
  EXPECT_EQ(t.messages(), "wrote it");
  EXPECT_EQ(t.all<turn_usage>().size(), 2U);  // a step for the call, one for the reply
  std::ifstream f(file);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(f), {}), "written by opencode");
}

TEST_F(opencode_serve, two_turns_in_one_process_share_the_context) {
  if (opencode_.empty()) return;
  auto& a = start();
  ASSERT_TRUE(open(a));
  auto first = turn(a, "Remember the phrase: violet harbor");
  ASSERT_FALSE(first.error) << first.error->message;
  EXPECT_EQ(first.messages(), "Noted.");
  auto second = turn(a, "Recall the phrase.");
  ASSERT_FALSE(second.error) << second.error->message;
  EXPECT_EQ(second.messages(), "violet harbor");
  EXPECT_TRUE(second.all<agent_session>().empty());  // announced once
}

TEST_F(opencode_serve, a_new_process_resumes_the_session) {
  if (opencode_.empty()) return;
  std::string id;
  {
    auto& a = start();
    auto opened = open(a);
    ASSERT_TRUE(opened);
    id = *opened;
    ASSERT_FALSE(turn(a, "Remember the phrase: amber lantern").error);
    stop(a);
  }
  const auto seen = model_.requests().size();
  auto& b = start();
  auto resumed = open(b, id);
  ASSERT_TRUE(resumed) << resumed.error().message;
  EXPECT_EQ(*resumed, id);
  auto t = turn(b, "Recall the phrase.");
  ASSERT_FALSE(t.error) << t.error->message;
  EXPECT_EQ(t.messages(), "amber lantern");
  const auto later = requests(seen);
  ASSERT_FALSE(later.empty());
  EXPECT_NE(later[0].find("Remember the phrase: amber lantern"), std::string::npos);  // the earlier turn, resent
}

TEST_F(opencode_serve, an_unknown_session_is_refused) {
  if (opencode_.empty()) return;
  auto& a = start();
  auto r = open(a, "ses_0000000000000000000000000");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), agent_errc::resume_refused) << r.error().message;
  EXPECT_TRUE(open(a));  // the process still opens a new one
}

TEST_F(opencode_serve, a_steer_lands_inside_the_running_turn) {
  if (opencode_.empty()) return;
  ASSERT_TRUE(dialect_->can_steer());
  auto& a = start();
  ASSERT_TRUE(open(a));
  // The steer goes after the first piece of text; the rest of the answer
  // (about 6 s) is the window in which opencode must take it, wide enough
  // for a loaded machine (at 200 ms a piece it once missed it under ctest).
  auto t = turn(a, "Stream slowly: 600\nReply with exactly: one two three four five six seven eight nine ten",
                "Reply with exactly: steered");
  ASSERT_FALSE(t.error) << t.error->message;
  EXPECT_EQ(t.all<turn_done>().size(), 1U);
  // The last answer of this same turn follows the steer, and a request of
  // this turn carried it.
  const auto messages = t.all<agent_message>();
  ASSERT_FALSE(messages.empty());
  EXPECT_EQ(messages.back().text, "steered");
  const auto reqs = requests();
  ASSERT_GE(reqs.size(), 2U);
  EXPECT_NE(reqs.back().find("Reply with exactly: steered"), std::string::npos);
}

TEST_F(opencode_serve, cancel_ends_the_running_turn_and_the_next_turn_runs) {
  if (opencode_.empty()) return;
  auto& a = start();
  ASSERT_TRUE(open(a));
  auto t =
      turn(a, "Stream slowly: 300\nReply with exactly: a b c d e f g h i j k l m n o p q r s t", std::nullopt, true);
  ASSERT_FALSE(t.error) << t.error->message;
  const auto failed = t.all<turn_failed>();
  ASSERT_EQ(failed.size(), 1U);
  EXPECT_EQ(failed[0].message, "Aborted");
  auto next = turn(a, "Reply with exactly: after the abort");
  ASSERT_FALSE(next.error) << next.error->message;
  EXPECT_EQ(next.messages(), "after the abort");  // nothing of the aborted message leaks in
  EXPECT_EQ(next.all<turn_done>().size(), 1U);
}

TEST_F(opencode_serve, deny_all_keeps_the_file_unwritten) {
  if (opencode_.empty()) return;
  settings_.permissions = agent_permissions::deny_all;
  auto& a = start();
  ASSERT_TRUE(open(a));
  const auto file = workspace_ / "denied.txt";
  auto t = turn(a, "Write file " + file.string() + ": nope\nReply with exactly: tried");
  ASSERT_FALSE(t.error) << t.error->message;
  EXPECT_FALSE(fs::exists(file));
  // opencode either leaves the denied tools out of the request (the model
  // then says which tool it lacks) or fails the call: never a write that
  // succeeded.
  for (const auto& e : t.all<tool_end>()) EXPECT_FALSE(e.ok) << e.output;
  EXPECT_FALSE(t.messages().empty());
}

TEST_F(opencode_serve, approve_all_answers_opencodes_question_about_a_directory_outside) {
  if (opencode_.empty()) return;
  auto& a = start();
  ASSERT_TRUE(open(a));
  const auto file = dir_.path() / "outside" / "out.txt";  // outside the workspace: opencode asks
  auto t = turn(a, "Write file " + file.string() + ": outside\nReply with exactly: done outside");
  ASSERT_FALSE(t.error) << t.error->message;
  EXPECT_EQ(t.messages(), "done outside");
  EXPECT_TRUE(fs::exists(file));
}

TEST_F(opencode_serve, approve_reads_rejects_a_write_outside_the_workspace) {
  if (opencode_.empty()) return;
  settings_.permissions = agent_permissions::approve_reads;
  auto& a = start();
  ASSERT_TRUE(open(a));
  const auto file = dir_.path() / "outside" / "out.txt";
  auto t = turn(a, "Write file " + file.string() + ": outside\nReply with exactly: refused outside");
  ASSERT_FALSE(t.error) << t.error->message;
  EXPECT_FALSE(fs::exists(file));
}

TEST_F(opencode_serve, a_process_killed_mid_turn_ends_next_with_rpc_closed) {
  if (opencode_.empty()) return;
  auto& a = start();
  ASSERT_TRUE(open(a));
  auto t = run([](agent* ag) -> asio::awaitable<turn_outcome> {
    if (auto r = co_await ag->conn->start_turn("Stream slowly: 300\nReply with exactly: a b c d e f g h i j k"); !r)
      co_return turn_outcome{{}, r.error()};
    turn_outcome out;
    for (;;) {
      auto evs = co_await ag->conn->next();
      if (!evs) {
        out.error = evs.error();
        co_return out;
      }
      for (auto& e : *evs) {
        if (std::holds_alternative<text_piece>(e)) ag->proc->signal(SIGKILL);
        out.events.push_back(std::move(e));
      }
    }
  }(&a));
  ASSERT_TRUE(t.error);
  EXPECT_EQ(*t.error, agent_errc::rpc_closed) << t.error->message;
  EXPECT_TRUE(t.all<turn_done>().empty());
}

TEST_F(opencode_serve, close_returns_while_a_turn_runs) {
  if (opencode_.empty()) return;
  auto& a = start();
  ASSERT_TRUE(open(a));
  run(
      [](agent_connection* c) -> asio::awaitable<void> {
        EXPECT_TRUE(co_await c->start_turn("Stream slowly: 500\nReply with exactly: a b c d e f g h i j k l m n"));
        (void)co_await c->next();
        co_await c->close();
        auto after = co_await c->next();  // closed: an error, not a wait
        EXPECT_FALSE(after);
      }(a.conn.get()),
      20s);
}

TEST_F(opencode_serve, a_wrong_password_is_refused_by_opencode) {
  if (opencode_.empty()) return;
  auto& a = start({{"OPENCODE_SERVER_PASSWORD", "not-the-password"}});
  auto r = open(a);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), agent_errc::rpc_failed) << r.error().message;
  EXPECT_NE(r.error().message.find("401"), std::string::npos) << r.error().message;
}

TEST_F(opencode_serve, output_that_never_says_where_it_listens_is_a_protocol_error) {
  if (opencode_.empty()) return;
  process::spawn_options so;
  so.argv = {"/bin/sh", "-c", "i=0; while [ $i -lt 20 ]; do echo garbage; i=$((i+1)); done; sleep 30"};
  so.stdin_mode = process::input::pipe;
  auto& a = attach(so, {}, {});
  auto r = open(a);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), agent_errc::protocol) << r.error().message;
}

}  // namespace
}  // namespace tether::runtime::agent
