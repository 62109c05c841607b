#include "e2e/run/cell.h"

#include <fstream>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "e2e/run/campaign.h"
#include "e2e/run/cell_env.h"
#include "e2e/scratch_dir.h"

namespace tether::e2e {
namespace {

namespace fs = std::filesystem;
using test::scratch_dir;

bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

profile_def profile(std::string runtime, std::string provider = "") {
  profile_def p;
  p.id = runtime;
  p.title = runtime;
  p.runtime = std::move(runtime);
  p.provider = std::move(provider);
  p.api_key_env = "SOME_KEY";
  return p;
}

// ---- the cell's server config ----

TEST(server_config, a_native_profile_names_its_provider_and_the_mocks_v1) {
  const auto c = server_config(profile("native", "anthropic"), "http://127.0.0.1:4000", "/w", "s.p.local.c");
  EXPECT_TRUE(has_line(c, "runtime = \"native\"")) << c;
  EXPECT_TRUE(has_line(c, "provider = \"anthropic\"")) << c;
  EXPECT_TRUE(has_line(c, "base_url = \"http://127.0.0.1:4000/v1\"")) << c;
  EXPECT_TRUE(has_line(c, "api_key_env = \"SOME_KEY\"")) << c;
  EXPECT_TRUE(has_line(c, "workspace_roots = [\"/w\", \"/repos\"]")) << c;  // the cell's repositories beside it
  EXPECT_EQ(c.find("idle_timeout_ms"), std::string::npos) << c;
}

TEST(server_config, agent_profiles_have_no_provider_and_an_idle_timeout) {
  for (const char* kind : {"codex-exec", "claude-print", "opencode-run"}) {
    const auto c = server_config(profile(kind), "http://127.0.0.1:4000", "/w", "cell");
    EXPECT_TRUE(has_line(c, std::string("runtime = \"") + kind + "\"")) << c;
    EXPECT_EQ(c.find("provider"), std::string::npos) << c;
    EXPECT_EQ(c.find("wire"), std::string::npos) << c;
    EXPECT_TRUE(has_line(c, "idle_timeout_ms = 120000")) << c;
    EXPECT_TRUE(has_line(c, "model = \"scripted\"")) << c;
  }
}

TEST(server_config, claude_gets_the_mocks_root_and_the_others_its_v1) {
  const std::string mock = "http://127.0.0.1:4000";
  for (const char* kind : {"codex-exec", "opencode-run", "codex", "opencode", "acp-codex", "acp-opencode", "acp"})
    EXPECT_TRUE(has_line(server_config(profile(kind), mock, "/w", "c"), "base_url = \"" + mock + "/v1\"")) << kind;
  for (const char* kind : {"claude-print", "claude", "acp-claude"})
    EXPECT_TRUE(has_line(server_config(profile(kind), mock, "/w", "c"), "base_url = \"" + mock + "\"")) << kind;
}

TEST(server_config, warm_profiles_pass_what_they_set_and_leave_the_rest_to_the_server) {
  const auto plain = server_config(profile("codex"), "http://127.0.0.1:4000", "/w", "c");
  EXPECT_TRUE(has_line(plain, "runtime = \"codex\"")) << plain;
  EXPECT_TRUE(has_line(plain, "idle_timeout_ms = 120000")) << plain;
  for (const char* key : {"keep_alive_ms", "max_processes", "command", "provider", "wire"})
    EXPECT_EQ(plain.find(key), std::string::npos) << key << "\n" << plain;
  auto p = profile("acp");
  p.command = "/opt/agent/bin/my-acp";
  p.keep_alive_ms = 5000;
  p.max_processes = 2;
  const auto c = server_config(p, "http://127.0.0.1:4000", "/w", "c");
  EXPECT_TRUE(has_line(c, "command = \"/opt/agent/bin/my-acp\"")) << c;
  EXPECT_TRUE(has_line(c, "keep_alive_ms = 5000")) << c;
  EXPECT_TRUE(has_line(c, "max_processes = 2")) << c;
}

TEST(server_config, opencode_run_passes_its_wire_and_a_real_server_keeps_its_url) {
  auto p = profile("opencode-run");
  p.wire = "messages";
  p.model_server = "remote";
  p.base_url = "https://api.example.test/v1";
  const auto c = server_config(p, "", "/w", "c");
  EXPECT_TRUE(has_line(c, "wire = \"messages\"")) << c;
  EXPECT_TRUE(has_line(c, "base_url = \"https://api.example.test/v1\"")) << c;
}

// ---- what the API says served a run ----

TEST(agent_process_of, reads_the_pid_and_start_of_the_process_that_served_an_execution) {
  const auto warm = boost::json::parse(R"({"id":"exe_1","agent_process":{"pid":4242,"started_ms":1700000000123}})");
  const auto p = agent_process_of(warm.as_object());
  ASSERT_TRUE(p);
  EXPECT_EQ(p->pid, 4242);
  EXPECT_EQ(p->started_ms, 1700000000123);
}

TEST(agent_process_of, null_absent_or_without_a_pid_is_no_process) {
  for (const char* x : {R"({"id":"exe_1","agent_process":null})", R"({"id":"exe_1"})",
                        R"({"id":"exe_1","agent_process":{"started_ms":5}})", R"({"agent_process":7})"})
    EXPECT_FALSE(agent_process_of(boost::json::parse(x).as_object())) << x;
}

// ---- not applicable ----

struct na_fixture {
  suite_def suite;
  case_def kase;
  cell_plan plan;
  explicit na_fixture(const fs::path& dir, std::string runtime) {
    suite.id = "chat";
    suite.title = "Chat";
    kase.id = "steer";
    kase.title = "Steer mid-turn";
    kase.not_applicable = {{"codex-exec", "one process per turn"}, {"claude-print", "the same"}};
    plan.suite = &suite;
    plan.kase = &kase;
    plan.profile = profile(std::move(runtime));
    plan.environment = {"local", "Local", "local"};
    plan.campaign_id = "c1";
    plan.tether_binary = "/nonexistent/tether";  // starting anything would fail the cell
    plan.artifacts_dir = dir / "cells" / "x.attempt-1";
    plan.scratch_root = dir / "scratch";
  }
};

TEST(not_applicable, a_cell_of_a_runtime_the_case_excludes_is_not_run) {
  scratch_dir dir;
  na_fixture f(dir.path(), "codex-exec");
  ASSERT_EQ(not_applicable_reason(f.plan), "one process per turn");
  const cell_result r = run_cell(f.plan, nullptr);
  EXPECT_EQ(r.status, cell_status::not_applicable);
  EXPECT_EQ(r.not_applicable_reason, "one process per turn");
  EXPECT_FALSE(r.failure);
  EXPECT_TRUE(r.error.empty()) << r.error;
  EXPECT_EQ(r.runtime, "codex-exec");
  EXPECT_EQ(r.provider, "");
  EXPECT_EQ(r.cell, "chat.codex-exec.local.steer");
  EXPECT_TRUE(r.artifacts.empty());
  EXPECT_TRUE(r.run_ids.empty());
  EXPECT_EQ(r.duration_ms, 0);
  EXPECT_FALSE(fs::exists(f.plan.artifacts_dir));
  EXPECT_FALSE(fs::exists(f.plan.scratch_root));
}

TEST(not_applicable, other_runtimes_run_the_case) {
  scratch_dir dir;
  na_fixture f(dir.path(), "opencode-run");
  EXPECT_FALSE(not_applicable_reason(f.plan));
  const cell_result r = run_cell(f.plan, nullptr);  // the binary is missing: it tried
  EXPECT_NE(r.status, cell_status::not_applicable);
  EXPECT_TRUE(r.not_applicable_reason.empty());
}

// ---- leased environments ----

TEST(environments, a_leased_environment_runs_every_kind_but_opencode_serve_in_daytona) {
  scratch_dir dir;
  {
    na_fixture f(dir.path(), "opencode");
    f.plan.environment = {"daytona", "Daytona sandbox", "daytona"};
    const auto reason = not_applicable_reason(f.plan);
    ASSERT_TRUE(reason);
    EXPECT_NE(reason->find("ports are not forwarded"), std::string::npos) << *reason;
    // Over SSH, and here, it runs.
    for (const char* kind : {"ssh", "local"}) {
      f.plan.environment = {kind, kind, kind};
      EXPECT_FALSE(not_applicable_reason(f.plan)) << kind;
    }
  }
  for (const char* runtime : {"native", "opencode", "opencode-run", "claude", "codex", "acp-claude", "acp-opencode"}) {
    na_fixture f(dir.path(), runtime);
    f.plan.environment = {"ssh", "SSH host", "ssh"};
    EXPECT_FALSE(not_applicable_reason(f.plan)) << runtime;
  }
}

TEST(environments, two_nodes_qualify_every_agent_kind_whose_state_moves_through_the_store) {
  scratch_dir dir;
  for (const char* runtime : {"native", "codex-exec", "claude-print", "opencode-run", "codex", "claude", "opencode",
                              "acp-codex", "acp-claude", "acp-opencode"}) {
    na_fixture f(dir.path(), runtime);
    f.kase.not_applicable.clear();
    f.plan.environment = {"postgres-2node", "Two nodes", "postgres-2node"};
    EXPECT_FALSE(not_applicable_reason(f.plan)) << runtime;
  }
}

TEST(environments, a_daytona_cells_config_names_the_environment_with_its_keys_resources_and_price) {
  scratch_dir dir;
  na_fixture f(dir.path(), "claude-print");
  environment_def e{"cloud", "Daytona sandbox", "daytona"};
  e.api_key_env = "MY_DAYTONA_KEY";
  e.api_url = "https://daytona.example.test/api";
  e.target = "eu";
  e.reach_host = "runner.example.test";
  e.cpu = 4;
  e.memory_gib = 4;
  e.keep_warm_ms = 600000;
  e.price = environment_price{0.0504, 0.0162, 0.000108, "daytona_public_list_price", "2026-08-27", ""};
  f.plan.environment = e;
  cell_env env;
  env.plan = &f.plan;
  EXPECT_TRUE(leased(env));
  const auto text = environment_config(env);
  // The profile's line first (it follows the profile's keys), then the tables.
  EXPECT_EQ(text.rfind("environment = \"cloud\"\n", 0), 0U) << text;
  for (const char* line :
       {"[environments.cloud]", "kind = \"daytona\"", "api_url = \"https://daytona.example.test/api\"",
        "api_key_env = \"MY_DAYTONA_KEY\"", "target = \"eu\"", "reach_host = \"runner.example.test\"", "cpu = 4",
        "memory_gib = 4", "keep_warm_ms = 600000", "[environments.cloud.price]", "cpu_hour = 5.04E-2",
        "source = \"daytona_public_list_price\"", "date = \"2026-08-27\""})
    EXPECT_TRUE(has_line(text, line)) << line << " in\n" << text;
  EXPECT_EQ(text.find("\ndisk_gib = "), std::string::npos) << "an unknown resource is left to the kind's default";
  // The key itself reaches the server's environment, from this process's, and nowhere else.
  ::setenv("MY_DAYTONA_KEY", "dtn-secret", 1);
  const auto vars = environment_variables(env);
  ::unsetenv("MY_DAYTONA_KEY");
  ASSERT_EQ(vars.size(), 1U);
  EXPECT_EQ(vars.at("MY_DAYTONA_KEY"), "dtn-secret");
  EXPECT_EQ(text.find("dtn-secret"), std::string::npos);
  // Here: nothing.
  f.plan.environment = {"local", "Local", "local"};
  EXPECT_FALSE(leased(env));
  EXPECT_EQ(environment_config(env), "");
}

TEST(environments, a_daytona_cell_without_its_key_is_skipped_saying_why_and_starts_nothing) {
  scratch_dir dir;
  na_fixture f(dir.path(), "opencode-run");
  f.plan.environment = {"daytona", "Daytona sandbox", "daytona"};
  f.plan.environment.api_key_env = "TETHER_E2E_TEST_DAYTONA_KEY_UNSET";
  ::unsetenv("TETHER_E2E_TEST_DAYTONA_KEY_UNSET");
  const auto why = skip_reason(f.plan);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("$TETHER_E2E_TEST_DAYTONA_KEY_UNSET is not set"), std::string::npos) << *why;
  const cell_result r = run_cell(f.plan, nullptr);
  EXPECT_EQ(r.status, cell_status::skipped);
  EXPECT_EQ(r.skipped_reason, *why);
  EXPECT_FALSE(r.failure);
  EXPECT_EQ(r.runtime_cost.provider, "daytona");
  EXPECT_FALSE(fs::exists(f.plan.scratch_root));  // nothing was set up
  // With the key it would run.
  ::setenv("TETHER_E2E_TEST_DAYTONA_KEY_UNSET", "dtn-test", 1);
  EXPECT_FALSE(skip_reason(f.plan));
  ::unsetenv("TETHER_E2E_TEST_DAYTONA_KEY_UNSET");
  // An environment that is not Daytona's needs no key.
  f.plan.environment = {"ssh", "SSH host", "ssh"};
  EXPECT_FALSE(skip_reason(f.plan));
}

// A suites directory whose one case applies to no agent program.
fs::path agent_only_suites(const fs::path& dir) {
  const fs::path suites = dir / "suites";
  fs::create_directories(suites);
  std::ofstream(suites / "s.toml") << R"toml(
[profiles.codex]
title = "Codex"
runtime = "codex-exec"
[profiles.claude]
title = "Claude"
runtime = "claude-print"
[environments.local]
title = "Local"
[suite]
id = "s"
title = "S"
profiles = ["codex", "claude"]
environments = ["local"]
[[cases]]
id = "steer"
title = "Steer mid-turn"
steps = [{ do = "create_session" }]
not_applicable = { "codex-exec" = "one process per turn", "claude-print" = "one process per turn" }
)toml";
  return suites;
}

TEST(not_applicable, a_campaign_of_cells_that_do_not_apply_runs_nothing_and_is_not_green) {
  scratch_dir dir;
  const fs::path suites = agent_only_suites(dir.path());
  campaign_options o;
  o.suites_dir = suites;
  o.out = dir.path() / "out";
  o.profile = "codex";
  o.tether_binary = "/nonexistent/tether";
  o.scratch_root = dir.path() / "scratch";
  std::vector<std::string> lines;
  progress_sink progress{progress_style::lines, [&](const std::string& l) { lines.push_back(l); }};
  auto c = run_campaign(o, progress, [] { return false; });
  ASSERT_TRUE(c) << c.error().describe();
  EXPECT_EQ(c->totals.not_applicable, 1);
  EXPECT_EQ(c->totals.selected, 0);
  EXPECT_FALSE(c->green());
  ASSERT_EQ(c->cells.size(), 1u);
  EXPECT_EQ(c->cells[0].status, cell_status::not_applicable);
  ASSERT_EQ(lines.size(), 1u);  // no "start" line: nothing started
  EXPECT_NE(lines[0].find("not_applicable s.codex.local.steer: one process per turn"), std::string::npos) << lines[0];
  auto record = read_json_file(o.out / "campaigns" / c->id / c->cells[0].result);
  ASSERT_TRUE(record) << record.error().describe();
  EXPECT_EQ(record->at("status"), "not_applicable");
  EXPECT_EQ(record->at("notApplicableReason"), "one process per turn");
}

TEST(campaign, a_filter_may_name_several_ids_and_each_must_select_something) {
  scratch_dir dir;
  campaign_options o;
  o.suites_dir = agent_only_suites(dir.path());
  o.out = dir.path() / "out";
  o.tether_binary = "/nonexistent/tether";
  o.scratch_root = dir.path() / "scratch";
  o.profile = "codex,claude";
  auto both = run_campaign(o, {}, [] { return false; });
  ASSERT_TRUE(both) << both.error().describe();
  EXPECT_EQ(both->totals.not_applicable, 2);
  o.profile = "codex,cladue";
  auto typo = run_campaign(o, {}, [] { return false; });
  ASSERT_FALSE(typo);
  EXPECT_EQ(typo.error(), e2e_errc::invalid_definition);
  EXPECT_NE(typo.error().message.find("no profile 'cladue'"), std::string::npos) << typo.error().message;
}

}  // namespace
}  // namespace tether::e2e
