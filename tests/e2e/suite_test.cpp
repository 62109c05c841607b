#include "e2e/suite.h"
#include "support/paths.h"

#include <fstream>
#include <random>
#include <regex>

#include <gtest/gtest.h>
#include <boost/json.hpp>

namespace tether::e2e {
namespace {

const std::string full_catalogue = R"toml(
[profiles.native-openai-chat]
title = "Native · OpenAI Chat Completions"
runtime = "native"
provider = "openai-chat"
model = "scripted"
model_server = "mock"
api_key_env = "OPENAI_API_KEY"

[profiles.real-anthropic]
title = "Native · Anthropic (real)"
provider = "anthropic"
model = "claude-x"
model_server = "remote"
base_url = "https://api.anthropic.com/v1"

[environments.local]
title = "Local processes"
kind = "local"

[suite]
id = "core-compatibility"
title = "Core compatibility"
description = "The basics."
profiles = ["native-openai-chat", "real-anthropic"]
environments = ["local"]

[[cases]]
id = "basic-reply"
title = "Basic reply with a marker"
mode = "chat"
steps = [
  { do = "create_session" },
  { do = "send", text = "Reply with exactly: {marker}", delivery = "queue" },
  { do = "wait", for = "idle", timeout_ms = 30000 },
  { do = "wait", for = "runs", count = 2 },
  { do = "wait", for = "file", path = "notes.txt" },
  { do = "stop" }, { do = "reset" },
  { do = "answer", option = "Blue {marker}" },
  { do = "answer", other = "free text {marker}" },
  { do = "restart", mode = "kill" },
  { do = "restart" },
  { do = "sleep", ms = 200 },
]
matchers = [
  { kind = "message_exact", text = "{marker}" },
  { kind = "message_occurrences", text = "{marker1}", count = 1 },
  { kind = "message_ordered", texts = ["{marker1}", "{marker2}"] },
  { kind = "message_absent", text = "NO_PHRASE" },
  { kind = "file_exact", path = "notes.txt", content = "T1-{nonce}\nT2-{nonce}\n" },
  { kind = "run_status", status = "succeeded" },
  { kind = "run_status", run = 2, status = "interrupted" },
  { kind = "run_count", count = 3 },
  { kind = "session_status", status = "idle" },
  { kind = "interaction_status", status = "answered" },
  { kind = "runtime", value = "native" },
  { kind = "environment", value = "local" },
  { kind = "usage_reported" },
]

[[cases]]
id = "second"
title = "Second"
steps = [{ do = "create_session" }, { do = "send", text = "hi" }]
)toml";

// A valid file (given its suite's lists) whose single case has the given body.
std::string with_case(std::string_view body, std::string_view profiles = R"(["p1"])",
                      std::string_view environments = R"(["local"])") {
  return std::string(R"(
[profiles.p1]
title = "P"
provider = "openai-chat"
[environments.local]
title = "Local"
[suite]
id = "s"
title = "S"
profiles = )") +
         std::string(profiles) + "\nenvironments = " + std::string(environments) + R"(
[[cases]]
id = "c"
title = "C"
)" + std::string(body) +
         "\n";
}

suite_def only_suite(std::string_view toml, const std::string& origin = "x.toml") {
  auto cat = parse_catalogue(toml, origin);
  EXPECT_TRUE(cat) << cat.error().describe();
  if (!cat || cat->suites.size() != 1) return {};
  return cat->suites.front();
}

TEST(catalogue, a_full_catalogue_reads_every_field) {
  auto cat = parse_catalogue(full_catalogue, "suites/core.toml");
  ASSERT_TRUE(cat) << cat.error().describe();
  ASSERT_EQ(cat->profiles.size(), 2U);
  const auto& p = cat->profiles.at("native-openai-chat");
  EXPECT_EQ(p.id, "native-openai-chat");
  EXPECT_EQ(p.title, "Native · OpenAI Chat Completions");
  EXPECT_EQ(p.runtime, "native");
  EXPECT_EQ(p.provider, "openai-chat");
  EXPECT_EQ(p.model, "scripted");
  EXPECT_EQ(p.model_server, "mock");
  EXPECT_EQ(p.api_key_env, "OPENAI_API_KEY");
  const auto& real = cat->profiles.at("real-anthropic");
  EXPECT_EQ(real.runtime, "native");
  EXPECT_EQ(real.model_server, "remote");
  EXPECT_EQ(real.base_url, "https://api.anthropic.com/v1");
  EXPECT_EQ(cat->environments.at("local").kind, "local");
  EXPECT_EQ(cat->environments.at("local").title, "Local processes");

  ASSERT_EQ(cat->suites.size(), 1U);
  const auto& s = cat->suites[0];
  EXPECT_EQ(s.id, "core-compatibility");
  EXPECT_EQ(s.title, "Core compatibility");
  EXPECT_EQ(s.description, "The basics.");
  EXPECT_EQ(s.profiles, (std::vector<std::string>{"native-openai-chat", "real-anthropic"}));
  EXPECT_EQ(s.environments, (std::vector<std::string>{"local"}));
  EXPECT_EQ(s.file, std::filesystem::path("suites/core.toml"));
  ASSERT_EQ(s.cases.size(), 2U);

  const auto& c = s.cases[0];
  EXPECT_EQ(c.id, "basic-reply");
  EXPECT_EQ(c.mode, "chat");
  ASSERT_EQ(c.steps.size(), 12U);
  EXPECT_EQ(c.steps[0].kind, step_kind::create_session);
  EXPECT_EQ(c.steps[1].kind, step_kind::send);
  EXPECT_EQ(c.steps[1].text, "Reply with exactly: {marker}");
  EXPECT_EQ(c.steps[1].delivery, "queue");
  EXPECT_EQ(c.steps[2].target, wait_target::idle);
  EXPECT_EQ(c.steps[2].timeout, std::chrono::milliseconds(30'000));
  EXPECT_EQ(c.steps[3].target, wait_target::runs);
  EXPECT_EQ(c.steps[3].count, 2);
  EXPECT_EQ(c.steps[3].timeout, std::chrono::milliseconds(60'000));
  EXPECT_EQ(c.steps[4].target, wait_target::file);
  EXPECT_EQ(c.steps[4].path, "notes.txt");
  EXPECT_EQ(c.steps[5].kind, step_kind::stop);
  EXPECT_EQ(c.steps[6].kind, step_kind::reset);
  EXPECT_EQ(c.steps[7].option, "Blue {marker}");
  EXPECT_EQ(c.steps[8].other, "free text {marker}");
  EXPECT_EQ(c.steps[9].mode, restart_mode::kill);
  EXPECT_EQ(c.steps[10].mode, restart_mode::graceful);
  EXPECT_EQ(c.steps[11].duration, std::chrono::milliseconds(200));

  ASSERT_EQ(c.matchers.size(), 13U);
  EXPECT_EQ(c.matchers[0].kind, matcher_kind::message_exact);
  EXPECT_EQ(c.matchers[0].text, "{marker}");
  EXPECT_EQ(c.matchers[1].kind, matcher_kind::message_occurrences);
  EXPECT_EQ(c.matchers[1].count, 1);
  EXPECT_EQ(c.matchers[2].texts, (std::vector<std::string>{"{marker1}", "{marker2}"}));
  EXPECT_EQ(c.matchers[3].kind, matcher_kind::message_absent);
  EXPECT_EQ(c.matchers[4].path, "notes.txt");
  EXPECT_EQ(c.matchers[4].content, "T1-{nonce}\nT2-{nonce}\n");
  EXPECT_EQ(c.matchers[5].status, "succeeded");
  EXPECT_EQ(c.matchers[5].run, 0);
  EXPECT_EQ(c.matchers[6].status, "interrupted");
  EXPECT_EQ(c.matchers[6].run, 2);
  EXPECT_EQ(c.matchers[7].count, 3);
  EXPECT_EQ(c.matchers[8].status, "idle");
  EXPECT_EQ(c.matchers[9].status, "answered");
  EXPECT_EQ(c.matchers[10].value, "native");
  EXPECT_EQ(c.matchers[11].value, "local");
  EXPECT_EQ(c.matchers[12].kind, matcher_kind::usage_reported);

  const auto& second = s.cases[1];
  EXPECT_EQ(second.mode, "chat");
  EXPECT_EQ(second.steps[1].delivery, "steer");
  EXPECT_TRUE(second.matchers.empty());
}

TEST(catalogue, a_file_with_only_profiles_and_environments_has_no_suite) {
  auto cat = parse_catalogue("[profiles.p]\ntitle = \"P\"\nprovider = \"anthropic\"\n[environments.e]\ntitle = \"E\"\n",
                             "profiles.toml");
  ASSERT_TRUE(cat) << cat.error().describe();
  EXPECT_TRUE(cat->suites.empty());
  EXPECT_EQ(cat->profiles.at("p").model_server, "mock");
  EXPECT_EQ(cat->environments.at("e").kind, "local");
}

// ---- validation: each rule with the words its message must carry ----

struct invalid_case {
  std::string name;
  std::string toml;
  std::vector<std::string> words;  // all must appear in the message
};

void PrintTo(const invalid_case& c, std::ostream* os) { *os << c.name; }

class invalid_definition : public testing::TestWithParam<invalid_case> {};

TEST_P(invalid_definition, is_refused_with_a_message_naming_file_and_field) {
  const auto& p = GetParam();
  auto cat = parse_catalogue(p.toml, "suites/x.toml");
  ASSERT_FALSE(cat) << p.name;
  EXPECT_EQ(cat.error(), e2e_errc::invalid_definition);
  EXPECT_TRUE(cat.error().message.starts_with("suites/x.toml: ")) << cat.error().message;
  for (const auto& w : p.words) EXPECT_NE(cat.error().message.find(w), std::string::npos) << cat.error().message;
}

const std::string start = R"({ do = "create_session" })";

std::string steps(std::string_view more) { return "steps = [" + start + ", " + std::string(more) + "]"; }
std::string matcher(std::string_view m) { return steps("{ do = \"stop\" }") + "\nmatchers = [" + std::string(m) + "]"; }

const invalid_case invalid_cases[] = {
    {"malformed_toml", "[suite\nid = 1", {"line 1"}},
    {"unknown_top_level_key", "colour = \"red\"", {"unknown key \"colour\""}},
    {"unknown_profile_key",
     "[profiles.p]\ntitle = \"P\"\nprovider = \"anthropic\"\nmodle = \"x\"",
     {"profile \"p\"", "\"modle\""}},
    {"unknown_environment_key", "[environments.e]\ntitle = \"E\"\nhost = \"x\"", {"environment \"e\"", "\"host\""}},
    {"unknown_suite_key",
     "[suite]\nid = \"s\"\ntitle = \"S\"\nowner = \"me\"",
     {"suite \"s\"", "unknown key \"owner\""}},
    {"unknown_case_key", with_case(steps("{ do = \"stop\" }") + "\ntimeout = 3"), {"case \"c\"", "\"timeout\""}},
    {"unknown_step",
     with_case(steps(R"({ do = "sned", text = "x" })")),
     {"suites/x.toml: case \"c\" step 2: unknown step \"sned\""}},
    {"unknown_matcher",
     with_case(matcher(R"({ kind = "message_like", text = "x" })")),
     {"case \"c\" matcher 1", "unknown matcher \"message_like\""}},
    {"unknown_matcher_key",
     with_case(matcher(R"({ kind = "run_count", count = 1, text = "x" })")),
     {"matcher 1", "\"text\"", "run_count"}},
    {"field_of_another_step",
     with_case(steps(R"({ do = "send", text = "x", count = 2 })")),
     {"step 2", "\"count\"", "send step"}},
    {"count_on_wait_for_idle",
     with_case(steps(R"({ do = "wait", for = "idle", count = 2 })")),
     {"step 2", "\"count\"", "runs"}},
    {"path_on_wait_for_runs",
     with_case(steps(R"({ do = "wait", for = "runs", count = 1, path = "a" })")),
     {"step 2", "\"path\"", "file"}},
    {"missing_suite_title",
     "[suite]\nid = \"s\"\nprofiles = [\"p\"]\nenvironments = [\"e\"]",
     {"suite \"s\"", "missing \"title\""}},
    {"missing_suite_id", "[suite]\ntitle = \"S\"", {"[suite]", "missing \"id\""}},
    {"missing_case_title",
     with_case(steps("{ do = \"stop\" }")) + "[[cases]]\nid = \"d\"\nsteps = [" + start + "]",
     {"case \"d\"", "missing \"title\""}},
    {"missing_profile_provider", "[profiles.p]\ntitle = \"P\"", {"profile \"p\"", "missing \"provider\""}},
    {"missing_profile_title", "[profiles.p]\nprovider = \"anthropic\"", {"profile \"p\"", "missing \"title\""}},
    {"missing_send_text", with_case(steps(R"({ do = "send" })")), {"step 2", "missing \"text\""}},
    {"missing_step_do", with_case(steps(R"({ text = "x" })")), {"step 2", "missing \"do\""}},
    {"missing_wait_for", with_case(steps(R"({ do = "wait" })")), {"step 2", "missing \"for\""}},
    {"missing_wait_runs_count", with_case(steps(R"({ do = "wait", for = "runs" })")), {"step 2", "missing \"count\""}},
    {"missing_wait_file_path", with_case(steps(R"({ do = "wait", for = "file" })")), {"step 2", "missing \"path\""}},
    {"missing_sleep_ms", with_case(steps(R"({ do = "sleep" })")), {"step 2", "missing \"ms\""}},
    {"missing_matcher_text", with_case(matcher(R"({ kind = "message_exact" })")), {"matcher 1", "missing \"text\""}},
    {"missing_matcher_count",
     with_case(matcher(R"({ kind = "message_occurrences", text = "x" })")),
     {"matcher 1", "missing \"count\""}},
    {"missing_file_content",
     with_case(matcher(R"({ kind = "file_exact", path = "a.txt" })")),
     {"matcher 1", "missing \"content\""}},
    {"title_not_a_string", "[environments.e]\ntitle = 3", {"environment \"e\"", "\"title\" must be a string"}},
    {"count_not_an_integer",
     with_case(matcher(R"({ kind = "run_count", count = "3" })")),
     {"matcher 1", "\"count\" must be an integer"}},
    {"profiles_not_an_array",
     with_case(steps("{ do = \"stop\" }"), "\"p1\""),
     {"suite \"s\"", "\"profiles\" must be an array"}},
    {"steps_not_an_array", with_case("steps = \"create_session\""), {"case \"c\"", "\"steps\""}},
    {"step_not_a_table", with_case("steps = [" + start + ", \"stop\"]"), {"case \"c\" step 2", "table"}},
    {"texts_not_strings",
     with_case(matcher(R"({ kind = "message_ordered", texts = [1, 2] })")),
     {"matcher 1", "\"texts\""}},
    {"suite_id_pattern", "[suite]\nid = \"Core\"\ntitle = \"S\"", {"\"id\"", "Core", "[a-z0-9-]+"}},
    {"case_id_pattern",
     with_case(steps("{ do = \"stop\" }")) + "[[cases]]\nid = \"basic_reply\"\ntitle = \"B\"",
     {"case 2", "basic_reply", "[a-z0-9-]+"}},
    {"profile_id_pattern",
     "[profiles.Big]\ntitle = \"P\"\nprovider = \"anthropic\"",
     {"profile \"Big\"", "[a-z0-9-]+"}},
    {"environment_id_pattern", "[environments.\"a b\"]\ntitle = \"E\"", {"environment \"a b\"", "[a-z0-9-]+"}},
    {"duplicate_case_id",
     with_case(steps("{ do = \"stop\" }")) + "[[cases]]\nid = \"c\"\ntitle = \"C2\"\nsteps = [" + start + "]",
     {"suite \"s\"", "duplicate case id \"c\""}},
    {"duplicate_profile_in_suite_list",
     "[suite]\nid = \"s\"\ntitle = \"S\"\nprofiles = [\"p\", \"p\"]\nenvironments = [\"e\"]",
     {"suite \"s\"", "\"profiles\"", "twice"}},
    {"unknown_profile",
     with_case(steps("{ do = \"stop\" }"), R"(["p1", "p9"])"),
     {"suite \"s\"", "unknown profile \"p9\" (defined: p1)"}},
    {"unknown_environment",
     with_case(steps("{ do = \"stop\" }"), R"(["p1"])", R"(["e9"])"),
     {"suite \"s\"", "unknown environment \"e9\" (defined: local)"}},
    {"unknown_template_in_send",
     with_case(steps(R"({ do = "send", text = "say {markr}" })")),
     {"case \"c\" step 2", "\"text\"", "{markr}"}},
    {"unknown_template_in_option",
     with_case(steps(R"({ do = "answer", option = "{colour}" })")),
     {"step 2", "\"option\"", "{colour}"}},
    {"run_index_below_one",
     with_case(matcher(R"({ kind = "run_status", run = 0, status = "failed" })")),
     {"matcher 1", "\"run\"", "at least 1"}},
    {"run_index_on_another_matcher",
     with_case(matcher(R"({ kind = "run_count", run = 1, count = 1 })")),
     {"matcher 1", "\"run\"", "run_count"}},
    {"empty_title", "[environments.e]\ntitle = \"\"", {"environment \"e\"", "\"title\" must not be empty"}},
    {"unknown_template_in_other",
     with_case(steps(R"({ do = "answer", other = "{nonse}" })")),
     {"step 2", "\"other\"", "{nonse}"}},
    {"unknown_template_in_matcher_text",
     with_case(matcher(R"({ kind = "message_absent", text = "{marker10}" })")),
     {"matcher 1", "\"text\"", "{marker10}"}},
    {"unknown_template_in_texts",
     with_case(matcher(R"({ kind = "message_ordered", texts = ["{marker1}", "{x}"] })")),
     {"matcher 1", "\"texts\"", "{x}"}},
    {"unknown_template_in_content",
     with_case(matcher(R"({ kind = "file_exact", path = "a", content = "{cell}{phase}" })")),
     {"matcher 1", "\"content\"", "{phase}"}},
    {"unknown_template_in_matcher_path",
     with_case(matcher(R"({ kind = "file_exact", path = "{markr}.txt", content = "x" })")),
     {"matcher 1", "\"path\"", "{markr}"}},
    {"unknown_template_in_wait_path",
     with_case(steps(R"({ do = "wait", for = "file", path = "out/{nonse}" })")),
     {"step 2", "\"path\"", "{nonse}"}},
    {"negative_occurrence_count",
     with_case(matcher(R"({ kind = "message_occurrences", text = "x", count = -1 })")),
     {"matcher 1", "\"count\"", "at least 0"}},
    {"negative_run_count", with_case(matcher(R"({ kind = "run_count", count = -2 })")), {"\"count\"", "at least 0"}},
    {"negative_wait_count",
     with_case(steps(R"({ do = "wait", for = "runs", count = -1 })")),
     {"step 2", "\"count\"", "at least 0"}},
    {"negative_sleep", with_case(steps(R"({ do = "sleep", ms = -1 })")), {"step 2", "\"ms\""}},
    {"zero_timeout", with_case(steps(R"({ do = "wait", for = "idle", timeout_ms = 0 })")), {"\"timeout_ms\""}},
    {"suite_without_cases",
     "[suite]\nid = \"s\"\ntitle = \"S\"\nprofiles = [\"p\"]\nenvironments = [\"e\"]",
     {"suite \"s\"", "no cases"}},
    {"case_without_steps", with_case("steps = []"), {"case \"c\"", "no steps"}},
    {"case_with_steps_missing", with_case(""), {"case \"c\"", "no steps"}},
    {"first_step_not_create_session",
     with_case(R"(steps = [{ do = "send", text = "x" }])"),
     {"case \"c\"", "first step", "create_session"}},
    {"answer_with_both",
     with_case(steps(R"({ do = "answer", option = "a", other = "b" })")),
     {"step 2", "exactly one of \"option\" and \"other\""}},
    {"answer_with_neither", with_case(steps(R"({ do = "answer" })")), {"step 2", "exactly one"}},
    {"bad_delivery",
     with_case(steps(R"({ do = "send", text = "x", delivery = "later" })")),
     {"step 2", "\"delivery\"", "later"}},
    {"bad_wait_target", with_case(steps(R"({ do = "wait", for = "done" })")), {"step 2", "\"for\"", "done"}},
    {"bad_restart_mode", with_case(steps(R"({ do = "restart", mode = "hard" })")), {"step 2", "\"mode\"", "hard"}},
    {"bad_case_mode", with_case(steps("{ do = \"stop\" }") + "\nmode = \"dance\""), {"case \"c\"", "\"mode\""}},
    {"absolute_file_path",
     with_case(matcher(R"({ kind = "file_exact", path = "/etc/passwd", content = "" })")),
     {"matcher 1", "\"path\"", "relative"}},
    {"escaping_file_path",
     with_case(steps(R"({ do = "wait", for = "file", path = "../x" })")),
     {"step 2", "\"path\"", "relative"}},
    {"bad_provider", "[profiles.p]\ntitle = \"P\"\nprovider = \"gemini\"", {"profile \"p\"", "\"provider\"", "gemini"}},
    {"remote_model_server_without_base_url",
     "[profiles.p]\ntitle = \"P\"\nprovider = \"anthropic\"\nmodel_server = \"remote\"",
     {"profile \"p\"", "\"base_url\""}},
    {"mock_model_server_with_base_url",
     "[profiles.p]\ntitle = \"P\"\nprovider = \"anthropic\"\nbase_url = \"http://x\"",
     {"profile \"p\"", "\"base_url\""}},
    {"environment_kind_not_local",
     "[environments.e]\ntitle = \"E\"\nkind = \"docker\"",
     {"environment \"e\"", "\"kind\"", "docker"}},
    {"cases_without_suite", "[[cases]]\nid = \"c\"\ntitle = \"C\"", {"[[cases]] without a [suite]"}},
    // ---- runtime kinds ----
    {"unknown_runtime",
     "[profiles.p]\ntitle = \"P\"\nruntime = \"codex-app-server\"",
     {"profile \"p\"", "\"runtime\" is \"codex-app-server\"",
      "codex-exec, claude-print, opencode-run, codex, claude, opencode, acp-codex, acp-claude, acp-opencode, acp"}},
    {"provider_on_an_agent_profile",
     "[profiles.p]\ntitle = \"P\"\nruntime = \"codex-exec\"\nprovider = \"openai-responses\"",
     {"profile \"p\"", "\"provider\" does not belong to a codex-exec profile"}},
    {"provider_on_claude_print",
     "[profiles.p]\ntitle = \"P\"\nruntime = \"claude-print\"\nprovider = \"anthropic\"",
     {"\"provider\" does not belong to a claude-print profile"}},
    {"wire_on_a_native_profile",
     "[profiles.p]\ntitle = \"P\"\nprovider = \"anthropic\"\nwire = \"chat\"",
     {"\"wire\" does not belong to a native profile"}},
    {"wire_on_codex_exec",
     "[profiles.p]\ntitle = \"P\"\nruntime = \"codex-exec\"\nwire = \"responses\"",
     {"\"wire\" does not belong to a codex-exec profile"}},
    {"bad_wire",
     "[profiles.p]\ntitle = \"P\"\nruntime = \"opencode-run\"\nwire = \"grpc\"",
     {"profile \"p\"", "\"wire\" is \"grpc\"", "chat, responses, messages"}},
    // ---- not_applicable ----
    {"not_applicable_unknown_kind",
     with_case(steps("{ do = \"stop\" }") + "\nnot_applicable = { \"claude-stream\" = \"a profile id\" }"),
     {"case \"c\"", "\"not_applicable\" names \"claude-stream\", which is not a runtime kind",
      "native, codex-exec, claude-print, opencode-run, codex, claude"}},
    {"not_applicable_not_a_table",
     with_case(steps("{ do = \"stop\" }") + "\nnot_applicable = [\"codex-exec\"]"),
     {"case \"c\"", "\"not_applicable\" must be a table"}},
    {"not_applicable_without_reason",
     with_case(steps("{ do = \"stop\" }") + "\nnot_applicable = { \"codex-exec\" = \"\" }"),
     {"case \"c\"", "\"codex-exec\"", "non-empty string"}},
    {"not_applicable_reason_not_a_string",
     with_case(steps("{ do = \"stop\" }") + "\nnot_applicable = { \"codex-exec\" = true }"),
     {"case \"c\"", "\"codex-exec\"", "non-empty string"}},
    {"ssh_environment_with_a_daytona_key",
     "[environments.e]\ntitle = \"E\"\nkind = \"ssh\"\napi_url = \"https://x\"",
     {"environment \"e\"", "\"api_url\" does not belong to a ssh environment"}},
    {"local_environment_with_a_price",
     "[environments.e]\ntitle = \"E\"\nprice = { cpu_hour = 1 }",
     {"environment \"e\"", "\"price\""}},
    {"price_without_its_date",
     "[environments.e]\ntitle = \"E\"\nkind = \"daytona\"\n[environments.e.price]\ncpu_hour = 0.05\n"
     "memory_gib_hour = 0.01\ndisk_gib_hour = 0\nsource = \"list\"",
     {"environment \"e\" price", "missing \"date\""}},
    {"negative_price",
     "[environments.e]\ntitle = \"E\"\nkind = \"daytona\"\n[environments.e.price]\ncpu_hour = -1\n"
     "memory_gib_hour = 0\ndisk_gib_hour = 0\nsource = \"s\"\ndate = \"2026-01-01\"",
     {"\"cpu_hour\" must not be negative"}},
    {"unknown_lease_outcome",
     with_case(matcher(R"({ kind = "lease_outcomes", outcomes = ["created", "warm"] })")),
     {"matcher 1", "\"warm\" is not created, resumed or replaced"}},
    {"runtime_matcher_unknown_template",
     with_case(matcher(R"({ kind = "runtime", value = "{runtme}" })")),
     {"matcher 1", "{runtme}", "{runtime}"}},
};

INSTANTIATE_TEST_SUITE_P(rules, invalid_definition, testing::ValuesIn(invalid_cases),
                         [](const auto& info) { return info.param.name; });

TEST(catalogue, the_valid_base_of_the_invalid_cases_parses) {
  auto cat = parse_catalogue(with_case(steps("{ do = \"stop\" }")), "suites/x.toml");
  ASSERT_TRUE(cat) << cat.error().describe();
}

// ---- agent profiles ----

const std::string agent_profiles = R"toml(
[profiles.codex-exec]
title = "Codex CLI · codex exec"
runtime = "codex-exec"
model = "scripted"
model_server = "mock"
api_key_env = "OPENAI_API_KEY"

[profiles.claude-print]
title = "Claude Code · claude -p"
runtime = "claude-print"
api_key_env = "ANTHROPIC_API_KEY"

[profiles.opencode-run]
title = "OpenCode · opencode run"
runtime = "opencode-run"
wire = "responses"

[profiles.opencode-default]
title = "OpenCode · opencode run"
runtime = "opencode-run"
model_server = "remote"
base_url = "https://api.example.test/v1"
)toml";

TEST(agent_profiles, need_no_provider_and_keep_their_runtime) {
  auto cat = parse_catalogue(agent_profiles, "profiles.toml");
  ASSERT_TRUE(cat) << cat.error().describe();
  const auto& codex = cat->profiles.at("codex-exec");
  EXPECT_EQ(codex.runtime, "codex-exec");
  EXPECT_EQ(codex.provider, "");
  EXPECT_EQ(codex.wire, "");
  EXPECT_EQ(codex.model, "scripted");
  EXPECT_EQ(codex.api_key_env, "OPENAI_API_KEY");
  EXPECT_EQ(cat->profiles.at("claude-print").runtime, "claude-print");
  EXPECT_EQ(cat->profiles.at("claude-print").model, "scripted");  // the default
  EXPECT_EQ(cat->profiles.at("opencode-run").wire, "responses");
  EXPECT_EQ(cat->profiles.at("opencode-default").wire, "");
  EXPECT_EQ(cat->profiles.at("opencode-default").base_url, "https://api.example.test/v1");
}

TEST(agent_profiles, opencode_run_takes_every_wire) {
  for (const char* wire : {"chat", "responses", "messages"}) {
    auto cat = parse_catalogue(
        std::string("[profiles.p]\ntitle = \"P\"\nruntime = \"opencode-run\"\nwire = \"") + wire + "\"\n",
        "profiles.toml");
    ASSERT_TRUE(cat) << wire << ": " << cat.error().describe();
    EXPECT_EQ(cat->profiles.at("p").wire, wire);
  }
}

TEST(agent_profiles, a_native_profile_still_requires_its_provider) {
  auto cat = parse_catalogue("[profiles.p]\ntitle = \"P\"\nruntime = \"native\"\n", "profiles.toml");
  ASSERT_FALSE(cat);
  EXPECT_NE(cat.error().message.find("missing \"provider\""), std::string::npos) << cat.error().message;
}

// ---- not applicable ----

TEST(not_applicable, maps_runtime_kinds_to_their_reasons) {
  const auto s = only_suite(with_case(steps("{ do = \"stop\" }") +
                                      "\nnot_applicable = { \"codex-exec\" = \"one process per turn\", "
                                      "\"claude-print\" = \"no steer mid-turn\" }"));
  ASSERT_EQ(s.cases.size(), 1U);
  EXPECT_EQ(s.cases[0].not_applicable, (std::map<std::string, std::string>{{"claude-print", "no steer mid-turn"},
                                                                           {"codex-exec", "one process per turn"}}));
}

TEST(not_applicable, is_empty_when_omitted_and_part_of_the_definition_hash) {
  const auto plain = only_suite(with_case(steps("{ do = \"stop\" }")));
  ASSERT_EQ(plain.cases.size(), 1U);
  EXPECT_TRUE(plain.cases[0].not_applicable.empty());
  const auto marked =
      only_suite(with_case(steps("{ do = \"stop\" }") + "\nnot_applicable = { \"opencode-run\" = \"why\" }"));
  EXPECT_NE(definition_hash(plain), definition_hash(marked));
  const auto v = boost::json::parse(canonical_json(marked));
  EXPECT_EQ(v.at("cases").at(0).at("not_applicable"), (boost::json::value{{"opencode-run", "why"}}));
  EXPECT_EQ(boost::json::parse(canonical_json(plain)).at("cases").at(0).at("not_applicable"),
            boost::json::value(boost::json::object{}));
}

TEST(not_applicable, may_name_native_too) {
  const auto s = only_suite(with_case(steps("{ do = \"stop\" }") + "\nnot_applicable = { native = \"agents only\" }"));
  ASSERT_EQ(s.cases.size(), 1U);
  EXPECT_EQ(s.cases[0].not_applicable.at("native"), "agents only");
}

// ---- files ----

class catalogue_dir : public testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = std::filesystem::temp_directory_path() / ("tether-suites-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void write(const std::string& name, std::string_view text) { std::ofstream(dir_ / name, std::ios::binary) << text; }
  std::filesystem::path dir_;
};

const std::string profiles_file =
    "[profiles.p1]\ntitle = \"P\"\nprovider = \"openai-chat\"\n[environments.local]\ntitle = \"Local\"\n";

std::string suite_file(std::string_view id) {
  return "[suite]\nid = \"" + std::string(id) + "\"\ntitle = \"S\"\nprofiles = [\"p1\"]\nenvironments = [\"local\"]\n" +
         "[[cases]]\nid = \"c\"\ntitle = \"C\"\nsteps = [{ do = \"create_session\" }]\n";
}

TEST_F(catalogue_dir, suites_may_name_profiles_defined_in_another_file) {
  write("b-suite.toml", suite_file("beta"));
  write("a-suite.toml", suite_file("alpha"));
  write("z-profiles.toml", profiles_file);
  write("notes.md", "not a suite");
  auto cat = load_catalogue(dir_);
  ASSERT_TRUE(cat) << cat.error().describe();
  ASSERT_EQ(cat->suites.size(), 2U);
  EXPECT_EQ(cat->suites[0].id, "alpha");  // files are read sorted by name
  EXPECT_EQ(cat->suites[1].id, "beta");
  EXPECT_EQ(cat->suites[0].file, dir_ / "a-suite.toml");
  EXPECT_EQ(cat->profiles.size(), 1U);
}

TEST_F(catalogue_dir, a_profile_defined_in_two_files_is_refused_naming_both) {
  write("a.toml", profiles_file);
  write("b.toml", "[profiles.p1]\ntitle = \"again\"\nprovider = \"anthropic\"\n");
  auto cat = load_catalogue(dir_);
  ASSERT_FALSE(cat);
  EXPECT_EQ(cat.error(), e2e_errc::invalid_definition);
  EXPECT_NE(cat.error().message.find("duplicate profile id \"p1\""), std::string::npos) << cat.error().message;
  EXPECT_NE(cat.error().message.find((dir_ / "a.toml").string()), std::string::npos);
  EXPECT_NE(cat.error().message.find((dir_ / "b.toml").string()), std::string::npos);
}

TEST_F(catalogue_dir, an_environment_defined_in_two_files_is_refused) {
  write("a.toml", profiles_file);
  write("b.toml", "[environments.local]\ntitle = \"again\"\n");
  auto cat = load_catalogue(dir_);
  ASSERT_FALSE(cat);
  EXPECT_NE(cat.error().message.find("duplicate environment id \"local\""), std::string::npos) << cat.error().message;
}

TEST_F(catalogue_dir, a_suite_defined_in_two_files_is_refused) {
  write("a.toml", profiles_file + suite_file("same"));
  write("b.toml", suite_file("same"));
  auto cat = load_catalogue(dir_);
  ASSERT_FALSE(cat);
  EXPECT_NE(cat.error().message.find("duplicate suite id \"same\""), std::string::npos) << cat.error().message;
  EXPECT_NE(cat.error().message.find("b.toml"), std::string::npos);
}

TEST_F(catalogue_dir, an_unknown_profile_is_found_after_every_file_is_read) {
  write("a.toml", suite_file("alpha"));
  write("b.toml", "[environments.local]\ntitle = \"Local\"\n");
  auto cat = load_catalogue(dir_);
  ASSERT_FALSE(cat);
  EXPECT_NE(cat.error().message.find("unknown profile \"p1\""), std::string::npos) << cat.error().message;
  EXPECT_NE(cat.error().message.find("a.toml"), std::string::npos);
}

TEST_F(catalogue_dir, an_error_in_a_file_names_that_file) {
  write("a.toml", profiles_file);
  write("b.toml", "[suite\n");
  auto cat = load_catalogue(dir_);
  ASSERT_FALSE(cat);
  EXPECT_TRUE(cat.error().message.starts_with((dir_ / "b.toml").string() + ": ")) << cat.error().message;
}

TEST(catalogue, a_missing_directory_is_not_found) {
  auto cat = load_catalogue("/nonexistent/tether/suites");
  ASSERT_FALSE(cat);
  EXPECT_EQ(cat.error(), e2e_errc::not_found);
  EXPECT_NE(cat.error().message.find("/nonexistent/tether/suites"), std::string::npos);
}

TEST(catalogue, the_repository_suites_load) {
  const auto dir = std::filesystem::path(test_paths::source_dir()) / "suites";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << "no suites/ yet";
  auto cat = load_catalogue(dir);
  ASSERT_TRUE(cat) << cat.error().describe();
}

// ---- canonical JSON and the hash ----

TEST(definition_hash, is_lowercase_hex_sha256_and_stable) {
  const auto s = only_suite(full_catalogue);
  const auto h = definition_hash(s);
  EXPECT_TRUE(std::regex_match(h, std::regex("^[0-9a-f]{64}$"))) << h;
  EXPECT_EQ(h, definition_hash(only_suite(full_catalogue)));
}

TEST(definition_hash, of_an_empty_suite_is_sha256_of_its_canonical_json) {
  suite_def s;
  EXPECT_EQ(canonical_json(s), R"({"cases":[],"description":"","environments":[],"id":"","profiles":[],"title":""})");
  // printf '%s' '<that JSON>' | sha256sum
  EXPECT_EQ(definition_hash(s), "557e7e4a57e395384bde2e42824fe3aaa5ebc5e71ddca320b20e549d6e1581c0");
}

const std::string ordered_suite = R"(
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
steps = [
  { do = "create_session" },
  { do = "send", text = "Say {marker}" },
  { do = "wait", for = "idle" },
  { do = "restart" },
]
matchers = [{ kind = "message_exact", text = "{marker}" }]
)";

const std::string reordered_suite = R"(
[environments.local]
title = "Local"
[suite]
environments = ["local"]
profiles = ["p1"]
title = "S"
id = "s"
[profiles.p1]
provider = "openai-chat"
title = "P"
[[cases]]
matchers = [{ text = "{marker}", kind = "message_exact" }]
title = "C"
steps = [
  { do = "create_session" },
  { text = "Say {marker}", do = "send" },
  { for = "idle", do = "wait" },
  { do = "restart" },
]
id = "c"
)";

const std::string explicit_defaults_suite = R"(
[profiles.p1]
title = "P"
provider = "openai-chat"
[environments.local]
title = "Local"
[suite]
id = "s"
title = "S"
description = ""
profiles = ["p1"]
environments = ["local"]
[[cases]]
id = "c"
title = "C"
mode = "chat"
steps = [
  { do = "create_session" },
  { do = "send", text = "Say {marker}", delivery = "steer" },
  { do = "wait", for = "idle", timeout_ms = 60000 },
  { do = "restart", mode = "graceful" },
]
matchers = [{ kind = "message_exact", text = "{marker}" }]
)";

TEST(definition_hash, does_not_depend_on_key_order) {
  EXPECT_EQ(definition_hash(only_suite(ordered_suite)), definition_hash(only_suite(reordered_suite)));
}

TEST(definition_hash, an_omitted_default_and_a_written_one_hash_the_same) {
  EXPECT_EQ(definition_hash(only_suite(ordered_suite)), definition_hash(only_suite(explicit_defaults_suite)));
}

TEST(definition_hash, does_not_depend_on_the_file) {
  EXPECT_EQ(definition_hash(only_suite(ordered_suite, "a.toml")), definition_hash(only_suite(ordered_suite, "b.toml")));
}

TEST(definition_hash, changes_when_a_case_text_changes) {
  auto changed = ordered_suite;
  changed.replace(changed.find("Say {marker}"), 12, "Say {marker}!");
  EXPECT_NE(definition_hash(only_suite(ordered_suite)), definition_hash(only_suite(changed)));
}

TEST(definition_hash, changes_when_a_default_is_overridden) {
  auto changed = ordered_suite;
  changed.replace(changed.find("for = \"idle\""), 12, "for = \"idle\", timeout_ms = 5");
  EXPECT_NE(definition_hash(only_suite(ordered_suite)), definition_hash(only_suite(changed)));
}

bool keys_sorted(const boost::json::value& v) {
  if (const auto* o = v.if_object()) {
    std::string_view previous;
    for (const auto& kv : *o) {
      if (kv.key() < previous || !keys_sorted(kv.value())) return false;
      previous = kv.key();
    }
  }
  if (const auto* a = v.if_array())
    for (const auto& el : *a)
      if (!keys_sorted(el)) return false;
  return true;
}

TEST(canonical_json, has_sorted_keys_no_whitespace_and_every_default) {
  const auto text = canonical_json(only_suite(full_catalogue));
  const auto v = boost::json::parse(text);
  EXPECT_TRUE(keys_sorted(v)) << text;
  EXPECT_EQ(text, boost::json::serialize(v));  // compact
  EXPECT_TRUE(text.starts_with(R"({"cases":[{"id":"basic-reply","matchers":[)")) << text;
  EXPECT_FALSE(v.as_object().contains("file"));
  const auto& second = v.at("cases").at(1);
  EXPECT_EQ(second.at("mode").as_string(), "chat");
  EXPECT_EQ(second.at("steps").at(1), (boost::json::value{{"delivery", "steer"}, {"do", "send"}, {"text", "hi"}}));
  const auto& steps = v.at("cases").at(0).at("steps");
  EXPECT_EQ(steps.at(3), (boost::json::value{{"count", 2}, {"do", "wait"}, {"for", "runs"}, {"timeout_ms", 60000}}));
  EXPECT_EQ(steps.at(10), (boost::json::value{{"do", "restart"}, {"mode", "graceful"}}));
  EXPECT_EQ(steps.at(11), (boost::json::value{{"do", "sleep"}, {"ms", 200}}));
  const auto& matchers = v.at("cases").at(0).at("matchers");
  EXPECT_EQ(matchers.at(5), (boost::json::value{{"kind", "run_status"}, {"run", 0}, {"status", "succeeded"}}));
  EXPECT_EQ(matchers.at(12), (boost::json::value{{"kind", "usage_reported"}}));
}

// ---- templates ----

const template_values values{"a1b2c3d4e5f6-1", "core.native.local.basic"};

TEST(templates, every_name_expands) {
  auto e = expand("{nonce}|{marker}|{marker1}|{marker9}|{phrase}|{cell}", values);
  ASSERT_TRUE(e) << e.error().describe();
  EXPECT_EQ(*e,
            "a1b2c3d4e5f6-1|MARK-a1b2c3d4e5f6-1|MARK1-a1b2c3d4e5f6-1|MARK9-a1b2c3d4e5f6-1|phrase-a1b2c3d4e5f6-1|"
            "core.native.local.basic");
}

TEST(templates, doubled_braces_are_literal) {
  auto e = expand("{{marker}} and }} and {{", values);
  ASSERT_TRUE(e);
  EXPECT_EQ(*e, "{marker} and } and {");
  auto nested = expand("{{{marker}}}", values);
  ASSERT_TRUE(nested);
  EXPECT_EQ(*nested, "{MARK-a1b2c3d4e5f6-1}");
}

TEST(templates, a_brace_without_a_name_is_literal) {
  auto e = expand("a { b", values);
  ASSERT_TRUE(e);
  EXPECT_EQ(*e, "a { b");
  auto open_then_name = expand("x { {marker}", values);
  ASSERT_TRUE(open_then_name);
  EXPECT_EQ(*open_then_name, "x { MARK-a1b2c3d4e5f6-1");
  auto lone_close = expand("a } b", values);
  ASSERT_TRUE(lone_close);
  EXPECT_EQ(*lone_close, "a } b");
  EXPECT_EQ(unknown_template_names("a { b } c {{"), (std::vector<std::string>{" b "}));  // a name, not literal
}

// Every string of a step and of a matcher expands, paths included.
TEST(templates, expand_step_and_expand_matcher_cover_every_string) {
  step s;
  s.text = "say {marker}";
  s.option = "{marker1}";
  s.other = "{phrase}";
  s.path = "out/{marker}.txt";
  auto es = expand_step(s, values);
  ASSERT_TRUE(es) << es.error().describe();
  EXPECT_EQ(es->text, "say MARK-a1b2c3d4e5f6-1");
  EXPECT_EQ(es->option, "MARK1-a1b2c3d4e5f6-1");
  EXPECT_EQ(es->other, "phrase-a1b2c3d4e5f6-1");
  EXPECT_EQ(es->path, "out/MARK-a1b2c3d4e5f6-1.txt");
  matcher_spec m;
  m.text = "{nonce}";
  m.texts = {"{marker1}", "{marker2}"};
  m.path = "{cell}/f";
  m.content = "{{literal}}";
  m.value = "{cell}";
  auto em = expand_matcher(m, values);
  ASSERT_TRUE(em) << em.error().describe();
  EXPECT_EQ(em->text, "a1b2c3d4e5f6-1");
  EXPECT_EQ(em->texts, (std::vector<std::string>{"MARK1-a1b2c3d4e5f6-1", "MARK2-a1b2c3d4e5f6-1"}));
  EXPECT_EQ(em->path, "core.native.local.basic/f");
  EXPECT_EQ(em->content, "{literal}");
  EXPECT_EQ(em->value, "core.native.local.basic");
  s.path = "{nope}";
  EXPECT_FALSE(expand_step(s, values));
}

TEST(templates, an_unknown_name_is_an_invalid_definition) {
  auto e = expand("hello {markr}", values);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error(), e2e_errc::invalid_definition);
  EXPECT_NE(e.error().message.find("{markr}"), std::string::npos) << e.error().message;
  EXPECT_FALSE(expand("{marker0}", values));
  EXPECT_FALSE(expand("{marker10}", values));
  EXPECT_FALSE(expand("{}", values));
  EXPECT_FALSE(expand("{ marker }", values));
}

TEST(templates, runtime_is_the_cells_profiles_runtime_kind) {
  const template_values agent{"a1b2c3d4e5f6-1", "core.codex-exec.local.basic", "codex-exec"};
  auto e = expand("ran {runtime}", agent);
  ASSERT_TRUE(e) << e.error().describe();
  EXPECT_EQ(*e, "ran codex-exec");
  EXPECT_TRUE(unknown_template_names("{runtime}").empty());
}

TEST(templates, environment_is_the_cells_environment_id) {
  template_values v = values;
  v.environment = "ssh";
  auto e = expand("{environment}", v);
  ASSERT_TRUE(e) << e.error().describe();
  EXPECT_EQ(*e, "ssh");
}

TEST(environments, the_leased_kinds_read_their_warm_time_resources_price_and_keys) {
  auto cat = parse_catalogue(R"toml(
[environments.box]
title = "SSH host"
kind = "ssh"
keep_warm_ms = 600000
[environments.cloud]
title = "Daytona"
kind = "daytona"
api_key_env = "MY_DAYTONA_KEY"
target = "eu"
image = "debian:12"
reach_host = "runner.example.test"
cpu = 4
memory_gib = 4
disk_gib = 10
[environments.cloud.price]
cpu_hour = 0.0504
memory_gib_hour = 0.0162
disk_gib_hour = 0.000108
source = "daytona_public_list_price"
date = "2026-08-27"
url = "https://www.daytona.io/pricing"
)toml",
                             "x.toml");
  ASSERT_TRUE(cat) << cat.error().describe();
  const auto& box = cat->environments.at("box");
  EXPECT_EQ(box.kind, "ssh");
  EXPECT_EQ(box.keep_warm_ms, 600000);
  EXPECT_FALSE(box.price);
  EXPECT_EQ(box.cpu, 0);
  const auto& cloud = cat->environments.at("cloud");
  EXPECT_EQ(cloud.kind, "daytona");
  EXPECT_EQ(cloud.api_url, "https://app.daytona.io/api");
  EXPECT_EQ(cloud.api_key_env, "MY_DAYTONA_KEY");
  EXPECT_EQ(cloud.target, "eu");
  EXPECT_EQ(cloud.image, "debian:12");
  EXPECT_EQ(cloud.reach_host, "runner.example.test");
  EXPECT_EQ(cloud.cpu, 4);
  EXPECT_EQ(cloud.memory_gib, 4);
  EXPECT_EQ(cloud.disk_gib, 10);
  ASSERT_TRUE(cloud.price);
  EXPECT_DOUBLE_EQ(cloud.price->cpu_hour, 0.0504);
  EXPECT_DOUBLE_EQ(cloud.price->disk_gib_hour, 0.000108);
  EXPECT_EQ(cloud.price->source, "daytona_public_list_price");
  EXPECT_EQ(cloud.price->url, "https://www.daytona.io/pricing");
  EXPECT_TRUE(is_leased_environment("ssh"));
  EXPECT_TRUE(is_leased_environment("daytona"));
  EXPECT_FALSE(is_leased_environment("local"));
  EXPECT_FALSE(is_leased_environment("postgres-2node"));
}

TEST(environments, the_lease_matchers_read_and_hash) {
  const auto s = only_suite(with_case(matcher(
      R"({ kind = "lease_outcomes", outcomes = ["created", "resumed"] }, { kind = "same_lease" }, { kind = "file_absent", path = "ran-{nonce}.txt" })")));
  ASSERT_EQ(s.cases.size(), 1U);
  ASSERT_EQ(s.cases[0].matchers.size(), 3U);
  EXPECT_EQ(s.cases[0].matchers[0].kind, matcher_kind::lease_outcomes);
  EXPECT_EQ(s.cases[0].matchers[0].texts, (std::vector<std::string>{"created", "resumed"}));
  EXPECT_EQ(s.cases[0].matchers[2].path, "ran-{nonce}.txt");
  EXPECT_NE(canonical_json(s).find(R"("outcomes":["created","resumed"])"), std::string::npos) << canonical_json(s);
}

TEST(templates, unknown_names_are_listed_once_in_order) {
  EXPECT_EQ(unknown_template_names("{b} {nonce} {a} {b} {{c}}"), (std::vector<std::string>{"b", "a"}));
  EXPECT_TRUE(unknown_template_names("{marker} {marker3} {cell} {phrase} {nonce}").empty());
}

TEST(nonce, is_twelve_hex_digits_and_the_attempt) {
  const auto n = make_nonce(3);
  EXPECT_TRUE(std::regex_match(n, std::regex("^[0-9a-f]{12}-[0-9]+$"))) << n;
  EXPECT_TRUE(n.ends_with("-3"));
  EXPECT_NE(make_nonce(1), make_nonce(1));
}

TEST(names, enums_print_as_their_toml_names) {
  EXPECT_EQ(to_string(step_kind::create_session), "create_session");
  EXPECT_EQ(to_string(step_kind::sleep), "sleep");
  EXPECT_EQ(to_string(wait_target::runs), "runs");
  EXPECT_EQ(to_string(matcher_kind::interaction_status), "interaction_status");
  EXPECT_EQ(to_string(matcher_kind::usage_reported), "usage_reported");
}

}  // namespace
}  // namespace tether::e2e
