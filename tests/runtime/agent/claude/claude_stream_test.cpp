// claude stream-json as a warm process (warm_dialect.h): the real Claude Code
// against the in-process scripted model, spawned as the runtime spawns it.
// Skipped without the CLI (support/agents.h). Every coroutine runs on a
// strand with a deadline: a bug fails a test instead of hanging it.
#include "runtime/agent/warm_dialect.h"

#include <signal.h>

#include <fstream>
#include <future>

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_future.hpp>

#include "mock/request.h"
#include "mock/script.h"
#include "mock/server.h"
#include "mock/usage.h"
#include "process/child.h"
#include "runtime/agent/agent_env.h"
#include "runtime/agent/agent_runtime.h"
#include "runtime/agent/errors.h"
#include "runtime/agent/json_lines.h"
#include "runtime/agent/claude/claude_stream_support.h"
#include "support/agents.h"

namespace tether::runtime::agent {
namespace {

using namespace warm_test;

// What the scripted model reported for the requests after `after`: each
// request replayed through the mock's own accounting, the simulated prompt
// cache from the server's first request on.
model::usage reported_usage(const mock::server& srv, std::size_t after) {
  mock::prompt_cache cache;
  model::usage u;
  for (const auto& r : srv.requests()) {
    const auto& rec = r.as_object();
    if (rec.at("route").as_string() != "/v1/messages") continue;
    auto conv = mock::parse_request(mock::wire_format::anthropic, rec.at("body"));
    if (!conv) continue;
    auto d = mock::decide(*conv);
    if (d.output.call) d.output.call->id = "toolu_" + std::string(26, '0');
    const auto in = static_cast<std::int64_t>(mock::input_tokens(*conv));
    const auto cached = std::min(static_cast<std::int64_t>(cache.lookup_and_remember(mock::canonical_segments(*conv))), in);
    if (rec.at("seq").to_number<std::size_t>() <= after) continue;
    u.input_tokens += in;
    u.cached_input_tokens += cached;
    u.output_tokens += static_cast<std::int64_t>(mock::output_tokens(d.output));
  }
  return u;
}

std::size_t last_seq(const mock::server& srv) {
  const auto all = srv.requests();
  return all.empty() ? 0 : all.back().as_object().at("seq").to_number<std::size_t>();
}

// Whether some model request after `after` carries `text`.
bool requested_with(const mock::server& srv, std::size_t after, std::string_view text) {
  for (const auto& r : srv.requests(after))
    if (json::serialize(r.as_object().at("body")).find(text) != std::string::npos) return true;
  return false;
}

// The command line, without running anything.
std::vector<std::string> argv_of(const agent_settings& settings, std::optional<std::string> resume) {
  test::temp_dir home;
  launch_input in;
  in.program = "/bin/claude";
  in.home = home.path();
  in.workspace = home.path();
  in.resume = std::move(resume);
  in.endpoint = {"http://127.0.0.1:1", "scripted", "ANTHROPIC_API_KEY"};
  in.settings = &settings;
  auto l = make_claude_stream()->prepare(in);
  EXPECT_TRUE(l);
  if (l) {
    EXPECT_EQ(l->env.at("ANTHROPIC_BASE_URL"), "http://127.0.0.1:1");
  }
  return l ? l->argv : std::vector<std::string>{};
}

std::optional<std::string> after(const std::vector<std::string>& argv, std::string_view flag) {
  for (std::size_t i = 0; i + 1 < argv.size(); ++i)
    if (argv[i] == flag) return argv[i + 1];
  return std::nullopt;
}

TEST(claude_stream_launch, a_new_session_is_named_up_front_and_a_resume_is_passed_on) {
  agent_settings s;
  const auto fresh = argv_of(s, std::nullopt);
  EXPECT_EQ(after(fresh, "--input-format"), "stream-json");
  EXPECT_EQ(after(fresh, "--output-format"), "stream-json");
  EXPECT_EQ(after(fresh, "--permission-prompt-tool"), "stdio");
  EXPECT_NE(std::find(fresh.begin(), fresh.end(), "--replay-user-messages"), fresh.end());
  const auto id = after(fresh, "--session-id");
  ASSERT_TRUE(id);
  EXPECT_EQ(id->size(), 36U);
  EXPECT_EQ((*id)[14], '4');  // a version 4 UUID
  EXPECT_NE(after(argv_of(s, std::nullopt), "--session-id"), id);  // fresh each time
  EXPECT_FALSE(after(fresh, "--resume"));
  const auto resumed = argv_of(s, "abc");
  EXPECT_EQ(after(resumed, "--resume"), "abc");
  EXPECT_FALSE(after(resumed, "--session-id"));
}

TEST(claude_stream_launch, deny_all_takes_the_reads_that_never_ask_away) {
  agent_settings s;
  s.permissions = agent_permissions::deny_all;
  EXPECT_EQ(after(argv_of(s, std::nullopt), "--disallowedTools"), "AskUserQuestion Read Glob Grep LS");
  // Claude's own question tool is never offered: questions go through Tether.
  s.permissions = agent_permissions::approve_reads;
  EXPECT_EQ(after(argv_of(s, std::nullopt), "--disallowedTools"), "AskUserQuestion");
}

class claude_stream : public warm_fixture {
 protected:
  void SetUp() override {
    claude_ = ::tether::test::require_agent("claude");
    if (claude_.empty()) return;
    ASSERT_TRUE(srv_.start());
    dialect_ = make_claude_stream();
    settings_.permissions = agent_permissions::approve_all;
  }

  std::unique_ptr<warm_agent> launch(std::optional<std::string> resume = std::nullopt) {
    return spawn(*dialect_, claude_, srv_.base_url(), "scripted", std::move(resume));
  }

  std::filesystem::path claude_;
  mock::server srv_{{}};
  std::unique_ptr<warm_dialect> dialect_;
};

TEST_F(claude_stream, a_plain_reply_reports_the_session_the_text_and_the_models_usage) {
  auto a = launch();
  ASSERT_TRUE(a);
  auto id = run(a->conn->open({}));
  ASSERT_TRUE(id) << id.error().message;
  auto t = run(play(*a, "Reply with exactly: WARM HELLO"));
  ASSERT_TRUE(t.done) << t.describe();
  EXPECT_EQ(t.messages.back(), "WARM HELLO");
  ASSERT_FALSE(t.sessions.empty());
  EXPECT_EQ(t.sessions.front(), *id);
  EXPECT_EQ(t.usage, reported_usage(srv_, 0));
  EXPECT_GT(t.usage.input_tokens, 0);
  EXPECT_GT(t.usage.output_tokens, 0);
  ASSERT_TRUE(t.cost);
  EXPECT_GE(*t.cost, 0.0);
  EXPECT_TRUE(requested_with(srv_, 0, "Reply with exactly: WARM HELLO"));
  finish(*a);
}

TEST_F(claude_stream, a_tool_writes_a_file_then_the_agent_replies) {
  auto a = launch();
  ASSERT_TRUE(a);
  ASSERT_TRUE(run(a->conn->open({})));
  const auto file = workspace() / "out.txt";
  auto t = run(play(*a, "Write file " + file.string() + ": warm\\n\nReply with exactly: WROTE"));
  ASSERT_TRUE(t.done) << t.describe();
  ASSERT_EQ(t.starts.size(), 1U);
  EXPECT_EQ(t.starts[0].tool, "Write");
  ASSERT_EQ(t.ends.size(), 1U);
  EXPECT_EQ(t.ends[0].id, t.starts[0].id);
  EXPECT_TRUE(t.ends[0].ok) << t.ends[0].output;
  EXPECT_EQ(read_file(file), "warm\n");
  EXPECT_EQ(t.messages.back(), "WROTE");
  EXPECT_EQ(t.usage, reported_usage(srv_, 0));
  finish(*a);
}

TEST_F(claude_stream, two_turns_in_one_process_share_the_context) {
  auto a = launch();
  ASSERT_TRUE(a);
  auto id = run(a->conn->open({}));
  ASSERT_TRUE(id);
  auto first = run(play(*a, "Remember the phrase: amber heron"));
  ASSERT_TRUE(first.done) << first.describe();
  const auto before = last_seq(srv_);
  auto second = run(play(*a, "Recall the phrase."));
  ASSERT_TRUE(second.done) << second.describe();
  EXPECT_EQ(second.messages.back(), "amber heron");
  EXPECT_EQ(second.usage, reported_usage(srv_, before));  // the second turn's own figures
  for (const auto& s : second.sessions) EXPECT_EQ(s, *id);
  finish(*a);
}

TEST_F(claude_stream, a_new_process_resuming_the_session_continues_it) {
  std::string id;
  {
    auto a = launch();
    ASSERT_TRUE(a);
    auto opened = run(a->conn->open({}));
    ASSERT_TRUE(opened);
    id = *opened;
    ASSERT_TRUE(run(play(*a, "Remember the phrase: violet kite")).done);
    finish(*a);
  }
  auto b = launch(id);
  ASSERT_TRUE(b);
  auto opened = run(b->conn->open({.resume = id}));
  ASSERT_TRUE(opened) << opened.error().message;
  EXPECT_EQ(*opened, id);
  auto t = run(play(*b, "Recall the phrase."));
  ASSERT_TRUE(t.done) << t.describe();
  EXPECT_EQ(t.messages.back(), "violet kite");
  finish(*b);
}

TEST_F(claude_stream, resuming_a_session_claude_does_not_know_is_refused) {
  const std::string unknown = "0b5e4a8c-1f2d-4e6a-9c3b-7d8e9f0a1b2c";
  auto a = launch(unknown);
  ASSERT_TRUE(a);
  auto opened = run(a->conn->open({.resume = unknown}));
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error(), agent_errc::resume_refused);
  EXPECT_NE(opened.error().message.find(unknown), std::string::npos) << opened.error().message;
  finish(*a);
}

TEST_F(claude_stream, a_steer_written_mid_turn_is_answered_in_the_same_turn) {
  auto a = launch();
  ASSERT_TRUE(a);
  ASSERT_TRUE(run(a->conn->open({})));
  const auto go = workspace() / "go";
  turn_plan plan;
  plan.prompt = "Wait for file " + go.string() + "\nReply with exactly: FIRST";
  plan.on_tool = action::steer;
  plan.steer_text = "Reply with exactly: STEERED";
  plan.after_action = go;  // the tool ends once the steer is written
  auto t = run(play(*a, plan));
  ASSERT_TRUE(t.done) << t.describe();
  ASSERT_TRUE(t.steered);
  EXPECT_TRUE(*t.steered);
  EXPECT_EQ(t.messages.back(), "STEERED");
  EXPECT_TRUE(requested_with(srv_, 0, "Reply with exactly: STEERED"));
  EXPECT_EQ(t.usage, reported_usage(srv_, 0));
  // Nothing of that turn spills into the next one.
  const auto before = last_seq(srv_);
  auto next = run(play(*a, "Reply with exactly: AFTER"));
  ASSERT_TRUE(next.done) << next.describe();
  EXPECT_EQ(next.messages, std::vector<std::string>{"AFTER"});
  EXPECT_EQ(next.usage, reported_usage(srv_, before));
  finish(*a);
}

TEST_F(claude_stream, no_turn_runs_so_a_steer_is_not_taken) {
  auto a = launch();
  ASSERT_TRUE(a);
  ASSERT_TRUE(run(a->conn->open({})));
  auto s = run(a->conn->steer("Reply with exactly: LOST"));
  ASSERT_TRUE(s);
  EXPECT_FALSE(*s);
  finish(*a);
}

TEST_F(claude_stream, cancel_ends_the_running_turn_and_the_process_takes_another) {
  auto a = launch();
  ASSERT_TRUE(a);
  ASSERT_TRUE(run(a->conn->open({})));
  turn_plan plan;
  plan.prompt = "Wait for file " + (workspace() / "never").string() + "\nReply with exactly: NOPE";
  plan.on_tool = action::cancel;
  auto t = run(play(*a, plan));
  EXPECT_FALSE(t.error) << t.describe();
  EXPECT_TRUE(t.failed || t.done) << t.describe();
  for (const auto& m : t.messages) EXPECT_NE(m, "NOPE");
  auto again = run(play(*a, "Reply with exactly: AGAIN"));
  ASSERT_TRUE(again.done) << again.describe();
  EXPECT_EQ(again.messages.back(), "AGAIN");
  finish(*a);
}

TEST_F(claude_stream, deny_all_keeps_the_file_unwritten) {
  settings_.permissions = agent_permissions::deny_all;
  auto a = launch();
  ASSERT_TRUE(a);
  ASSERT_TRUE(run(a->conn->open({})));
  const auto file = workspace() / "denied.txt";
  auto t = run(play(*a, "Write file " + file.string() + ": no\nReply with exactly: TRIED"));
  ASSERT_TRUE(t.done) << t.describe();
  EXPECT_FALSE(std::filesystem::exists(file));
  ASSERT_EQ(t.ends.size(), 1U);
  EXPECT_FALSE(t.ends[0].ok);
  EXPECT_EQ(t.messages.back(), "TRIED");
  finish(*a);
}

TEST_F(claude_stream, approve_reads_denies_a_write) {
  settings_.permissions = agent_permissions::approve_reads;
  auto a = launch();
  ASSERT_TRUE(a);
  ASSERT_TRUE(run(a->conn->open({})));
  const auto file = workspace() / "denied.txt";
  auto t = run(play(*a, "Write file " + file.string() + ": no\nReply with exactly: TRIED"));
  ASSERT_TRUE(t.done) << t.describe();
  EXPECT_FALSE(std::filesystem::exists(file));
  ASSERT_EQ(t.ends.size(), 1U);
  EXPECT_FALSE(t.ends[0].ok);
  finish(*a);
}

TEST_F(claude_stream, the_process_killed_mid_turn_ends_next_with_rpc_closed) {
  auto a = launch();
  ASSERT_TRUE(a);
  ASSERT_TRUE(run(a->conn->open({})));
  turn_plan plan;
  plan.prompt = "Wait for file " + (workspace() / "never").string() + "\nReply with exactly: NOPE";
  plan.on_tool = action::kill;
  auto t = run(play(*a, plan));
  ASSERT_TRUE(t.error) << t.describe();
  EXPECT_EQ(*t.error, agent_errc::rpc_closed) << t.error->message;
  finish(*a);
}

TEST_F(claude_stream, close_returns_promptly_even_when_claude_hangs) {
  auto a = launch();
  ASSERT_TRUE(a);
  ASSERT_TRUE(run(a->conn->open({})));
  a->proc->signal(SIGSTOP);
  run(a->conn->close(), std::chrono::seconds(5));  // a hang fails here
  a->proc->signal(SIGCONT);
  finish(*a);
}

// A fake claude (sh reading its stdin line by line): the connection's reading
// of the protocol, deterministic.
class claude_stream_protocol : public warm_fixture {
 protected:
  std::unique_ptr<warm_agent> fake(const std::string& script) {
    settings_.permissions = agent_permissions::approve_all;
    return start(*dialect_, {"/bin/sh", "-c", script, "sh", "--session-id", "fake-session"},
                 {"PATH=/usr/bin:/bin"});
  }
  std::unique_ptr<warm_dialect> dialect_ = make_claude_stream();
};

constexpr std::string_view initialized =
    R"(read l; echo '{"type":"control_response","response":{"subtype":"success","request_id":"tether-initialize"}}'; )";

TEST_F(claude_stream_protocol, open_names_the_session_of_the_command_line) {
  auto a = fake(std::string(initialized) + "read l");
  ASSERT_TRUE(a);
  auto id = run(a->conn->open({}));
  ASSERT_TRUE(id) << id.error().message;
  EXPECT_EQ(*id, "fake-session");
  finish(*a);
}

TEST_F(claude_stream_protocol, a_steer_queued_as_its_own_claude_turn_belongs_to_the_same_turn) {
  // Claude finishes the prompt's turn after the steer was written, then runs
  // the steer as a turn of its own (echoed when taken).
  auto a = fake(std::string(initialized) +
                R"(read l; echo '{"type":"user","isReplay":true,"message":{"role":"user","content":[]}}'; )"
                R"(read l; echo '{"type":"assistant","message":{"content":[{"type":"text","text":"FIRST"}]}}'; )"
                R"(echo '{"type":"result","subtype":"success","is_error":false,"total_cost_usd":0.5,"usage":{"input_tokens":10,"output_tokens":2}}'; )"
                R"(echo '{"type":"user","isReplay":true,"message":{"role":"user","content":[]}}'; )"
                R"(echo '{"type":"assistant","message":{"content":[{"type":"text","text":"STEERED"}]}}'; )"
                R"(echo '{"type":"result","subtype":"success","is_error":false,"total_cost_usd":0.75,"usage":{"input_tokens":20,"output_tokens":3}}'; )"
                R"(read l)");
  ASSERT_TRUE(a);
  ASSERT_TRUE(run(a->conn->open({})));
  ASSERT_TRUE(run(a->conn->start_turn("Do it")));
  auto s = run(a->conn->steer("And this"));
  ASSERT_TRUE(s && *s);
  auto t = run(collect(*a));
  ASSERT_TRUE(t.done) << t.describe();
  EXPECT_EQ(t.messages, (std::vector<std::string>{"FIRST", "STEERED"}));
  EXPECT_EQ(t.usage.input_tokens, 30);
  EXPECT_EQ(t.usage.output_tokens, 5);
  ASSERT_TRUE(t.cost);
  EXPECT_DOUBLE_EQ(*t.cost, 0.75);  // total_cost_usd is the process's running total
  finish(*a);
}

TEST_F(claude_stream_protocol, garbage_during_a_turn_is_a_protocol_error) {
  auto a = fake(std::string(initialized) +
                R"(read l; echo '{"type":"system","subtype":"init","session_id":"fake-session"}'; echo 'oops {'; read l)");
  ASSERT_TRUE(a);
  ASSERT_TRUE(run(a->conn->open({})));
  auto t = run(play(*a, "Reply"));
  ASSERT_TRUE(t.error) << t.describe();
  EXPECT_EQ(*t.error, agent_errc::protocol);
  EXPECT_EQ(t.sessions, std::vector<std::string>{"fake-session"});
  finish(*a);
}

TEST_F(claude_stream_protocol, exiting_before_the_handshake_is_rpc_closed) {
  auto a = fake("exit 3");
  ASSERT_TRUE(a);
  auto id = run(a->conn->open({}));
  ASSERT_FALSE(id);
  // The fake is not started through prepare(), so open() may refuse its
  // command line before it reads the output that never comes.
  EXPECT_TRUE(id.error() == agent_errc::rpc_closed || id.error() == agent_errc::protocol) << id.error().describe();
  finish(*a);
}

}  // namespace
}  // namespace tether::runtime::agent
