// The history of campaigns (tether.e2e.history/v1) and recording a campaign in it.
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

// ---------------------------------------------------------------- history

void usage_totals::add(const cell_result& r) {
  input_tokens += r.llm.input_tokens;
  output_tokens += r.llm.output_tokens;
  cached_input_tokens += r.llm.cached_input_tokens;
  agent_time_ms += r.runtime_cost.agent_time_ms;
  if (r.llm.reported_cost_usd) cost_usd = cost_usd.value_or(0) + *r.llm.reported_cost_usd;
}

namespace {

void usage_json(json::object& o, const usage_totals& u) {
  o["inputTokens"] = u.input_tokens;
  o["outputTokens"] = u.output_tokens;
  o["cachedInputTokens"] = u.cached_input_tokens;
  o["costUsd"] = or_null(u.cost_usd);
  o["agentTimeMs"] = u.agent_time_ms;
}

usage_totals read_usage(json_reader& e) {
  usage_totals u;
  u.input_tokens = e.integer("inputTokens", 0);
  u.output_tokens = e.integer("outputTokens", 0);
  u.cached_input_tokens = e.integer("cachedInputTokens", 0);
  u.cost_usd = e.opt_number("costUsd");
  u.agent_time_ms = e.integer("agentTimeMs", 0);
  return u;
}

}  // namespace

json::value to_json(const history& h) {
  json::object o;
  o["schema"] = history_schema;
  json::array list;
  for (const auto& e : h.campaigns) {
    json::object c;
    c["id"] = e.id;
    c["startedAt"] = iso8601(e.started_at_ms);
    c["status"] = e.green ? "passed" : "failed";
    json::object sel;
    for (const auto& [k, v] : e.selection) sel[k] = v;
    c["selection"] = std::move(sel);
    c["totals"] = tally_json(e.totals, false);
    json::array suites;
    for (const auto& s : e.suites) {
      auto t = tally_json(s, true);
      if (const auto u = e.suite_usage.find(s.suite_id); u != e.suite_usage.end()) usage_json(t, u->second);
      suites.emplace_back(std::move(t));
    }
    c["suites"] = std::move(suites);
    usage_json(c, usage_totals{e.input_tokens, e.output_tokens, e.cached_input_tokens, e.cost_usd, e.agent_time_ms});
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
        if (auto sel = e.object("selection", optional_field))
          sel->each_member([&](const std::string& k, json_reader& v) { c.selection[k] = v.self_str(); });
        if (auto t = e.object("totals")) read_tally(*t, c.totals, false);
        e.each("suites", [&](json_reader& s) {
          suite_tally t;
          read_tally(s, t, true);
          c.suite_usage[t.suite_id] = read_usage(s);
          c.suites.push_back(std::move(t));
        });
        const auto u = read_usage(e);
        c.input_tokens = u.input_tokens;
        c.output_tokens = u.output_tokens;
        c.cached_input_tokens = u.cached_input_tokens;
        c.cost_usd = u.cost_usd;
        c.agent_time_ms = u.agent_time_ms;
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
  e.selection = c.selection;
  e.totals = c.totals;
  e.suites = c.suites;
  e.path = "campaigns/" + c.id + "/campaign.json";
  // Tokens, cost and agent time count every attempt: a retry is paid for too.
  usage_totals all;
  for (const auto& r : results) {
    all.add(r);
    e.suite_usage[r.suite_id].add(r);
  }
  e.input_tokens = all.input_tokens;
  e.output_tokens = all.output_tokens;
  e.cached_input_tokens = all.cached_input_tokens;
  e.cost_usd = all.cost_usd;
  e.agent_time_ms = all.agent_time_ms;

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
