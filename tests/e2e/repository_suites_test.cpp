// The repository's suites/*.toml: how their cases apply to each runtime
// kind, and the warm-continuity case's shape.
#include "e2e/suite.h"
#include "support/paths.h"

#include <algorithm>
#include <map>

#include <gtest/gtest.h>

namespace tether::e2e {
namespace {

// ---- the repository's suites ----

class repository_suites : public testing::Test {
 protected:
  void SetUp() override {
    auto cat = load_catalogue(std::filesystem::path(test_paths::source_dir()) / "suites");
    ASSERT_TRUE(cat) << cat.error().describe();
    cat_ = std::move(*cat);
  }
  const case_def* find_case(std::string_view suite, std::string_view id) const {
    for (const auto& s : cat_.suites)
      for (const auto& c : s.cases)
        if (s.id == suite && c.id == id) return &c;
    return nullptr;
  }
  catalogue cat_;
};

bool asserts_usage(const case_def& c) {
  return std::any_of(c.matchers.begin(), c.matchers.end(),
                     [](const matcher_spec& m) { return m.kind == matcher_kind::usage_reported; });
}

TEST_F(repository_suites, have_a_profile_for_each_of_the_six_warm_agents) {
  const std::map<std::string, std::string> warm{{"codex-app-server", "codex"},  {"claude-stream", "claude"},
                                                {"opencode-serve", "opencode"}, {"acp-codex", "acp-codex"},
                                                {"acp-claude", "acp-claude"},   {"acp-opencode", "acp-opencode"}};
  for (const auto& [id, runtime] : warm) {
    ASSERT_TRUE(cat_.profiles.contains(id)) << id;
    const auto& p = cat_.profiles.at(id);
    EXPECT_EQ(p.runtime, runtime) << id;
    EXPECT_EQ(p.model_server, "mock") << id;
    // codex-acp warns about a model name it does not know.
    EXPECT_EQ(p.model, id == "acp-codex" ? "gpt-5.5" : "scripted") << id;
    EXPECT_EQ(p.api_key_env, runtime.find("claude") != std::string::npos ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY")
        << id;
  }
}

TEST_F(repository_suites, every_suite_runs_on_the_nine_agent_profiles_and_the_three_native_ones) {
  for (const auto& s : cat_.suites) {
    EXPECT_EQ(s.profiles.size(), 12U) << s.id;
    for (const char* id : {"codex-exec", "claude-print", "opencode-run", "codex-app-server", "claude-stream",
                           "opencode-serve", "acp-codex", "acp-claude", "acp-opencode"})
      EXPECT_NE(std::find(s.profiles.begin(), s.profiles.end(), id), s.profiles.end()) << s.id << " lacks " << id;
  }
}

// A case only the native runtime can run (every agent kind has a reason).
bool native_only(const case_def& c) {
  for (const auto kind : runtime_kinds)
    if (kind != "native" && kind != "acp" && !c.not_applicable.contains(std::string(kind))) return false;
  return true;
}

TEST_F(repository_suites, acp_codex_skips_exactly_the_cases_that_assert_usage_besides_the_native_only_ones) {
  std::size_t skipped = 0;
  std::size_t native = 0;
  for (const auto& s : cat_.suites)
    for (const auto& c : s.cases) {
      if (native_only(c)) {
        ++native;
        continue;
      }
      const bool na = c.not_applicable.contains("acp-codex");
      EXPECT_EQ(na, asserts_usage(c)) << s.id << "." << c.id;
      if (!na) continue;
      ++skipped;
      EXPECT_NE(c.not_applicable.at("acp-codex").find("no token usage"), std::string::npos) << c.id;
    }
  EXPECT_EQ(skipped, 3U);
  EXPECT_EQ(native, 1U) << "task-work's config-freshness";
}

TEST_F(repository_suites, the_warm_kinds_run_every_case_the_per_turn_kinds_run) {
  for (const auto& s : cat_.suites)
    for (const auto& c : s.cases)
      for (const auto kind : warm_runtime_kinds) {
        if ((kind == "acp-codex" && asserts_usage(c)) || native_only(c)) continue;
        EXPECT_FALSE(c.not_applicable.contains(std::string(kind))) << s.id << "." << c.id << " on " << kind;
      }
}

TEST_F(repository_suites, warm_continuity_applies_to_the_warm_kinds_only) {
  const auto* c = find_case("persistent-chat", "warm-continuity");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->not_applicable, (std::map<std::string, std::string>{{"native", "no agent process"},
                                                                   {"codex-exec", "one process per turn"},
                                                                   {"claude-print", "one process per turn"},
                                                                   {"opencode-run", "one process per turn"}}));
}

TEST_F(repository_suites, warm_continuity_builds_context_in_one_process_and_recalls_it_in_a_new_one) {
  const auto* c = find_case("persistent-chat", "warm-continuity");
  ASSERT_NE(c, nullptr);
  // Three turns, a SIGKILL, a fourth turn: each send waits for idle.
  std::vector<std::string> shape;
  for (const auto& s : c->steps)
    shape.push_back(s.kind == step_kind::restart && s.mode == restart_mode::kill ? "kill"
                                                                                 : std::string(to_string(s.kind)));
  EXPECT_EQ(shape, (std::vector<std::string>{"create_session", "send", "wait", "send", "wait", "send", "wait", "kill",
                                             "send", "wait"}));
  EXPECT_EQ(c->steps[1].text, "Remember the phrase: {phrase}");
  EXPECT_EQ(c->steps[5].text, "Recall the phrase.");
  EXPECT_EQ(c->steps[8].text, "Recall the phrase.");
  const auto find = [&](matcher_kind k) {
    return std::find_if(c->matchers.begin(), c->matchers.end(), [k](const matcher_spec& m) { return m.kind == k; });
  };
  ASSERT_NE(find(matcher_kind::same_agent_process), c->matchers.end());
  EXPECT_EQ(find(matcher_kind::same_agent_process)->runs, (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_NE(find(matcher_kind::new_agent_process), c->matchers.end());
  ASSERT_NE(find(matcher_kind::message_exact), c->matchers.end());
  EXPECT_EQ(find(matcher_kind::message_exact)->text, "{phrase}");
  ASSERT_NE(find(matcher_kind::message_occurrences), c->matchers.end());
  EXPECT_EQ(find(matcher_kind::message_occurrences)->count, 2);  // recalled before the kill and after it
  ASSERT_NE(find(matcher_kind::run_count), c->matchers.end());
  EXPECT_EQ(find(matcher_kind::run_count)->count, 4);
}

}  // namespace
}  // namespace tether::e2e
