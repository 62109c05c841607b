// The cell record (tether.e2e.result/v1): its enums, billing and JSON form.
#include "e2e/result.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <utility>

#include <boost/json.hpp>

#include "e2e/json_io.h"
#include "e2e/result_json.h"

namespace tether::e2e {

namespace json = boost::json;
using namespace record_json;

namespace {

json::object llm_json(const llm_billing& b) {
  json::object o;
  o["runCount"] = b.run_count;
  o["runsWithTokenUsage"] = b.runs_with_token_usage;
  o["runsWithReportedCost"] = b.runs_with_reported_cost;
  o["inputTokens"] = b.input_tokens;
  o["outputTokens"] = b.output_tokens;
  o["cachedInputTokens"] = b.cached_input_tokens;
  o["totalTokens"] = b.total_tokens;
  o["reportedCostUsd"] = or_null(b.reported_cost_usd);
  o["costStatus"] = b.cost_status;
  return o;
}

json::object runtime_json(const runtime_billing& b) {
  json::object o;
  o["provider"] = b.provider;
  o["durationMs"] = b.duration_ms;
  o["agentTimeMs"] = b.agent_time_ms;
  o["agentRunDurationMs"] = b.agent_time_ms;
  o["leaseDurationMs"] = or_null(b.lease_duration_ms);
  o["leaseCount"] = b.lease_count;
  o["cpuCores"] = or_null(b.cpu_cores);
  o["memoryGiB"] = or_null(b.memory_gib);
  o["diskGiB"] = or_null(b.disk_gib);
  o["estimatedListCostUsd"] = or_null(b.estimated_cost_usd);
  o["costStatus"] = b.cost_status;
  o["costSource"] = b.cost_source;
  o["pricingAsOf"] = b.price ? json::value(b.price->date) : json::value(nullptr);
  o["pricingUrl"] = b.price && !b.price->url.empty() ? json::value(b.price->url) : json::value(nullptr);
  if (b.price)
    o["price"] = json::object{{"cpuHourUsd", b.price->cpu_hour},
                              {"memoryGiBHourUsd", b.price->memory_gib_hour},
                              {"diskGiBHourUsd", b.price->disk_gib_hour}};
  return o;
}

void read_runtime(json_reader& rt, runtime_billing& b) {
  b.provider = rt.opt_str("provider", "local");
  b.duration_ms = rt.integer("durationMs", 0);
  b.agent_time_ms = rt.integer("agentTimeMs", 0);
  b.lease_duration_ms = rt.opt_integer("leaseDurationMs");
  b.lease_count = rt.integer("leaseCount", 0);
  b.cpu_cores = rt.opt_integer("cpuCores");
  b.memory_gib = rt.opt_integer("memoryGiB");
  b.disk_gib = rt.opt_integer("diskGiB");
  b.estimated_cost_usd = rt.opt_number("estimatedListCostUsd");
  b.cost_status = rt.opt_str("costStatus", "not_metered");
  b.cost_source = rt.opt_str("costSource", "local_not_metered");
  if (auto p = rt.object("price", optional_field)) {
    environment_price price;
    price.cpu_hour = p->opt_number("cpuHourUsd").value_or(0);
    price.memory_gib_hour = p->opt_number("memoryGiBHourUsd").value_or(0);
    price.disk_gib_hour = p->opt_number("diskGiBHourUsd").value_or(0);
    price.source = b.cost_source;
    price.date = rt.opt_str("pricingAsOf");
    price.url = rt.opt_str("pricingUrl");
    b.price = std::move(price);
  }
}

}  // namespace

// ---------------------------------------------------------------- enums

std::string_view to_string(cell_status s) {
  switch (s) {
    case cell_status::passed:
      return "passed";
    case cell_status::failed:
      return "failed";
    case cell_status::error:
      return "error";
    case cell_status::skipped:
      return "skipped";
    case cell_status::not_applicable:
      return "not_applicable";
  }
  return "error";
}

std::string_view to_string(failure_class f) {
  switch (f) {
    case failure_class::candidate_failure:
      return "candidate_failure";
    case failure_class::transient_infrastructure:
      return "transient_infrastructure";
    case failure_class::provider_variance:
      return "provider_variance";
    case failure_class::permanent_infrastructure:
      return "permanent_infrastructure";
    case failure_class::secret_leak:
      return "secret_leak";
    case failure_class::cleanup_failure:
      return "cleanup_failure";
  }
  return "permanent_infrastructure";
}

std::optional<cell_status> parse_cell_status(std::string_view s) {
  for (auto c : {cell_status::passed, cell_status::failed, cell_status::error, cell_status::skipped,
                 cell_status::not_applicable})
    if (to_string(c) == s) return c;
  return std::nullopt;
}

std::optional<failure_class> parse_failure_class(std::string_view s) {
  for (auto f :
       {failure_class::candidate_failure, failure_class::transient_infrastructure, failure_class::provider_variance,
        failure_class::permanent_infrastructure, failure_class::secret_leak, failure_class::cleanup_failure})
    if (to_string(f) == s) return f;
  return std::nullopt;
}

bool retryable(failure_class f) {
  return f == failure_class::transient_infrastructure || f == failure_class::provider_variance;
}

std::string iso8601(std::int64_t unix_ms) {
  // Floor division so times before 1970 still print a valid instant.
  std::int64_t secs = unix_ms / 1000;
  std::int64_t ms = unix_ms % 1000;
  if (ms < 0) {
    ms += 1000;
    secs -= 1;
  }
  const auto t = static_cast<std::time_t>(secs);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

// ---------------------------------------------------------------- billing

void compute_billing(cell_result& r) {
  llm_billing b;
  double cost = 0;
  for (const auto& u : r.usage) {
    ++b.run_count;
    if (u.input_tokens) ++b.runs_with_token_usage;
    if (u.cost_usd) {
      ++b.runs_with_reported_cost;
      cost += *u.cost_usd;
    }
    b.input_tokens += u.input_tokens.value_or(0);
    b.output_tokens += u.output_tokens.value_or(0);
    b.cached_input_tokens += u.cached_input_tokens.value_or(0);
  }
  b.total_tokens = b.input_tokens + b.output_tokens;
  if (b.runs_with_reported_cost > 0) b.reported_cost_usd = cost;
  if (b.run_count > 0 && b.runs_with_reported_cost == b.run_count)
    b.cost_status = "reported";
  else if (b.runs_with_reported_cost > 0)
    b.cost_status = "partial";
  else if (b.runs_with_token_usage > 0)
    b.cost_status = "unpriced";
  else
    b.cost_status = "unavailable";
  r.llm = std::move(b);

  // The environment's provider, resources and price were set before; the rest is measured.
  runtime_billing& rt = r.runtime_cost;
  rt.duration_ms = r.duration_ms;
  double agent = 0;
  for (const auto& t : r.turns) agent += t.run_duration_ms.value_or(0);
  rt.agent_time_ms = static_cast<std::int64_t>(std::llround(agent));
  rt.estimated_cost_usd.reset();
  const bool ran = r.status != cell_status::skipped && r.status != cell_status::not_applicable;
  if (rt.provider == "local" || rt.provider == "postgres-2node" || !ran) {
    rt.lease_duration_ms.reset();
    rt.lease_count = 0;
    rt.cost_status = "not_metered";
    rt.cost_source = ran ? "local_not_metered" : "not_run";
    return;
  }
  std::int64_t leased = 0;
  for (const auto& l : r.leases) leased += l.duration_ms;
  rt.lease_duration_ms = leased;
  rt.lease_count = static_cast<std::int64_t>(r.leases.size());
  if (!rt.price) {
    rt.cost_status = "unpriced";
    rt.cost_source = rt.provider + "_unpriced";
    return;
  }
  const double hours = static_cast<double>(leased) / 3'600'000.0;
  rt.estimated_cost_usd = hours * (static_cast<double>(rt.cpu_cores.value_or(0)) * rt.price->cpu_hour +
                                   static_cast<double>(rt.memory_gib.value_or(0)) * rt.price->memory_gib_hour +
                                   static_cast<double>(rt.disk_gib.value_or(0)) * rt.price->disk_gib_hour);
  rt.cost_status = "estimated";
  rt.cost_source = rt.price->source;
}

// ---------------------------------------------------------------- cell_result

json::value to_json(const cell_result& r) {
  json::object o;
  o["schema"] = result_schema;
  o["executionId"] = r.execution_id;
  o["suiteId"] = r.suite_id;
  o["suiteTitle"] = string_or_null(r.suite_title);
  o["suiteDescription"] = string_or_null(r.suite_description);
  o["suiteDefinitionHash"] = r.suite_definition_hash;
  o["source"] = json::object{{"sha", r.source_sha}, {"ref", r.source_ref}};
  o["attempt"] = r.attempt;
  o["status"] = to_string(r.status);
  o["cell"] = r.cell;
  o["profileId"] = r.profile_id;
  o["environmentId"] = r.environment_id;
  o["caseId"] = r.case_id;
  o["caseTitle"] = r.case_title;
  o["runtime"] = r.runtime;
  o["provider"] = string_or_null(r.provider);
  o["model"] = r.model;
  o["sessionId"] = string_or_null(r.session_id);
  json::array run_ids;
  for (const auto& id : r.run_ids) run_ids.emplace_back(id);
  o["runIds"] = std::move(run_ids);
  o["configFreshness"] = r.config_freshness;
  o["nonce"] = r.nonce;
  o["startedAt"] = iso8601(r.started_at_ms);
  o["finishedAt"] = iso8601(r.finished_at_ms);
  o["durationMs"] = r.duration_ms;
  json::array turns;
  for (const auto& t : r.turns)
    turns.emplace_back(json::object{{"runId", t.run_id},
                                    {"inputId", t.input_id},
                                    {"schedulerLatencyMs", or_null(t.scheduler_latency_ms)},
                                    {"runDurationMs", or_null(t.run_duration_ms)},
                                    {"responseMs", or_null(t.response_ms)},
                                    {"leaseOutcome", string_or_null(t.lease_outcome)},
                                    {"leaseDurationMs", or_null(t.lease_duration_ms)}});
  o["turns"] = std::move(turns);
  json::array usage;
  for (const auto& u : r.usage) {
    std::optional<std::int64_t> total;
    if (u.input_tokens || u.output_tokens) total = u.input_tokens.value_or(0) + u.output_tokens.value_or(0);
    usage.emplace_back(json::object{{"runId", u.run_id},
                                    {"outcome", u.outcome},
                                    {"inputTokens", or_null(u.input_tokens)},
                                    {"outputTokens", or_null(u.output_tokens)},
                                    {"cachedInputTokens", or_null(u.cached_input_tokens)},
                                    {"totalTokens", or_null(total)},
                                    {"costUsd", or_null(u.cost_usd)},
                                    {"costStatus", u.cost_status}});
  }
  o["usage"] = std::move(usage);
  json::array matchers;
  for (const auto& m : r.matchers)
    matchers.emplace_back(json::object{{"kind", m.kind},
                                       {"description", m.description},
                                       {"passed", m.passed},
                                       {"expected", m.expected},
                                       {"actual", m.actual},
                                       {"why", string_or_null(m.why)}});
  o["matcherResults"] = std::move(matchers);
  o["failureClass"] = r.failure ? json::value(to_string(*r.failure)) : json::value(nullptr);
  o["error"] = string_or_null(r.error);
  o["notApplicableReason"] = string_or_null(r.not_applicable_reason);
  o["skippedReason"] = string_or_null(r.skipped_reason);
  o["cleanup"] =
      json::object{{"status", r.cleanup_passed ? "passed" : "failed"}, {"details", string_or_null(r.cleanup_details)}};
  const double reported = r.llm.reported_cost_usd.value_or(0);
  const double estimated = r.runtime_cost.estimated_cost_usd.value_or(0);
  o["billing"] = json::object{
      {"llm", llm_json(r.llm)},
      {"runtime", runtime_json(r.runtime_cost)},
      {"reportedCostUsd", reported},
      {"estimatedRuntimeCostUsd", estimated},
      {"observedAndEstimatedCostUsd", reported + estimated},
      {"complete", r.llm.cost_status == "reported" && r.runtime_cost.cost_status != "unpriced"}};
  o["artifacts"] = string_or_null(r.artifacts);
  return o;
}

result<cell_result> cell_result_from_json(const json::value& v) {
  json_reader r(v, "result record");
  r.expect_schema(result_schema);
  cell_result c;
  c.execution_id = r.str("executionId");
  c.suite_id = r.str("suiteId");
  c.suite_title = r.opt_str("suiteTitle");
  c.suite_description = r.opt_str("suiteDescription");
  c.suite_definition_hash = r.opt_str("suiteDefinitionHash");
  if (auto src = r.object("source", optional_field)) {
    c.source_sha = src->opt_str("sha");
    c.source_ref = src->opt_str("ref");
  }
  c.attempt = static_cast<int>(r.integer("attempt"));
  c.status = r.enumeration("status", parse_cell_status).value_or(cell_status::error);
  c.cell = r.str("cell");
  c.profile_id = r.str("profileId");
  c.environment_id = r.str("environmentId");
  c.case_id = r.str("caseId");
  c.case_title = r.opt_str("caseTitle");
  c.runtime = r.opt_str("runtime");
  c.provider = r.opt_str("provider");
  c.model = r.opt_str("model");
  c.session_id = r.opt_str("sessionId");
  r.each("runIds", [&](json_reader& e) { c.run_ids.push_back(e.self_str()); });
  if (const auto* o = v.if_object(); o != nullptr)
    if (const auto* f = o->if_contains("configFreshness"); f != nullptr && f->is_object()) c.config_freshness = *f;
  c.nonce = r.opt_str("nonce");
  c.started_at_ms = r.time("startedAt");
  c.finished_at_ms = r.time("finishedAt");
  c.duration_ms = r.integer("durationMs", 0);
  r.each("turns", [&](json_reader& e) {
    turn_timing t;
    t.run_id = e.opt_str("runId");
    t.input_id = e.opt_str("inputId");
    t.scheduler_latency_ms = e.opt_number("schedulerLatencyMs");
    t.run_duration_ms = e.opt_number("runDurationMs");
    t.response_ms = e.opt_number("responseMs");
    t.lease_outcome = e.opt_str("leaseOutcome");
    t.lease_duration_ms = e.opt_number("leaseDurationMs");
    if (!t.lease_outcome.empty())
      c.leases.push_back({t.run_id, t.lease_outcome,
                          static_cast<std::int64_t>(std::llround(t.lease_duration_ms.value_or(0)))});
    c.turns.push_back(std::move(t));
  });
  r.each("usage", [&](json_reader& e) {
    run_usage u;
    u.run_id = e.opt_str("runId");
    u.outcome = e.opt_str("outcome");
    u.input_tokens = e.opt_integer("inputTokens");
    u.output_tokens = e.opt_integer("outputTokens");
    u.cached_input_tokens = e.opt_integer("cachedInputTokens");
    u.cost_usd = e.opt_number("costUsd");
    u.cost_status = e.opt_str("costStatus");
    c.usage.push_back(std::move(u));
  });
  r.each("matcherResults", [&](json_reader& e) {
    matcher_result m;
    m.kind = e.str("kind");
    m.description = e.opt_str("description");
    m.passed = e.boolean("passed");
    m.expected = e.opt_str("expected");
    m.actual = e.opt_str("actual");
    m.why = e.opt_str("why");
    c.matchers.push_back(std::move(m));
  });
  c.failure = r.enumeration("failureClass", parse_failure_class, optional_field);
  c.error = r.opt_str("error");
  c.not_applicable_reason = r.opt_str("notApplicableReason");
  c.skipped_reason = r.opt_str("skippedReason");
  if (auto cl = r.object("cleanup", optional_field)) {
    c.cleanup_passed = cl->opt_str("status") != "failed";
    c.cleanup_details = cl->opt_str("details");
  }
  c.artifacts = r.opt_str("artifacts");
  compute_billing(c);  // the defaults when the record carries no billing
  if (auto b = r.object("billing", optional_field)) {
    if (auto l = b->object("llm", optional_field)) {
      c.llm.run_count = l->integer("runCount", 0);
      c.llm.runs_with_token_usage = l->integer("runsWithTokenUsage", 0);
      c.llm.runs_with_reported_cost = l->integer("runsWithReportedCost", 0);
      c.llm.input_tokens = l->integer("inputTokens", 0);
      c.llm.output_tokens = l->integer("outputTokens", 0);
      c.llm.cached_input_tokens = l->integer("cachedInputTokens", 0);
      c.llm.total_tokens = l->integer("totalTokens", 0);
      c.llm.reported_cost_usd = l->opt_number("reportedCostUsd");
      c.llm.cost_status = l->opt_str("costStatus", "unavailable");
    }
    if (auto rt = b->object("runtime", optional_field)) read_runtime(*rt, c.runtime_cost);
  }
  if (!r.ok()) return r.failure();
  return c;
}

}  // namespace tether::e2e
