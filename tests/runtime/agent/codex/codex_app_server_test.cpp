// codex app-server as a warm agent: the real codex against the in-process
// scripted model, spawned as the warm runtime will (warm_dialect.h).
#include "runtime/agent/warm_dialect.h"

#include <signal.h>

#include <fstream>
#include <future>
#include <sstream>

#include <gtest/gtest.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include "mock/request.h"
#include "mock/script.h"
#include "mock/server.h"
#include "mock/usage.h"
#include "process/child.h"
#include "runtime/agent/agent_env.h"
#include "runtime/agent/agent_runtime.h"
#include "runtime/agent/agent_test_support.h"
#include "runtime/agent/errors.h"
#include "support/agents.h"

namespace tether::runtime::agent {
namespace {

using namespace test;  // NOLINT(google-build-using-namespace)
using events = std::vector<agent_event>;

template <class T>
std::vector<T> all_of(const events& evs) {
  std::vector<T> out;
  for (const auto& e : evs)
    if (const auto* p = std::get_if<T>(&e)) out.push_back(*p);
  return out;
}
std::vector<std::string> messages(const events& evs) {
  std::vector<std::string> out;
  for (const auto& m : all_of<agent_message>(evs)) out.push_back(m.text);
  return out;
}
bool ends_turn(const agent_event& e) {
  return std::holds_alternative<turn_done>(e) || std::holds_alternative<turn_failed>(e);
}

// The next events until the turn ends (its last event ends it).
// NOLINTNEXTLINE(cppcoreguidelines-avoid-reference-coroutine-parameters): awaited at once by its owner
task<result<events>> rest_of_turn(agent_connection& c) {
  events all;
  for (;;) {
    auto evs = co_await c.next();
    if (!evs) co_return evs.error();
    for (auto& e : *evs) {
      all.push_back(std::move(e));
      if (ends_turn(all.back())) co_return all;
    }
  }
}
// NOLINTNEXTLINE(cppcoreguidelines-avoid-reference-coroutine-parameters): awaited at once by its owner
task<result<events>> turn(agent_connection& c, std::string prompt) {
  TETHER_CO_TRY(co_await c.start_turn(std::move(prompt)));
  co_return co_await rest_of_turn(c);
}
// The events up to and including the first tool_start.
// NOLINTNEXTLINE(cppcoreguidelines-avoid-reference-coroutine-parameters): awaited at once by its owner
task<result<events>> until_tool(agent_connection& c) {
  events all;
  for (;;) {
    auto evs = co_await c.next();
    if (!evs) co_return evs.error();
    for (auto& e : *evs) all.push_back(std::move(e));
    if (!all_of<tool_start>(all).empty() || (!all.empty() && ends_turn(all.back()))) co_return all;
  }
}

// The text of a recorded Responses request's input.
std::string input_text(const json::value& request) { return json::serialize(request.at("body").at("input")); }

struct live_agent {
  std::unique_ptr<process::child> proc;
  std::unique_ptr<agent_connection> conn;
  bool closed = false;
};

class codex_app_server_test : public testing::Test {
 protected:
  void SetUp() override {
    codex_ = tether::test::require_agent("codex");
    if (codex_.empty()) return;
    ASSERT_TRUE(mock_.start());
    for (const auto* sub : {"", ".config", ".local/share", ".local/state", ".cache", "tmp"})
      fs::create_directories(home() / sub);
    fs::create_directories(workspace());
  }
  void TearDown() override {
    for (auto& a : agents_) {
      if (!a->closed) run(stop(*a));
      EXPECT_TRUE(run(gone(*a))) << "codex's process group outlived the test";
    }
    agents_.clear();
    if (HasFailure()) {
      std::ifstream in(root_.path() / "stderr.log");
      std::stringstream s;
      s << in.rdbuf();
      std::cerr << "codex's stderr:\n" << s.str() << "\n";
    }
  }

  [[nodiscard]] fs::path home() const { return root_.path() / "home"; }
  [[nodiscard]] fs::path workspace() const { return root_.path() / "ws"; }

  // Runs `a` on the strand; fails the test (and kills the agents so it ends)
  // when it takes longer than `deadline`.
  template <class T>
  T run(task<T> a, std::chrono::seconds deadline = 90s) {
    auto f = asio::co_spawn(strand_, std::move(a), asio::use_future);
    if (f.wait_for(deadline) != std::future_status::ready) {
      ADD_FAILURE() << "timed out";
      for (auto& g : agents_) asio::post(strand_, [p = g->proc.get()] { p->signal(SIGKILL); });
    }
    return f.get();
  }

  // A codex app-server process and its connection, as the runtime starts them.
  live_agent& spawn(agent_permissions p = agent_permissions::approve_all) {
    settings_.permissions = p;
    auto d = make_codex_app_server();
    launch_input in;
    in.program = codex_;
    in.home = home();
    in.workspace = workspace();
    in.endpoint = {d->scripted_base_url(mock_.base_url()), "scripted", std::string(d->key_variable())};
    in.settings = &settings_;
    auto l = d->prepare(in);
    EXPECT_TRUE(l) << l.error().message;
    agent_options o;
    o.settings = settings_;
    o.endpoint = in.endpoint;
    process::spawn_options so;
    so.argv = l->argv;
    so.env = agent_environment(o, agent_dirs{home(), workspace()}, l->env, o.api_key);
    so.cwd = workspace();
    so.stdin_mode = process::input::pipe;
    so.stderr_mode = process::output::log_file;
    so.log = root_.path() / "stderr.log";
    return start(std::move(so), *d);
  }
  live_agent& start(process::spawn_options so, const warm_dialect& d) {
    auto proc = process::child::start(strand_, so);
    EXPECT_TRUE(proc) << proc.error().message;
    auto a = std::make_unique<live_agent>();
    a->proc = std::move(*proc);
    a->conn = d.connect(strand_, *a->proc, {.settings = &settings_, .workspace = workspace(), .model = "scripted"});
    agents_.push_back(std::move(a));
    return *agents_.back();
  }

  // close(), then whether the process exited by itself (it is stopped if not).
  // NOLINTNEXTLINE(cppcoreguidelines-avoid-reference-coroutine-parameters): awaited at once by its owner
  task<bool> stop(live_agent& a) {
    if (!a.closed) co_await a.conn->close();
    a.closed = true;
    const bool exited = co_await a.proc->wait_exit(std::chrono::steady_clock::now() + 10s);
    if (exited)
      a.proc->reap();
    else
      co_await a.proc->stop();
    co_return exited;
  }
  // Whether nothing of the process's group is left (a tool codex ran, say).
  // NOLINTNEXTLINE(cppcoreguidelines-avoid-reference-coroutine-parameters): awaited at once by its owner
  task<bool> gone(live_agent& a) {
    asio::steady_timer t(strand_);
    for (int i = 0; i < 100; ++i) {
      if (::kill(-a.proc->pid(), 0) != 0) co_return true;
      t.expires_after(50ms);
      co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
    }
    co_return false;
  }

  // What the scripted model reported for requests seq > after: its own
  // figures, its prompt cache replayed over every request in order.
  [[nodiscard]] model::usage mock_usage(std::size_t after) const {
    mock::prompt_cache cache;
    model::usage u;
    for (const auto& r : mock_.requests()) {
      if (json::serialize(r.at("route")).find("responses") == std::string::npos) continue;
      auto conv = mock::parse_request(mock::wire_format::responses, r.at("body"));
      EXPECT_TRUE(conv);
      if (!conv) continue;
      const auto input = static_cast<std::int64_t>(mock::input_tokens(*conv));
      const auto cached = std::min(static_cast<std::int64_t>(cache.lookup_and_remember(mock::canonical_segments(*conv))), input);
      if (r.at("seq").to_number<std::size_t>() <= after) continue;
      u.input_tokens += input;
      u.cached_input_tokens += cached;
      u.output_tokens += static_cast<std::int64_t>(mock::output_tokens(mock::decide(*conv).output));
    }
    return u;
  }
  [[nodiscard]] std::size_t seen() const { return mock_.requests().size(); }

  fs::path codex_;
  temp_dir root_;
  mock::server mock_{mock::server_options{}};
  running_context ctx_;
  asio::strand<asio::io_context::executor_type> strand_ = asio::make_strand(ctx_.io());
  agent_settings settings_;
  std::vector<std::unique_ptr<live_agent>> agents_;
};

TEST_F(codex_app_server_test, a_plain_prompt_gets_the_session_the_reply_and_the_models_usage) {
  if (codex_.empty()) return;
  auto& a = spawn();
  auto id = run(a.conn->open({}));
  ASSERT_TRUE(id) << id.error().message;
  EXPECT_FALSE(id->empty());
  auto evs = run(turn(*a.conn, "Reply with exactly: WARM-HELLO"));
  ASSERT_TRUE(evs) << evs.error().message;
  ASSERT_FALSE(all_of<agent_session>(*evs).empty());
  EXPECT_EQ(all_of<agent_session>(*evs).front().id, *id);
  EXPECT_EQ(messages(*evs), std::vector<std::string>{"WARM-HELLO"});
  std::string streamed;
  for (const auto& p : all_of<text_piece>(*evs)) streamed += p.text;
  EXPECT_EQ(streamed, "WARM-HELLO");
  const auto usage = all_of<turn_usage>(*evs);
  ASSERT_EQ(usage.size(), 1U);
  EXPECT_EQ(usage.front().usage, mock_usage(0));
  EXPECT_GT(usage.front().usage.input_tokens, 0);
  EXPECT_TRUE(std::holds_alternative<turn_done>(evs->back()));
}

TEST_F(codex_app_server_test, a_tool_call_writes_the_file_then_the_reply_comes) {
  if (codex_.empty()) return;
  auto& a = spawn();
  ASSERT_TRUE(run(a.conn->open({})));
  auto evs = run(turn(*a.conn, "Write file out.txt: made by codex\nReply with exactly: WROTE"));
  ASSERT_TRUE(evs) << evs.error().message;
  const auto starts = all_of<tool_start>(*evs);
  const auto ends = all_of<tool_end>(*evs);
  ASSERT_EQ(starts.size(), 1U);
  ASSERT_EQ(ends.size(), 1U);
  EXPECT_EQ(starts[0].tool, "exec_command");
  EXPECT_EQ(starts[0].id, ends[0].id);
  EXPECT_TRUE(ends[0].ok) << ends[0].output;
  EXPECT_EQ(messages(*evs), std::vector<std::string>{"WROTE"});
  EXPECT_TRUE(std::holds_alternative<turn_done>(evs->back()));
  std::ifstream f(workspace() / "out.txt");
  std::string content((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "made by codex");
}

TEST_F(codex_app_server_test, two_turns_in_one_process_share_the_context_and_count_their_own_usage) {
  if (codex_.empty()) return;
  auto& a = spawn();
  ASSERT_TRUE(run(a.conn->open({})));
  auto first = run(turn(*a.conn, "Remember the phrase: blue-harbor"));
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(messages(*first), std::vector<std::string>{"Noted."});
  const auto before = seen();
  auto second = run(turn(*a.conn, "Recall the phrase."));
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(messages(*second), std::vector<std::string>{"blue-harbor"});
  ASSERT_GT(seen(), before);
  EXPECT_NE(input_text(mock_.requests().back()).find("blue-harbor"), std::string::npos);
  const auto usage = all_of<turn_usage>(*second);
  ASSERT_EQ(usage.size(), 1U);
  EXPECT_EQ(usage.front().usage, mock_usage(before));  // the second turn's requests only
}

TEST_F(codex_app_server_test, a_new_process_resumes_the_thread_with_its_earlier_turns) {
  if (codex_.empty()) return;
  auto& a = spawn();
  auto id = run(a.conn->open({}));
  ASSERT_TRUE(id) << id.error().message;
  ASSERT_TRUE(run(turn(*a.conn, "Remember the phrase: red-kite")));
  EXPECT_TRUE(run(stop(a))) << "codex did not exit when its connection closed";

  auto& b = spawn();
  auto resumed = run(b.conn->open({.resume = *id}));
  ASSERT_TRUE(resumed) << resumed.error().message;
  EXPECT_EQ(*resumed, *id);
  const auto before = seen();
  auto evs = run(turn(*b.conn, "Recall the phrase."));
  ASSERT_TRUE(evs) << evs.error().message;
  EXPECT_EQ(messages(*evs), std::vector<std::string>{"red-kite"});
  EXPECT_NE(input_text(mock_.requests().back()).find("Remember the phrase: red-kite"), std::string::npos);
  const auto usage = all_of<turn_usage>(*evs);
  ASSERT_EQ(usage.size(), 1U);
  EXPECT_EQ(usage.front().usage, mock_usage(before));  // not the thread's total since its first turn
}

TEST_F(codex_app_server_test, resuming_a_thread_codex_does_not_know_is_refused_and_a_new_one_opens) {
  if (codex_.empty()) return;
  auto& a = spawn();
  auto r = run(a.conn->open({.resume = "01a2363b-0000-7000-8000-000000000000"}));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), agent_errc::resume_refused) << r.error().message;
  auto id = run(a.conn->open({}));
  ASSERT_TRUE(id) << id.error().message;
  auto evs = run(turn(*a.conn, "Reply with exactly: FRESH"));
  ASSERT_TRUE(evs) << evs.error().message;
  EXPECT_EQ(messages(*evs), std::vector<std::string>{"FRESH"});
}

TEST_F(codex_app_server_test, a_steer_lands_inside_the_running_turn) {
  if (codex_.empty()) return;
  auto& a = spawn();
  ASSERT_TRUE(run(a.conn->open({})));
  EXPECT_FALSE(run(a.conn->steer("Reply with exactly: NO-TURN")).value());  // nothing runs yet
  ASSERT_TRUE(run(a.conn->start_turn("Wait for file go.txt\nReply with exactly: FIRST")));
  auto head = run(until_tool(*a.conn));
  ASSERT_TRUE(head) << head.error().message;
  ASSERT_EQ(all_of<tool_start>(*head).size(), 1U);  // the turn waits in its tool
  auto steered = run(a.conn->steer("Reply with exactly: STEERED"));
  ASSERT_TRUE(steered) << steered.error().message;
  EXPECT_TRUE(*steered);
  std::ofstream(workspace() / "go.txt") << "go\n";
  auto tail = run(rest_of_turn(*a.conn));
  ASSERT_TRUE(tail) << tail.error().message;
  EXPECT_EQ(messages(*tail), std::vector<std::string>{"STEERED"});
  EXPECT_TRUE(std::holds_alternative<turn_done>(tail->back()));
  // The request that carries the steer is the turn's own: its prompt, the
  // tool's result, then the steer, and no answer in between.
  const auto last = input_text(mock_.requests().back());
  const auto prompt = last.rfind("Wait for file go.txt");
  const auto output = last.find("function_call_output", prompt);
  const auto steer = last.find("STEERED", prompt);
  ASSERT_NE(prompt, std::string::npos);
  ASSERT_NE(steer, std::string::npos);
  EXPECT_LT(output, steer);
  EXPECT_EQ(last.find("\"role\":\"assistant\"", prompt), std::string::npos);
}

TEST_F(codex_app_server_test, cancel_ends_the_running_turn_and_the_next_turn_runs) {
  if (codex_.empty()) return;
  auto& a = spawn();
  ASSERT_TRUE(run(a.conn->open({})));
  ASSERT_TRUE(run(a.conn->start_turn("Wait for file never.txt\nReply with exactly: NEVER")));
  ASSERT_TRUE(run(until_tool(*a.conn)));
  run(a.conn->cancel());
  auto tail = run(rest_of_turn(*a.conn));
  ASSERT_TRUE(tail) << tail.error().message;
  EXPECT_TRUE(messages(*tail).empty());
  ASSERT_TRUE(std::holds_alternative<turn_failed>(tail->back()));
  EXPECT_NE(std::get<turn_failed>(tail->back()).message.find("interrupted"), std::string::npos);
  auto after = run(turn(*a.conn, "Reply with exactly: AFTER"));
  ASSERT_TRUE(after) << after.error().message;
  EXPECT_EQ(messages(*after), std::vector<std::string>{"AFTER"});
}

TEST_F(codex_app_server_test, deny_all_declines_a_command_and_nothing_is_written) {
  if (codex_.empty()) return;
  auto& a = spawn(agent_permissions::deny_all);
  ASSERT_TRUE(run(a.conn->open({})));
  auto evs = run(turn(*a.conn, "Write file denied.txt: no\nReply with exactly: DENIED"));
  ASSERT_TRUE(evs) << evs.error().message;
  const auto ends = all_of<tool_end>(*evs);
  ASSERT_EQ(ends.size(), 1U);
  EXPECT_FALSE(ends[0].ok);
  EXPECT_EQ(ends[0].output, "declined");
  EXPECT_EQ(messages(*evs), std::vector<std::string>{"DENIED"});
  EXPECT_FALSE(fs::exists(workspace() / "denied.txt"));
}

TEST_F(codex_app_server_test, approve_reads_runs_a_read_and_declines_a_write) {
  if (codex_.empty()) return;
  std::ofstream(workspace() / "seen.txt") << "visible\n";
  auto& a = spawn(agent_permissions::approve_reads);
  ASSERT_TRUE(run(a.conn->open({})));
  auto evs = run(turn(*a.conn, "Run: cat seen.txt\nWrite file written.txt: no\nReply with exactly: READ"));
  ASSERT_TRUE(evs) << evs.error().message;
  const auto ends = all_of<tool_end>(*evs);
  ASSERT_EQ(ends.size(), 2U);
  EXPECT_TRUE(ends[0].ok) << ends[0].output;
  EXPECT_NE(ends[0].output.find("visible"), std::string::npos);
  EXPECT_FALSE(ends[1].ok);
  EXPECT_FALSE(fs::exists(workspace() / "written.txt"));
}

TEST_F(codex_app_server_test, a_process_killed_mid_turn_ends_next_with_rpc_closed) {
  if (codex_.empty()) return;
  auto& a = spawn();
  ASSERT_TRUE(run(a.conn->open({})));
  ASSERT_TRUE(run(a.conn->start_turn("Wait for file never.txt\nReply with exactly: NEVER")));
  ASSERT_TRUE(run(until_tool(*a.conn)));
  a.proc->signal(SIGKILL);
  auto tail = run(rest_of_turn(*a.conn));
  ASSERT_FALSE(tail);
  EXPECT_EQ(tail.error(), agent_errc::rpc_closed) << tail.error().message;
}

TEST_F(codex_app_server_test, close_mid_turn_returns_and_codex_exits) {
  if (codex_.empty()) return;
  auto& a = spawn();
  ASSERT_TRUE(run(a.conn->open({})));
  ASSERT_TRUE(run(a.conn->start_turn("Wait for file never.txt\nReply with exactly: NEVER")));
  ASSERT_TRUE(run(until_tool(*a.conn)));
  EXPECT_TRUE(run(stop(a), 20s)) << "codex did not exit when its stdin closed";
}

TEST_F(codex_app_server_test, output_that_is_not_json_rpc_is_a_protocol_error) {
  if (codex_.empty()) return;
  process::spawn_options so;
  so.argv = {"/bin/sh", "-c", "read line; echo 'this is not JSON'; cat >/dev/null"};
  so.stdin_mode = process::input::pipe;
  auto& a = start(std::move(so), *make_codex_app_server());
  auto r = run(a.conn->open({}));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), agent_errc::protocol) << r.error().message;
  auto n = run(a.conn->next());
  ASSERT_FALSE(n);
  EXPECT_EQ(n.error(), agent_errc::protocol);
}

}  // namespace
}  // namespace tether::runtime::agent
