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
