#include "e2e/result.h"

#include <unistd.h>

#include <fstream>
#include <random>

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include "e2e/scratch_dir.h"

namespace tether::e2e {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

using test::scratch_dir;

constexpr std::int64_t t0 = 1'796'029'262'345;  // 2026-11-30T09:01:02.345Z

cell_result sample_cell(std::string suite, std::string profile, std::string kase, int attempt = 1,
                        cell_status status = cell_status::passed) {
  cell_result r;
  r.suite_id = std::move(suite);
  r.suite_title = "Chat basics";
  r.suite_description = "Messages reach the model and come back.";
  r.suite_definition_hash = "4f2a9c0d1e2b3a4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4";
  r.source_sha = "0123456789abcdef0123456789abcdef01234567";
  r.source_ref = "main";
  r.attempt = attempt;
  r.status = status;
  r.profile_id = std::move(profile);
  r.environment_id = "local";
  r.case_id = std::move(kase);
  r.cell = r.suite_id + "." + r.profile_id + "." + r.environment_id + "." + r.case_id;
  r.execution_id = "20261130T090102Z-ab12/" + r.cell + "/" + std::to_string(attempt);
  r.case_title = "Say hello";
  r.runtime = "native";
  r.provider = "openai-chat";
  r.model = "scripted";
  r.session_id = "ses_01";
  r.run_ids = {"run_1", "run_2"};
  r.nonce = "a1b2c3d4e5f6-" + std::to_string(attempt);
  r.started_at_ms = t0;
  r.finished_at_ms = t0 + 4'321;
  r.duration_ms = 4'321;
  r.turns = {{"run_1", "in_1", 12.5, 800.0, 830.25}, {"run_2", "in_2", std::nullopt, 1200.0, std::nullopt}};
  r.usage = {{"run_1", "succeeded", 100, 20, 50, 0.002, "reported"},
             {"run_2", "succeeded", 200, 30, std::nullopt, 0.003, "priced"}};
  r.matchers = {{"message_exact", "message_exact \"MARK-a1\"", true, "MARK-a1", "MARK-a1", ""},
                {"run_count", "run_count 2", false, "2", "3", "3 runs, expected 2"}};
  if (status != cell_status::passed) r.failure = failure_class::candidate_failure;
  r.artifacts = r.cell + ".attempt-" + std::to_string(attempt);
  compute_billing(r);
  return r;
}

TEST(Result, ACellResultRoundTripsThroughJson) {
  cell_result r = sample_cell("chat", "mock", "hello", 2, cell_status::failed);
  r.error = "the model answered something else";
  r.cleanup_passed = false;
  r.cleanup_details = "server did not stop";
  const json::value v = to_json(r);
  EXPECT_EQ(v.at("schema"), "tether.e2e.result/v1");
  EXPECT_EQ(v.at("startedAt"), "2026-11-30T09:01:02.345Z");

  auto back = cell_result_from_json(json::parse(json::serialize(v)));
  ASSERT_TRUE(back) << back.error().describe();
  EXPECT_EQ(back->cell, r.cell);
  EXPECT_EQ(back->suite_title, r.suite_title);
  EXPECT_EQ(back->attempt, 2);
  EXPECT_EQ(back->status, cell_status::failed);
  EXPECT_EQ(back->failure, failure_class::candidate_failure);
  EXPECT_EQ(back->started_at_ms, r.started_at_ms);
  EXPECT_EQ(back->finished_at_ms, r.finished_at_ms);
  EXPECT_EQ(back->run_ids, r.run_ids);
  ASSERT_EQ(back->turns.size(), 2u);
  EXPECT_EQ(back->turns[0].response_ms, 830.25);
  EXPECT_FALSE(back->turns[1].scheduler_latency_ms);
  ASSERT_EQ(back->usage.size(), 2u);
  EXPECT_FALSE(back->usage[1].cached_input_tokens);
  EXPECT_EQ(back->usage[1].cost_usd, 0.003);
  ASSERT_EQ(back->matchers.size(), 2u);
  EXPECT_EQ(back->matchers[1].why, "3 runs, expected 2");
  EXPECT_FALSE(back->cleanup_passed);
  EXPECT_EQ(back->cleanup_details, "server did not stop");
  EXPECT_EQ(back->error, r.error);
  EXPECT_EQ(back->llm.cost_status, "reported");
  EXPECT_EQ(back->runtime_cost.agent_time_ms, 2000);
  // The whole record survives: a second trip writes the same JSON.
  EXPECT_EQ(to_json(*back), v);
}

TEST(Result, MissingUsageAndCostAreNullNeverZero) {
  cell_result r = sample_cell("chat", "mock", "hello");
  r.usage = {{"run_1", "failed", std::nullopt, std::nullopt, std::nullopt, std::nullopt, "unavailable"}};
  r.error = "";
  compute_billing(r);
  const json::value v = to_json(r);
  const auto& u = v.at("usage").at(0);
  EXPECT_TRUE(u.at("inputTokens").is_null());
  EXPECT_TRUE(u.at("outputTokens").is_null());
  EXPECT_TRUE(u.at("cachedInputTokens").is_null());
  EXPECT_TRUE(u.at("totalTokens").is_null());
  EXPECT_TRUE(u.at("costUsd").is_null());
  EXPECT_TRUE(v.at("billing").at("llm").at("reportedCostUsd").is_null());
  EXPECT_EQ(v.at("billing").at("llm").at("costStatus"), "unavailable");
  EXPECT_TRUE(v.at("failureClass").is_null());
  EXPECT_TRUE(v.at("error").is_null());

  auto back = cell_result_from_json(v);
  ASSERT_TRUE(back) << back.error().describe();
  EXPECT_FALSE(back->usage[0].input_tokens);
  EXPECT_FALSE(back->usage[0].cost_usd);
  EXPECT_FALSE(back->llm.reported_cost_usd);
}

TEST(Result, BillingIsReportedOnlyWhenEveryRunReportedACost) {
  cell_result r = sample_cell("chat", "mock", "hello");
  compute_billing(r);
  EXPECT_EQ(r.llm.cost_status, "reported");
  EXPECT_EQ(r.llm.run_count, 2);
  EXPECT_EQ(r.llm.runs_with_token_usage, 2);
  EXPECT_EQ(r.llm.runs_with_reported_cost, 2);
  EXPECT_EQ(r.llm.input_tokens, 300);
  EXPECT_EQ(r.llm.output_tokens, 50);
  EXPECT_EQ(r.llm.cached_input_tokens, 50);
  EXPECT_EQ(r.llm.total_tokens, 350);
  ASSERT_TRUE(r.llm.reported_cost_usd);
  EXPECT_NEAR(*r.llm.reported_cost_usd, 0.005, 1e-12);

  r.usage[1].cost_usd.reset();
  compute_billing(r);
  EXPECT_EQ(r.llm.cost_status, "partial");
  EXPECT_EQ(r.llm.runs_with_reported_cost, 1);
  EXPECT_NEAR(*r.llm.reported_cost_usd, 0.002, 1e-12);

  r.usage[0].cost_usd.reset();
  compute_billing(r);
  EXPECT_EQ(r.llm.cost_status, "unpriced");
  EXPECT_FALSE(r.llm.reported_cost_usd);
  EXPECT_EQ(r.llm.total_tokens, 350);

  r.usage[0].input_tokens.reset();
  r.usage[1].input_tokens.reset();
  r.usage[0].output_tokens.reset();
  r.usage[1].output_tokens.reset();
  compute_billing(r);
  EXPECT_EQ(r.llm.cost_status, "unavailable");
  EXPECT_EQ(r.llm.runs_with_token_usage, 0);

  r.usage.clear();
  compute_billing(r);
  EXPECT_EQ(r.llm.cost_status, "unavailable");
  EXPECT_EQ(r.llm.run_count, 0);
}

TEST(Result, RuntimeBillingIsLocalWallTimeAndSummedRunDurations) {
  cell_result r = sample_cell("chat", "mock", "hello");
  compute_billing(r);
  EXPECT_EQ(r.runtime_cost.provider, "local");
  EXPECT_EQ(r.runtime_cost.duration_ms, 4'321);
  EXPECT_EQ(r.runtime_cost.agent_time_ms, 2'000);
  EXPECT_EQ(r.runtime_cost.cost_status, "not_metered");
  const json::value v = to_json(r);
  EXPECT_EQ(v.at("billing").at("runtime").at("agentTimeMs"), 2000);
  EXPECT_EQ(v.at("billing").at("runtime").at("costStatus"), "not_metered");
}

// A leased cell's runtime cost: lease time × the environment's list price
// (the figures of a published Daytona result: 209,923 ms on 4 vCPU, 4 GiB
// of memory and 10 GiB of disk cost $0.0155972789 at Daytona's list price).
TEST(Result, ALeasedCellsRuntimeCostIsLeaseTimeTimesTheListPrice) {
  cell_result r = sample_cell("warm", "codex", "three");
  r.environment_id = "daytona";
  r.runtime_cost.provider = "daytona";
  r.runtime_cost.cpu_cores = 4;
  r.runtime_cost.memory_gib = 4;
  r.runtime_cost.disk_gib = 10;
  r.runtime_cost.price = environment_price{0.0504, 0.0162, 0.000108, "daytona_public_list_price", "2026-08-27",
                                           "https://www.daytona.io/pricing"};
  r.leases = {{"run_1", "created", 100'000}, {"run_2", "resumed", 109'923}};
  r.turns[0].lease_outcome = "created";
  r.turns[0].lease_duration_ms = 100'000;
  r.turns[1].lease_outcome = "resumed";
  r.turns[1].lease_duration_ms = 109'923;
  compute_billing(r);
  EXPECT_EQ(r.runtime_cost.lease_duration_ms, 209'923);
  EXPECT_EQ(r.runtime_cost.lease_count, 2);
  ASSERT_TRUE(r.runtime_cost.estimated_cost_usd);
  EXPECT_NEAR(*r.runtime_cost.estimated_cost_usd, 0.0155972789, 1e-9);
  EXPECT_EQ(r.runtime_cost.cost_status, "estimated");
  const json::value v = to_json(r);
  const auto& rt = v.at("billing").at("runtime");
  EXPECT_EQ(rt.at("provider"), "daytona");
  EXPECT_EQ(rt.at("leaseDurationMs"), 209923);
  EXPECT_EQ(rt.at("leaseCount"), 2);
  EXPECT_EQ(rt.at("cpuCores"), 4);
  EXPECT_EQ(rt.at("costSource"), "daytona_public_list_price");
  EXPECT_EQ(rt.at("pricingAsOf"), "2026-08-27");
  EXPECT_EQ(rt.at("pricingUrl"), "https://www.daytona.io/pricing");
  EXPECT_NEAR(v.at("billing").at("estimatedRuntimeCostUsd").as_double(), 0.0155972789, 1e-9);
  EXPECT_NEAR(v.at("billing").at("observedAndEstimatedCostUsd").as_double(), 0.005 + 0.0155972789, 1e-9);
  EXPECT_EQ(v.at("billing").at("complete"), true);  // every run's model cost, and the runtime's estimate
  EXPECT_EQ(v.at("turns").at(1).at("leaseOutcome"), "resumed");
  auto back = cell_result_from_json(v);
  ASSERT_TRUE(back) << back.error().describe();
  EXPECT_EQ(back->leases.size(), 2U);
  EXPECT_EQ(back->runtime_cost.lease_duration_ms, 209'923);
  EXPECT_NEAR(back->runtime_cost.estimated_cost_usd.value_or(0), 0.0155972789, 1e-9);
  EXPECT_EQ(to_json(*back), v);
}

TEST(Result, ALeasedCellWithoutAPriceIsUnpricedNeverZero) {
  cell_result r = sample_cell("warm", "codex", "three");
  r.runtime_cost.provider = "ssh";
  r.leases = {{"run_1", "created", 1'200}};
  compute_billing(r);
  EXPECT_EQ(r.runtime_cost.cost_status, "unpriced");
  EXPECT_FALSE(r.runtime_cost.estimated_cost_usd);
  const json::value v = to_json(r);
  EXPECT_TRUE(v.at("billing").at("runtime").at("estimatedListCostUsd").is_null());
  EXPECT_EQ(v.at("billing").at("runtime").at("leaseDurationMs"), 1200);
  EXPECT_EQ(v.at("billing").at("complete"), false);
  // A local cell leases nothing: no lease time at all.
  cell_result local = sample_cell("chat", "mock", "hello");
  EXPECT_TRUE(to_json(local).at("billing").at("runtime").at("leaseDurationMs").is_null());
  EXPECT_TRUE(to_json(local).at("turns").at(0).at("leaseOutcome").is_null());
}

TEST(Result, ACellSkippedForAMissingCredentialIsCountedApart) {
  cell_result skipped = sample_cell("warm", "codex", "three");
  skipped.status = cell_status::skipped;
  skipped.skipped_reason = "$DAYTONA_API_KEY is not set";
  skipped.run_ids.clear();
  const campaign c = summarize("c1", {sample_cell("chat", "mock", "hello"), skipped});
  EXPECT_EQ(c.totals.selected, 1);
  EXPECT_EQ(c.totals.skipped, 1);
  EXPECT_EQ(c.totals.incomplete, 0);
  EXPECT_TRUE(c.green());
  EXPECT_EQ(to_json(c).at("totals").at("skipped"), 1);
  auto back = cell_result_from_json(to_json(skipped));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->skipped_reason, "$DAYTONA_API_KEY is not set");
  // Interrupted before it started is still incomplete.
  cell_result interrupted = skipped;
  interrupted.skipped_reason.clear();
  interrupted.error = "interrupted before it started";
  const campaign d = summarize("c2", {sample_cell("chat", "mock", "hello"), interrupted});
  EXPECT_EQ(d.totals.incomplete, 1);
  EXPECT_FALSE(d.green());
}

TEST(Result, OnlyTransientFailuresAreRetryable) {
  EXPECT_TRUE(retryable(failure_class::transient_infrastructure));
  EXPECT_TRUE(retryable(failure_class::provider_variance));
  EXPECT_FALSE(retryable(failure_class::candidate_failure));
  EXPECT_FALSE(retryable(failure_class::permanent_infrastructure));
  EXPECT_FALSE(retryable(failure_class::secret_leak));
  EXPECT_FALSE(retryable(failure_class::cleanup_failure));
  for (auto f : {failure_class::candidate_failure, failure_class::secret_leak, failure_class::cleanup_failure})
    EXPECT_EQ(parse_failure_class(to_string(f)), f);
  EXPECT_EQ(parse_cell_status("skipped"), cell_status::skipped);
  EXPECT_FALSE(parse_cell_status("green"));
}

TEST(Result, WrongSchemaOrMissingFieldIsABadRecordNamingIt) {
  json::value v = to_json(sample_cell("chat", "mock", "hello"));
  v.as_object()["schema"] = "tether.e2e.result/v0";
  auto r = cell_result_from_json(v);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), e2e_errc::bad_record);
  EXPECT_NE(r.error().message.find("tether.e2e.result/v1"), std::string::npos) << r.error().message;

  v = to_json(sample_cell("chat", "mock", "hello"));
  v.as_object().erase("cell");
  r = cell_result_from_json(v);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("cell is missing"), std::string::npos) << r.error().message;

  v = to_json(sample_cell("chat", "mock", "hello"));
  v.at("turns").as_array()[1].as_object()["runDurationMs"] = "slow";
  r = cell_result_from_json(v);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("turns[1].runDurationMs is not a number"), std::string::npos) << r.error().message;

  v = to_json(sample_cell("chat", "mock", "hello"));
  v.as_object()["status"] = "green";
  r = cell_result_from_json(v);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("status has an unknown value \"green\""), std::string::npos) << r.error().message;

  EXPECT_EQ(cell_result_from_json(json::value(42)).error(), e2e_errc::bad_record);
}

TEST(Result, Iso8601IsUtcWithMilliseconds) {
  EXPECT_EQ(iso8601(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(iso8601(t0), "2026-11-30T09:01:02.345Z");
  EXPECT_EQ(iso8601(-1), "1969-12-31T23:59:59.999Z");
}

// ---------------------------------------------------------------- summarize

TEST(Result, TheFinalAttemptDecidesAndRetriesAreCounted) {
  std::vector<cell_result> results;
  auto first = sample_cell("chat", "mock", "hello", 1, cell_status::error);
  first.failure = failure_class::transient_infrastructure;
  results.push_back(first);
  results.push_back(sample_cell("chat", "mock", "steer", 1, cell_status::failed));
  results.push_back(sample_cell("chat", "mock", "hello", 2, cell_status::passed));  // the retry passed
  results.push_back(sample_cell("files", "mock", "write", 1, cell_status::skipped));
  results.push_back(sample_cell("files", "mock", "read", 1, cell_status::passed));

  const campaign c = summarize("20261130T090102Z-ab12", results);
  EXPECT_EQ(c.id, "20261130T090102Z-ab12");
  EXPECT_EQ(c.totals.selected, 4);
  EXPECT_EQ(c.totals.passed, 2);
  EXPECT_EQ(c.totals.failed, 1);
  EXPECT_EQ(c.totals.incomplete, 1);
  EXPECT_EQ(c.totals.retries, 1);
  ASSERT_EQ(c.suites.size(), 2u);
  EXPECT_EQ(c.suites[0].suite_id, "chat");
  EXPECT_EQ(c.suites[0].selected, 2);
  EXPECT_EQ(c.suites[0].passed, 1);
  EXPECT_EQ(c.suites[0].failed, 1);
  EXPECT_EQ(c.suites[0].retries, 1);
  EXPECT_EQ(c.suites[1].suite_id, "files");
  EXPECT_EQ(c.suites[1].incomplete, 1);
  EXPECT_EQ(c.suites[1].passed, 1);
  EXPECT_FALSE(c.green());

  // Every attempt is listed, each cell's final attempt last among its own.
  ASSERT_EQ(c.cells.size(), 5u);
  EXPECT_EQ(c.cells[0].cell, "chat.mock.local.hello");
  EXPECT_EQ(c.cells[0].attempt, 1);
  EXPECT_EQ(c.cells[1].cell, "chat.mock.local.hello");
  EXPECT_EQ(c.cells[1].attempt, 2);
  EXPECT_EQ(c.cells[1].result, "cells/chat.mock.local.hello.attempt-2.json");
  EXPECT_EQ(c.source_sha, results[0].source_sha);
}

TEST(Result, APassedCellWhoseCleanupFailedDidNotPass) {
  auto r = sample_cell("chat", "mock", "hello");
  r.cleanup_passed = false;
  const campaign c = summarize("c1", {r});
  EXPECT_EQ(c.totals.passed, 0);
  EXPECT_EQ(c.totals.failed, 1);
  EXPECT_FALSE(c.green());
  ASSERT_EQ(c.cells.size(), 1u);
  EXPECT_EQ(c.cells[0].status, cell_status::failed);
  EXPECT_EQ(c.cells[0].failure, failure_class::cleanup_failure);
}

TEST(Result, ACampaignIsGreenWhenEveryCellPassedAndRoundTrips) {
  campaign c = summarize("c1", {sample_cell("chat", "mock", "hello"), sample_cell("chat", "mock", "steer")});
  c.selection = {{"suite", "chat"}, {"profile", ""}};
  EXPECT_TRUE(c.green());
  const json::value v = to_json(c);
  EXPECT_EQ(v.at("schema"), "tether.e2e.campaign/v1");
  EXPECT_EQ(v.at("status"), "passed");
  auto back = campaign_from_json(v);
  ASSERT_TRUE(back) << back.error().describe();
  EXPECT_EQ(back->selection, c.selection);
  EXPECT_EQ(back->totals.passed, 2);
  EXPECT_EQ(back->cells.size(), 2u);
  EXPECT_EQ(to_json(*back), v);
  EXPECT_FALSE(summarize("empty", {}).green());
}

// ---------------------------------------------------------------- not applicable

cell_result not_applicable_cell(std::string suite, std::string profile, std::string kase) {
  cell_result r = sample_cell(std::move(suite), std::move(profile), std::move(kase));
  r.status = cell_status::not_applicable;
  r.not_applicable_reason = "a steer reaches a one-process-per-turn agent only at its next turn";
  r.runtime = "codex-exec";
  r.provider.clear();
  r.session_id.clear();
  r.run_ids.clear();
  r.turns.clear();
  r.usage.clear();
  r.matchers.clear();
  r.failure.reset();
  r.artifacts.clear();
  compute_billing(r);
  return r;
}

TEST(Result, ANotApplicableCellRoundTripsWithItsReason) {
  const cell_result r = not_applicable_cell("chat", "codex-exec", "steer");
  const json::value v = to_json(r);
  EXPECT_EQ(v.at("status"), "not_applicable");
  EXPECT_EQ(v.at("notApplicableReason"), "a steer reaches a one-process-per-turn agent only at its next turn");
  EXPECT_EQ(v.at("runtime"), "codex-exec");
  EXPECT_TRUE(v.at("provider").is_null());  // an agent program has no provider of Tether's
  EXPECT_TRUE(v.at("failureClass").is_null());
  auto back = cell_result_from_json(json::parse(json::serialize(v)));
  ASSERT_TRUE(back) << back.error().describe();
  EXPECT_EQ(back->status, cell_status::not_applicable);
  EXPECT_EQ(back->not_applicable_reason, r.not_applicable_reason);
  EXPECT_EQ(back->provider, "");
  EXPECT_EQ(to_json(*back), v);
  // Every other cell says null.
  EXPECT_TRUE(to_json(sample_cell("chat", "mock", "hello")).at("notApplicableReason").is_null());
  EXPECT_EQ(parse_cell_status("not_applicable"), cell_status::not_applicable);
  EXPECT_EQ(to_string(cell_status::not_applicable), "not_applicable");
}

TEST(Result, NotApplicableCellsAreCountedApartAndNeverDecideTheCampaign) {
  const campaign c =
      summarize("c1", {sample_cell("chat", "mock", "hello"), not_applicable_cell("chat", "codex-exec", "steer"),
                       sample_cell("files", "mock", "write"), not_applicable_cell("files", "codex-exec", "write")});
  EXPECT_EQ(c.totals.selected, 2);  // the cells that apply
  EXPECT_EQ(c.totals.passed, 2);
  EXPECT_EQ(c.totals.failed, 0);
  EXPECT_EQ(c.totals.incomplete, 0);
  EXPECT_EQ(c.totals.not_applicable, 2);
  ASSERT_EQ(c.suites.size(), 2u);
  EXPECT_EQ(c.suites[0].not_applicable, 1);
  EXPECT_EQ(c.suites[1].not_applicable, 1);
  EXPECT_TRUE(c.green());  // every cell that applies passed
  ASSERT_EQ(c.cells.size(), 4u);
  EXPECT_EQ(c.cells[1].status, cell_status::not_applicable);

  const json::value v = to_json(c);
  EXPECT_EQ(v.at("status"), "passed");
  EXPECT_EQ(v.at("totals").at("notApplicable"), 2);
  auto back = campaign_from_json(v);
  ASSERT_TRUE(back) << back.error().describe();
  EXPECT_EQ(back->totals.not_applicable, 2);
  EXPECT_EQ(back->suites[1].not_applicable, 1);
  EXPECT_EQ(back->cells[1].status, cell_status::not_applicable);
  EXPECT_EQ(to_json(*back), v);

  // A failure among them is still a failure.
  EXPECT_FALSE(summarize("c2", {sample_cell("chat", "mock", "hello", 1, cell_status::failed),
                                not_applicable_cell("chat", "codex-exec", "steer")})
                   .green());
  // Nothing that applied ran: not green, as for an empty selection.
  const campaign none = summarize("c3", {not_applicable_cell("chat", "codex-exec", "steer")});
  EXPECT_EQ(none.totals.selected, 0);
  EXPECT_EQ(none.totals.not_applicable, 1);
  EXPECT_FALSE(none.green());
}

TEST(Result, ATallyWrittenBeforeNotApplicableExistedReadsZero) {
  json::value v = to_json(summarize("c1", {sample_cell("chat", "mock", "hello")}));
  v.at("totals").as_object().erase("notApplicable");
  for (auto& s : v.at("suites").as_array()) s.as_object().erase("notApplicable");
  auto back = campaign_from_json(v);
  ASSERT_TRUE(back) << back.error().describe();
  EXPECT_EQ(back->totals.not_applicable, 0);
  EXPECT_TRUE(back->green());
}

TEST(Result, HistoryKeepsTheNotApplicableCount) {
  scratch_dir out;
  const std::vector<cell_result> cells{sample_cell("chat", "mock", "hello"),
                                       not_applicable_cell("chat", "codex-exec", "steer")};
  const campaign c = summarize("c1", cells);
  auto h = record_campaign(out.path(), c, cells);
  ASSERT_TRUE(h) << h.error().describe();
  EXPECT_EQ(h->latest_green, "c1");
  auto read = read_json_file(out.path() / "history.json");
  ASSERT_TRUE(read);
  auto back = history_from_json(*read);
  ASSERT_TRUE(back) << back.error().describe();
  ASSERT_EQ(back->campaigns.size(), 1u);
  EXPECT_EQ(back->campaigns[0].totals.not_applicable, 1);
  EXPECT_EQ(back->campaigns[0].suites.at(0).not_applicable, 1);
}

// ---------------------------------------------------------------- history

// Each entry keeps its campaign's selection and what each suite used, so
// trends compare like with like; an entry written before either existed
// reads as selecting everything, with no usage per suite.
TEST(Result, HistoryKeepsTheSelectionAndEachSuitesUsage) {
  scratch_dir out;
  const std::vector<cell_result> cells{sample_cell("chat", "mock", "hello"), sample_cell("files", "mock", "write")};
  campaign c = summarize("c1", cells);
  c.selection = {{"suite", ""}, {"profile", "mock"}};
  ASSERT_TRUE(record_campaign(out.path(), c, cells));
  auto v = read_json_file(out.path() / "history.json");
  ASSERT_TRUE(v);
  auto back = history_from_json(*v);
  ASSERT_TRUE(back) << back.error().describe();
  const auto& e = back->campaigns.at(0);
  EXPECT_EQ(e.selection, c.selection);
  ASSERT_EQ(e.suite_usage.size(), 2u);
  EXPECT_EQ(e.suite_usage.at("chat").input_tokens, 300);
  EXPECT_EQ(e.suite_usage.at("files").agent_time_ms, 2000);
  EXPECT_EQ(e.input_tokens, e.suite_usage.at("chat").input_tokens + e.suite_usage.at("files").input_tokens);
  ASSERT_TRUE(e.suite_usage.at("chat").cost_usd);

  auto& entry = v->at("campaigns").at(0).as_object();
  entry.erase("selection");
  for (auto& s : entry.at("suites").as_array()) s.as_object().erase("inputTokens");
  auto old = history_from_json(*v);
  ASSERT_TRUE(old) << old.error().describe();
  EXPECT_TRUE(old->campaigns.at(0).selection.empty());
  EXPECT_EQ(old->campaigns.at(0).suite_usage.at("chat").input_tokens, 0);
}

TEST(Result, RecordingTwoCampaignsKeepsBothOldestFirst) {
  scratch_dir out;
  auto ok_cell = sample_cell("chat", "mock", "hello");
  auto bad_cell = sample_cell("chat", "mock", "hello", 1, cell_status::failed);
  bad_cell.started_at_ms = bad_cell.finished_at_ms = t0 + 3'600'000;

  const campaign green = summarize("c-green", {ok_cell});
  const campaign red = summarize("c-red", {bad_cell});
  ASSERT_TRUE(record_campaign(out.path(), red, {bad_cell}));
  auto h = record_campaign(out.path(), green, {ok_cell});  // older, recorded later
  ASSERT_TRUE(h) << h.error().describe();
  ASSERT_EQ(h->campaigns.size(), 2u);
  EXPECT_EQ(h->campaigns[0].id, "c-green");
  EXPECT_EQ(h->campaigns[1].id, "c-red");
  EXPECT_EQ(h->latest, "c-red");
  EXPECT_EQ(h->latest_green, "c-green");
  EXPECT_EQ(h->campaigns[0].input_tokens, 300);
  EXPECT_EQ(h->campaigns[0].agent_time_ms, 2000);
  ASSERT_TRUE(h->campaigns[0].cost_usd);
  EXPECT_EQ(h->campaigns[0].path, "campaigns/c-green/campaign.json");

  // What was written reads back the same.
  auto v = read_json_file(out.path() / "history.json");
  ASSERT_TRUE(v) << v.error().describe();
  EXPECT_EQ(v->at("schema"), "tether.e2e.history/v1");
  EXPECT_EQ(v->at("latestGreen"), "c-green");
  auto back = history_from_json(*v);
  ASSERT_TRUE(back) << back.error().describe();
  EXPECT_EQ(to_json(*back), to_json(*h));
  // No temp file is left behind.
  for (const auto& e : fs::directory_iterator(out.path())) EXPECT_EQ(e.path().filename(), "history.json") << e.path();
}

TEST(Result, RecordingTheSameIdReplacesItsEntry) {
  scratch_dir out;
  auto bad_cell = sample_cell("chat", "mock", "hello", 1, cell_status::failed);
  ASSERT_TRUE(record_campaign(out.path(), summarize("c1", {bad_cell}), {bad_cell}));
  auto h = record_campaign(out.path(), summarize("c1", {bad_cell}), {bad_cell});
  ASSERT_TRUE(h);
  EXPECT_EQ(h->campaigns.size(), 1u);
  EXPECT_EQ(h->latest, "c1");
  EXPECT_EQ(h->latest_green, "");
  EXPECT_TRUE(read_json_file(out.path() / "history.json")->at("latestGreen").is_null());

  auto ok_cell = sample_cell("chat", "mock", "hello");
  h = record_campaign(out.path(), summarize("c1", {ok_cell}), {ok_cell});
  ASSERT_TRUE(h);
  ASSERT_EQ(h->campaigns.size(), 1u);
  EXPECT_TRUE(h->campaigns[0].green);
  EXPECT_EQ(h->latest_green, "c1");
}

TEST(Result, AHistoryWithAnotherSchemaIsABadRecord) {
  scratch_dir out;
  ASSERT_TRUE(write_json_file(out.path() / "history.json",
                              json::object{{"schema", "tether.e2e.history/v9"}, {"campaigns", json::array{}}}));
  auto ok_cell = sample_cell("chat", "mock", "hello");
  auto h = record_campaign(out.path(), summarize("c1", {ok_cell}), {ok_cell});
  ASSERT_FALSE(h);
  EXPECT_EQ(h.error(), e2e_errc::bad_record);
  EXPECT_NE(h.error().message.find("tether.e2e.history/v9"), std::string::npos) << h.error().message;

  std::ofstream(out.path() / "history.json") << "{ not json";
  h = record_campaign(out.path(), summarize("c1", {ok_cell}), {ok_cell});
  ASSERT_FALSE(h);
  EXPECT_EQ(h.error(), e2e_errc::bad_record);
}

TEST(Result, JsonFilesArePrettyAndTheirDirectoriesAreCreated) {
  scratch_dir out;
  const fs::path file = out.path() / "a" / "b" / "x.json";
  json::value v = {{"name", "x"}, {"cost", 0.015}, {"list", {1, 2}}, {"empty", json::object{}}, {"none", nullptr}};
  ASSERT_TRUE(write_json_file(file, v));
  std::ifstream in(file);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\n  \"name\": \"x\",\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\"cost\": 0.015"), std::string::npos) << text;
  auto back = read_json_file(file);
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, v);

  EXPECT_EQ(read_json_file(out.path() / "missing.json").error(), e2e_errc::not_found);
}

}  // namespace
}  // namespace tether::e2e
