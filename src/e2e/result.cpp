#include "e2e/result.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <utility>

#include <boost/json.hpp>

#include "e2e/json_io.h"

namespace tether::e2e {

namespace json = boost::json;

namespace {

constexpr std::string_view result_schema = "tether.e2e.result/v1";
constexpr std::string_view campaign_schema = "tether.e2e.campaign/v1";
constexpr std::string_view history_schema = "tether.e2e.history/v1";

template <class T>
json::value or_null(const std::optional<T>& v) {
  if (!v) return nullptr;
  return json::value(*v);
}

json::value string_or_null(const std::string& s) {
  if (s.empty()) return nullptr;
  return json::value(s);
}

json::object tally_json(const suite_tally& t, bool with_id) {
  json::object o;
  if (with_id) o["suiteId"] = t.suite_id;
  o["selected"] = t.selected;
  o["passed"] = t.passed;
  o["failed"] = t.failed;
  o["incomplete"] = t.incomplete;
  o["retries"] = t.retries;
  return o;
}

void read_tally(json_reader& r, suite_tally& t, bool with_id) {
  if (with_id) t.suite_id = r.str("suiteId");
  t.selected = static_cast<int>(r.integer("selected"));
  t.passed = static_cast<int>(r.integer("passed"));
  t.failed = static_cast<int>(r.integer("failed"));
  t.incomplete = static_cast<int>(r.integer("incomplete"));
  t.retries = static_cast<int>(r.integer("retries", 0));
}

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
  o["costStatus"] = b.cost_status;
  return o;
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
  for (auto c : {cell_status::passed, cell_status::failed, cell_status::error, cell_status::skipped})
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

  runtime_billing rt;
  rt.duration_ms = r.duration_ms;
  double agent = 0;
  for (const auto& t : r.turns) agent += t.run_duration_ms.value_or(0);
  rt.agent_time_ms = static_cast<std::int64_t>(std::llround(agent));
  r.runtime_cost = std::move(rt);
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
  o["provider"] = r.provider;
  o["model"] = r.model;
  o["sessionId"] = string_or_null(r.session_id);
  json::array run_ids;
  for (const auto& id : r.run_ids) run_ids.emplace_back(id);
  o["runIds"] = std::move(run_ids);
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
                                    {"responseMs", or_null(t.response_ms)}});
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
  o["cleanup"] =
      json::object{{"status", r.cleanup_passed ? "passed" : "failed"}, {"details", string_or_null(r.cleanup_details)}};
  o["billing"] = json::object{{"llm", llm_json(r.llm)}, {"runtime", runtime_json(r.runtime_cost)}};
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
    if (auto rt = b->object("runtime", optional_field)) {
      c.runtime_cost.provider = rt->opt_str("provider", "local");
      c.runtime_cost.duration_ms = rt->integer("durationMs", 0);
      c.runtime_cost.agent_time_ms = rt->integer("agentTimeMs", 0);
      c.runtime_cost.cost_status = rt->opt_str("costStatus", "not_metered");
    }
  }
  if (!r.ok()) return r.failure();
  return c;
}

// ---------------------------------------------------------------- campaign

bool campaign::green() const { return totals.selected > 0 && totals.passed == totals.selected; }

json::value to_json(const campaign& c) {
  json::object o;
  o["schema"] = campaign_schema;
  o["id"] = c.id;
  o["startedAt"] = iso8601(c.started_at_ms);
  o["finishedAt"] = iso8601(c.finished_at_ms);
  o["durationMs"] = c.finished_at_ms - c.started_at_ms;
  o["source"] = json::object{{"sha", c.source_sha}, {"ref", c.source_ref}};
  json::object sel;
  for (const auto& [k, v] : c.selection) sel[k] = v;
  o["selection"] = std::move(sel);
  o["totals"] = tally_json(c.totals, false);
  json::array suites;
  for (const auto& s : c.suites) suites.emplace_back(tally_json(s, true));
  o["suites"] = std::move(suites);
  json::array cells;
  for (const auto& ref : c.cells)
    cells.emplace_back(
        json::object{{"cell", ref.cell},
                     {"attempt", ref.attempt},
                     {"status", to_string(ref.status)},
                     {"failureClass", ref.failure ? json::value(to_string(*ref.failure)) : json::value(nullptr)},
                     {"result", ref.result}});
  o["cells"] = std::move(cells);
  o["status"] = c.green() ? "passed" : "failed";
  return o;
}

result<campaign> campaign_from_json(const json::value& v) {
  json_reader r(v, "campaign record");
  r.expect_schema(campaign_schema);
  campaign c;
  c.id = r.str("id");
  c.started_at_ms = r.time("startedAt");
  c.finished_at_ms = r.time("finishedAt");
  if (auto src = r.object("source", optional_field)) {
    c.source_sha = src->opt_str("sha");
    c.source_ref = src->opt_str("ref");
  }
  if (auto sel = r.object("selection", optional_field))
    sel->each_member([&](const std::string& k, json_reader& e) { c.selection[k] = e.self_str(); });
  if (auto t = r.object("totals")) read_tally(*t, c.totals, false);
  r.each("suites", [&](json_reader& e) {
    suite_tally t;
    read_tally(e, t, true);
    c.suites.push_back(std::move(t));
  });
  r.each("cells", [&](json_reader& e) {
    campaign::cell_ref ref;
    ref.cell = e.str("cell");
    ref.attempt = static_cast<int>(e.integer("attempt"));
    ref.status = e.enumeration("status", parse_cell_status).value_or(cell_status::error);
    ref.failure = e.enumeration("failureClass", parse_failure_class, optional_field);
    ref.result = e.str("result");
    c.cells.push_back(std::move(ref));
  });
  if (!r.ok()) return r.failure();
  return c;
}

campaign summarize(std::string id, const std::vector<cell_result>& results) {
  campaign c;
  c.id = std::move(id);
  // Every attempt, ordered by cell (first appearance) then attempt, so each
  // cell's final attempt is its last entry.
  std::vector<const cell_result*> order;
  order.reserve(results.size());
  for (const auto& r : results) order.push_back(&r);
  std::map<std::string, std::size_t> first_seen;
  for (const auto* r : order) first_seen.emplace(r->cell, first_seen.size());
  std::stable_sort(order.begin(), order.end(), [&](const cell_result* a, const cell_result* b) {
    if (a->cell != b->cell) return first_seen[a->cell] < first_seen[b->cell];
    return a->attempt < b->attempt;
  });

  std::map<std::string, std::size_t> suite_index;
  bool have_time = false;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const cell_result& r = *order[i];
    if (c.source_sha.empty()) c.source_sha = r.source_sha;
    if (c.source_ref.empty()) c.source_ref = r.source_ref;
    if (!have_time || r.started_at_ms < c.started_at_ms) c.started_at_ms = r.started_at_ms;
    if (!have_time || r.finished_at_ms > c.finished_at_ms) c.finished_at_ms = r.finished_at_ms;
    have_time = true;

    // A passed cell whose cleanup failed did not pass: its reference says so.
    campaign::cell_ref ref{r.cell, r.attempt, r.status, r.failure,
                           "cells/" + r.cell + ".attempt-" + std::to_string(r.attempt) + ".json"};
    if (r.status == cell_status::passed && !r.cleanup_passed) {
      ref.status = cell_status::failed;
      if (!ref.failure) ref.failure = failure_class::cleanup_failure;
    }
    c.cells.push_back(ref);

    auto [it, inserted] = suite_index.emplace(r.suite_id, c.suites.size());
    if (inserted) c.suites.push_back(suite_tally{.suite_id = r.suite_id});
    suite_tally& s = c.suites[it->second];
    const bool final_attempt = i + 1 == order.size() || order[i + 1]->cell != r.cell;
    if (!final_attempt) {
      ++s.retries;
      continue;
    }
    ++s.selected;
    switch (ref.status) {
      case cell_status::passed:
        ++s.passed;
        break;
      case cell_status::failed:
        ++s.failed;
        break;
      case cell_status::error:
      case cell_status::skipped:
        ++s.incomplete;
        break;
    }
  }
  for (const auto& s : c.suites) {
    c.totals.selected += s.selected;
    c.totals.passed += s.passed;
    c.totals.failed += s.failed;
    c.totals.incomplete += s.incomplete;
    c.totals.retries += s.retries;
  }
  return c;
}

// ---------------------------------------------------------------- history

json::value to_json(const history& h) {
  json::object o;
  o["schema"] = history_schema;
  json::array list;
  for (const auto& e : h.campaigns) {
    json::object c;
    c["id"] = e.id;
    c["startedAt"] = iso8601(e.started_at_ms);
    c["status"] = e.green ? "passed" : "failed";
    c["totals"] = tally_json(e.totals, false);
    json::array suites;
    for (const auto& s : e.suites) suites.emplace_back(tally_json(s, true));
    c["suites"] = std::move(suites);
    c["inputTokens"] = e.input_tokens;
    c["outputTokens"] = e.output_tokens;
    c["cachedInputTokens"] = e.cached_input_tokens;
    c["costUsd"] = or_null(e.cost_usd);
    c["agentTimeMs"] = e.agent_time_ms;
    c["path"] = e.path;
    list.emplace_back(std::move(c));
  }
  o["campaigns"] = std::move(list);
  o["latest"] = string_or_null(h.latest);
  o["latestGreen"] = string_or_null(h.latest_green);
  return o;
}

result<history> history_from_json(const json::value& v) {
  json_reader r(v, "history");
  r.expect_schema(history_schema);
  history h;
  r.each(
      "campaigns",
      [&](json_reader& e) {
        history_entry c;
        c.id = e.str("id");
        c.started_at_ms = e.time("startedAt");
        c.green = e.str("status") == "passed";
        if (auto t = e.object("totals")) read_tally(*t, c.totals, false);
        e.each("suites", [&](json_reader& s) {
          suite_tally t;
          read_tally(s, t, true);
          c.suites.push_back(std::move(t));
        });
        c.input_tokens = e.integer("inputTokens", 0);
        c.output_tokens = e.integer("outputTokens", 0);
        c.cached_input_tokens = e.integer("cachedInputTokens", 0);
        c.cost_usd = e.opt_number("costUsd");
        c.agent_time_ms = e.integer("agentTimeMs", 0);
        c.path = e.str("path");
        h.campaigns.push_back(std::move(c));
      },
      required_field);
  h.latest = r.opt_str("latest");
  h.latest_green = r.opt_str("latestGreen");
  if (!r.ok()) return r.failure();
  return h;
}

result<history> record_campaign(const std::filesystem::path& out, const campaign& c,
                                const std::vector<cell_result>& results) {
  history h;
  const auto file = out / "history.json";
  if (auto v = read_json_file(file)) {
    auto parsed = history_from_json(*v);
    if (!parsed) return parsed.error();
    h = std::move(parsed).value();
  } else if (v.error() != e2e_errc::not_found) {
    return v.error();
  }

  history_entry e;
  e.id = c.id;
  e.started_at_ms = c.started_at_ms;
  e.green = c.green();
  e.totals = c.totals;
  e.suites = c.suites;
  e.path = "campaigns/" + c.id + "/campaign.json";
  // Tokens, cost and agent time count every attempt: a retry is paid for too.
  double cost = 0;
  bool any_cost = false;
  for (const auto& r : results) {
    e.input_tokens += r.llm.input_tokens;
    e.output_tokens += r.llm.output_tokens;
    e.cached_input_tokens += r.llm.cached_input_tokens;
    e.agent_time_ms += r.runtime_cost.agent_time_ms;
    if (r.llm.reported_cost_usd) {
      cost += *r.llm.reported_cost_usd;
      any_cost = true;
    }
  }
  if (any_cost) e.cost_usd = cost;

  std::erase_if(h.campaigns, [&](const history_entry& x) { return x.id == e.id; });
  h.campaigns.push_back(std::move(e));
  std::stable_sort(h.campaigns.begin(), h.campaigns.end(), [](const history_entry& a, const history_entry& b) {
    if (a.started_at_ms != b.started_at_ms) return a.started_at_ms < b.started_at_ms;
    return a.id < b.id;
  });
  h.latest = h.campaigns.back().id;
  h.latest_green.clear();
  for (auto it = h.campaigns.rbegin(); it != h.campaigns.rend(); ++it)
    if (it->green) {
      h.latest_green = it->id;
      break;
    }
  TETHER_TRY(write_json_file(file, to_json(h)));
  return h;
}

}  // namespace tether::e2e
