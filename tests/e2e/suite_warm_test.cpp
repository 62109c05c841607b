// The suite format's warm agent runtimes: their profiles, the agent-process
// matchers, and how the repository's suites apply to them.
#include "e2e/suite.h"

#include <gtest/gtest.h>
#include <boost/json.hpp>

namespace tether::e2e {
namespace {

result<catalogue> parse(std::string_view toml) { return parse_catalogue(toml, "suites/x.toml"); }

std::string profile_toml(std::string_view runtime, std::string_view more = "") {
  return "[profiles.p]\ntitle = \"P\"\nruntime = \"" + std::string(runtime) + "\"\n" + std::string(more);
}

bool refused_with(const result<catalogue>& cat, std::string_view words) {
  return !cat && cat.error() == e2e_errc::invalid_definition && cat.error().message.find(words) != std::string::npos;
}

// ---- profiles ----

TEST(warm_profiles, every_warm_kind_is_a_runtime_kind_with_no_provider) {
  for (const auto kind : warm_runtime_kinds) {
    const std::string more = kind == "acp" ? "command = \"/bin/agent\"\n" : "";
    auto cat = parse(profile_toml(kind, more));
    ASSERT_TRUE(cat) << kind << ": " << cat.error().describe();
    EXPECT_EQ(cat->profiles.at("p").runtime, kind);
    EXPECT_EQ(cat->profiles.at("p").provider, "");
    EXPECT_FALSE(cat->profiles.at("p").keep_alive_ms);
    EXPECT_FALSE(cat->profiles.at("p").max_processes);
    EXPECT_TRUE(is_warm_runtime(kind));
    EXPECT_TRUE(refused_with(parse(profile_toml(kind, more + "provider = \"anthropic\"\n")),
                             "\"provider\" does not belong to a " + std::string(kind) + " profile"))
        << kind;
  }
  for (const auto kind : per_turn_runtime_kinds) EXPECT_FALSE(is_warm_runtime(kind)) << kind;
  EXPECT_FALSE(is_warm_runtime("native"));
}

TEST(warm_profiles, keep_alive_and_max_processes_are_read_when_given) {
  auto cat = parse(profile_toml("claude", "keep_alive_ms = 30000\nmax_processes = 3\n"));
  ASSERT_TRUE(cat) << cat.error().describe();
  EXPECT_EQ(cat->profiles.at("p").keep_alive_ms, 30000);
  EXPECT_EQ(cat->profiles.at("p").max_processes, 3);
}

TEST(warm_profiles, keep_alive_and_max_processes_have_the_servers_lower_bounds) {
  EXPECT_TRUE(refused_with(parse(profile_toml("codex", "keep_alive_ms = 99\n")), "\"keep_alive_ms\" is 99"));
  EXPECT_TRUE(refused_with(parse(profile_toml("codex", "max_processes = 0\n")), "\"max_processes\" is 0"));
  EXPECT_TRUE(refused_with(parse(profile_toml("codex", "max_processes = \"2\"\n")), "must be an integer"));
}

TEST(warm_profiles, the_warm_keys_belong_to_the_warm_kinds_only) {
  for (const char* kind : {"codex-exec", "claude-print", "opencode-run"})
    EXPECT_TRUE(refused_with(parse(profile_toml(kind, "keep_alive_ms = 1000\n")),
                             "\"keep_alive_ms\" does not belong to a " + std::string(kind) + " profile"))
        << kind;
  EXPECT_TRUE(refused_with(parse(profile_toml("native", "provider = \"anthropic\"\nmax_processes = 2\n")),
                           "\"max_processes\" does not belong to a native profile"));
}

TEST(warm_profiles, the_opencode_kinds_take_a_wire_and_the_others_do_not) {
  for (const char* kind : {"opencode", "acp-opencode"}) {
    auto cat = parse(profile_toml(kind, "wire = \"responses\"\n"));
    ASSERT_TRUE(cat) << kind << ": " << cat.error().describe();
    EXPECT_EQ(cat->profiles.at("p").wire, "responses");
    EXPECT_TRUE(refused_with(parse(profile_toml(kind, "wire = \"grpc\"\n")), "\"wire\" is \"grpc\"")) << kind;
  }
  for (const char* kind : {"codex", "claude", "acp-codex", "acp-claude"})
    EXPECT_TRUE(refused_with(parse(profile_toml(kind, "wire = \"chat\"\n")), "\"wire\" does not belong")) << kind;
}

TEST(warm_profiles, acp_requires_its_command_and_no_other_kind_takes_one) {
  auto cat = parse(profile_toml("acp", "command = \"/opt/agent/bin/acp\"\n"));
  ASSERT_TRUE(cat) << cat.error().describe();
  EXPECT_EQ(cat->profiles.at("p").command, "/opt/agent/bin/acp");
  EXPECT_TRUE(refused_with(parse(profile_toml("acp")), "missing \"command\""));
  EXPECT_TRUE(refused_with(parse(profile_toml("acp", "command = \"\"\n")), "\"command\" must not be empty"));
  EXPECT_TRUE(refused_with(parse(profile_toml("acp-codex", "command = \"/bin/x\"\n")),
                           "\"command\" does not belong to a acp-codex profile"));
}

// ---- not applicable ----

const std::string suite_head = R"(
[profiles.p1]
title = "P"
provider = "openai-chat"
[environments.local]
title = "Local"
[suite]
id = "s"
title = "S"
profiles = ["p1"]
environments = ["local"]
[[cases]]
id = "c"
title = "C"
steps = [{ do = "create_session" }, { do = "stop" }]
)";

TEST(warm_not_applicable, may_name_every_warm_kind) {
  std::string table;
  for (const auto kind : warm_runtime_kinds)
    table += (table.empty() ? "" : ", ") + ("\"" + std::string(kind) + "\" = \"why\"");
  auto cat = parse(suite_head + "not_applicable = { " + table + " }\n");
  ASSERT_TRUE(cat) << cat.error().describe();
  EXPECT_EQ(cat->suites.at(0).cases.at(0).not_applicable.size(), warm_runtime_kinds.size());
}

// ---- the agent-process matchers ----

TEST(agent_process_matchers, parse_with_and_without_the_runs_they_judge) {
  auto cat = parse(suite_head +
                   "matchers = [{ kind = \"same_agent_process\" }, { kind = \"same_agent_process\", runs = [1, 3] }, "
                   "{ kind = \"new_agent_process\" }]\n");
  ASSERT_TRUE(cat) << cat.error().describe();
  const auto& m = cat->suites.at(0).cases.at(0).matchers;
  ASSERT_EQ(m.size(), 3U);
  EXPECT_EQ(m[0].kind, matcher_kind::same_agent_process);
  EXPECT_TRUE(m[0].runs.empty());
  EXPECT_EQ(m[1].runs, (std::vector<std::int64_t>{1, 3}));
  EXPECT_EQ(m[2].kind, matcher_kind::new_agent_process);
  EXPECT_EQ(to_string(matcher_kind::same_agent_process), "same_agent_process");
  EXPECT_EQ(to_string(matcher_kind::new_agent_process), "new_agent_process");
}

TEST(agent_process_matchers, runs_must_be_distinct_positive_integers) {
  const auto with = [](std::string_view runs) {
    return parse(suite_head + "matchers = [{ kind = \"same_agent_process\", runs = " + std::string(runs) + " }]\n");
  };
  EXPECT_TRUE(refused_with(with("[0]"), "\"runs\" has 0; each must be at least 1"));
  EXPECT_TRUE(refused_with(with("[]"), "\"runs\" must be a non-empty array of integers"));
  EXPECT_TRUE(refused_with(with("[\"1\"]"), "\"runs\" must be a non-empty array of integers"));
  EXPECT_TRUE(refused_with(with("2"), "\"runs\" must be a non-empty array of integers"));
  EXPECT_TRUE(refused_with(with("[1, 2, 1]"), "\"runs\" names 1 twice"));
  EXPECT_TRUE(refused_with(parse(suite_head + "matchers = [{ kind = \"new_agent_process\", runs = [1] }]\n"),
                           "\"runs\" does not belong to a new_agent_process matcher"));
}

TEST(agent_process_matchers, runs_are_part_of_the_definition_hash) {
  const auto suite_with = [](std::string_view matcher) {
    auto cat = parse(suite_head + "matchers = [" + std::string(matcher) + "]\n");
    EXPECT_TRUE(cat) << cat.error().describe();
    return cat ? cat->suites.at(0) : suite_def{};
  };
  const auto all = suite_with(R"({ kind = "same_agent_process" })");
  const auto some = suite_with(R"({ kind = "same_agent_process", runs = [1, 2] })");
  EXPECT_NE(definition_hash(all), definition_hash(some));
  const auto matcher = [](const suite_def& s) {
    return boost::json::parse(canonical_json(s)).at("cases").at(0).at("matchers").at(0);
  };
  EXPECT_EQ(matcher(all), (boost::json::value{{"kind", "same_agent_process"}, {"runs", boost::json::array{}}}));
  EXPECT_EQ(matcher(some), (boost::json::value{{"kind", "same_agent_process"}, {"runs", {1, 2}}}));
  EXPECT_EQ(matcher(suite_with(R"({ kind = "new_agent_process" })")),
            (boost::json::value{{"kind", "new_agent_process"}}));
}

}  // namespace
}  // namespace tether::e2e
