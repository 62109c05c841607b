// The real ACP agents (codex-acp, claude-agent-acp, opencode acp) as warm
// processes through make_acp, against the in-process scripted model: what
// they answer, what they send the model, resuming in a new process, cancel,
// permissions and a death mid-turn. Skipped without the agents
// (support/agents.h).
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <boost/json/serialize.hpp>

#include "mock/request.h"
#include "mock/server.h"
#include "mock/usage.h"
#include "runtime/agent/acp/acp_test_support.h"
#include "runtime/agent/errors.h"
#include "support/agents.h"

namespace tether::runtime::agent {
namespace {

using namespace test;  // NOLINT(google-build-using-namespace)

struct acp_case {
  std::string kind;     // the runtime kind's name (the test's)
  acp_agent agent;      // make_acp's
  std::string program;  // programs.h's
  std::string model;
  bool reports_usage;
  // Whether the same connection's next prompt after a session/cancel is
  // answered: claude-agent-acp answers it with the cancelled query's leftover
  // result (the warm runtime replaces such a process: replace_after_cancel).
  bool prompts_after_cancel;
};

std::ostream& operator<<(std::ostream& os, const acp_case& a) { return os << a.kind; }

const std::vector<acp_case> agents = {
    // codex-acp glues a "Model metadata not found" warning into the message
    // for slugs it does not know, and reports no usage.
    {"acp-codex", acp_agent::codex, "codex-acp", "gpt-5.5", false, true},
    {"acp-claude", acp_agent::claude, "claude-agent-acp", "scripted", true, false},
    {"acp-opencode", acp_agent::opencode, "opencode", "scripted", true, true},
};

std::string read(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), {}};
}

bool has_tool(const std::vector<agent_event>& evs) { return !all_of<tool_start>(evs).empty(); }

class acp_real : public testing::TestWithParam<acp_case> {
 protected:
  void SetUp() override {
    program_ = tether::test::require_agent(GetParam().program);
    if (program_.empty()) return;
    ASSERT_TRUE(mock_.start());
    s_ = std::make_unique<acp_session>(make_acp(GetParam().agent));
    s_->endpoint = {s_->dialect().scripted_base_url(mock_.base_url()), GetParam().model, ""};
  }
  void TearDown() override {
    if (s_) s_->stop();
  }
  // Starts the agent and opens a session (resumed when given).
  bool begin(std::optional<std::string> resume = std::nullopt) {
    if (!s_->start(program_, resume)) return false;
    auto id = s_->open(resume);
    EXPECT_TRUE(id) << id.error().describe();
    if (id) session_ = *id;
    return id.has_value();
  }
  // The next events until one satisfies `pred` (false: the turn or the output ended first).
  bool until(const std::function<bool(const std::vector<agent_event>&)>& pred, turn_outcome& seen) {
    for (;;) {
      auto evs = s_->next();
      if (!evs) {
        seen.error = evs.error();
        return false;
      }
      for (auto& e : *evs) seen.events.push_back(std::move(e));
      if (pred(seen.events)) return true;
      const auto& last = seen.events.back();
      if (std::holds_alternative<turn_done>(last) || std::holds_alternative<turn_failed>(last)) return false;
    }
  }
  // Every model request's body so far, serialized (what the agent sent).
  std::string requests_text() const {
    std::string all;
    for (const auto& r : mock_.requests()) all += json::serialize(r) + "\n";
    return all;
  }

  fs::path program_;
  mock::server mock_{{}};
  std::unique_ptr<acp_session> s_;
  std::string session_;
};

TEST_P(acp_real, answers_a_plain_prompt) {
  if (program_.empty()) return;
  ASSERT_TRUE(begin());
  EXPECT_FALSE(session_.empty());
  auto t = s_->turn("Reply with exactly: PLAIN-ANSWER-7");
  ASSERT_TRUE(t.done()) << (t.error ? t.error->describe() : t.failure());
  EXPECT_NE(messages(t.events).find("PLAIN-ANSWER-7"), std::string::npos) << messages(t.events);
  EXPECT_FALSE(all_of<text_piece>(t.events).empty());
  const auto requests = mock_.requests();
  ASSERT_FALSE(requests.empty());
  const auto usage = all_of<turn_usage>(t.events);
  if (!GetParam().reports_usage) return;
  ASSERT_EQ(usage.size(), 1u);
  // What the agent reports is what the scripted model said: its input counts
  // summed over the turn's requests that carried the prompt and offered the
  // agent's tools. A request without tools is the agent's own side work
  // (opencode titles a new ACP session with its small model), which it
  // leaves out of the usage it reports.
  std::int64_t input = 0;
  std::string counted;  // which requests were counted, for the failure message
  for (const auto& r : requests) {
    const auto& o = r.as_object();
    if (json::serialize(o.at("body")).find("PLAIN-ANSWER-7") == std::string::npos) continue;
    const auto route = std::string(o.at("route").as_string());
    const auto wire = route.find("messages") != std::string::npos  ? mock::wire_format::anthropic
                      : route.find("responses") != std::string::npos ? mock::wire_format::responses
                                                                     : mock::wire_format::chat;
    auto c = mock::parse_request(wire, o.at("body"));
    ASSERT_TRUE(c) << c.error().describe();
    if (c->tools.empty()) continue;
    const auto n = static_cast<std::int64_t>(mock::input_tokens(*c));
    input += n;
    counted += fmt::format("\n  request {} {}: {} input tokens, {} tools", json::serialize(o.at("seq")), route, n,
                           c->tools.size());
  }
  EXPECT_EQ(usage[0].usage.input_tokens, input) << counted;
  EXPECT_GT(usage[0].usage.output_tokens, 0);
  EXPECT_LE(usage[0].usage.cached_input_tokens, usage[0].usage.input_tokens);
}

TEST_P(acp_real, a_tool_writes_a_file_then_it_replies) {
  if (program_.empty()) return;
  ASSERT_TRUE(begin());
  const auto file = s_->workspace() / "written.txt";
  auto t = s_->turn("Write file " + file.string() + ": written by the agent\nReply with exactly: FILE-DONE");
  ASSERT_TRUE(t.done()) << (t.error ? t.error->describe() : t.failure());
  EXPECT_EQ(read(file), "written by the agent");
  const auto starts = all_of<tool_start>(t.events);
  const auto ends = all_of<tool_end>(t.events);
  ASSERT_FALSE(starts.empty());
  ASSERT_EQ(ends.size(), starts.size());
  EXPECT_EQ(ends.front().id, starts.front().id);
  EXPECT_TRUE(ends.front().ok) << ends.front().output;
  EXPECT_NE(messages(t.events).find("FILE-DONE"), std::string::npos) << messages(t.events);
}

TEST_P(acp_real, two_turns_share_the_context) {
  if (program_.empty()) return;
  ASSERT_TRUE(begin());
  ASSERT_TRUE(s_->turn("Remember the phrase: violet-otter-3").done());
  auto t = s_->turn("Recall the phrase.");
  ASSERT_TRUE(t.done()) << t.failure();
  EXPECT_NE(messages(t.events).find("violet-otter-3"), std::string::npos) << messages(t.events);
}

TEST_P(acp_real, a_new_process_loads_the_session_and_continues_it) {
  if (program_.empty()) return;
  ASSERT_TRUE(begin());
  ASSERT_TRUE(s_->turn("Remember the phrase: amber-heron-9").done());
  const auto first = session_;
  s_->stop();
  const auto before = mock_.requests().size();
  ASSERT_TRUE(begin(first));
  EXPECT_EQ(session_, first);
  auto t = s_->turn("Recall the phrase.");
  ASSERT_TRUE(t.done()) << (t.error ? t.error->describe() : t.failure());
  EXPECT_NE(messages(t.events).find("amber-heron-9"), std::string::npos) << messages(t.events);
  EXPECT_EQ(messages(t.events).find("Noted"), std::string::npos) << "the replay leaked: " << messages(t.events);
  // The resumed request carries the earlier turn.
  const auto after = mock_.requests(before);
  ASSERT_FALSE(after.empty());
  EXPECT_NE(json::serialize(after.back()).find("amber-heron-9"), std::string::npos);
}

TEST_P(acp_real, cancel_ends_a_running_turn) {
  if (program_.empty()) return;
  ASSERT_TRUE(begin());
  ASSERT_TRUE(s_->start_turn("Wait for file " + (s_->workspace() / "never").string() + "\nReply with exactly: NO"));
  turn_outcome t;
  ASSERT_TRUE(until(has_tool, t)) << (t.error ? t.error->describe() : t.failure()) << requests_text();
  s_->cancel();
  t = s_->rest_of_turn(std::move(t), 60s);
  ASSERT_FALSE(t.error) << t.error->describe();
  EXPECT_EQ(messages(t.events).find("NO"), std::string::npos);
  if (!GetParam().prompts_after_cancel) return;
  // The session goes on after it.
  auto next = s_->turn("Reply with exactly: AFTER-CANCEL");
  ASSERT_TRUE(next.done()) << (next.error ? next.error->describe() : next.failure());
  EXPECT_NE(messages(next.events).find("AFTER-CANCEL"), std::string::npos) << messages(next.events);
}

TEST_P(acp_real, deny_all_keeps_the_workspace_unwritten) {
  if (program_.empty()) return;
  s_->settings.permissions = agent_permissions::deny_all;
  ASSERT_TRUE(begin());
  const auto file = s_->workspace() / "denied.txt";
  auto t = s_->turn("Write file " + file.string() + ": should not exist\nReply with exactly: TRIED");
  EXPECT_FALSE(t.error) << t.error->describe();
  EXPECT_FALSE(fs::exists(file));
}

TEST_P(acp_real, an_agent_killed_mid_turn_ends_next_with_rpc_closed) {
  if (program_.empty()) return;
  ASSERT_TRUE(begin());
  ASSERT_TRUE(s_->start_turn("Wait for file " + (s_->workspace() / "never").string()));
  turn_outcome t;
  ASSERT_TRUE(until(has_tool, t)) << (t.error ? t.error->describe() : t.failure());
  s_->kill();
  auto rest = s_->rest_of_turn({}, 30s);
  ASSERT_TRUE(rest.error);
  EXPECT_EQ(*rest.error, agent_errc::rpc_closed);
}

INSTANTIATE_TEST_SUITE_P(agents, acp_real, testing::ValuesIn(agents), [](const auto& info) {
  std::string name = info.param.kind;
  for (auto& c : name)
    if (c == '-') c = '_';
  return name;
});

}  // namespace
}  // namespace tether::runtime::agent
