// The campaign record (tether.e2e.campaign/v1) and the summary of its cells.
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

namespace record_json {

json::object tally_json(const suite_tally& t, bool with_id) {
  json::object o;
  if (with_id) o["suiteId"] = t.suite_id;
  o["selected"] = t.selected;
  o["passed"] = t.passed;
  o["failed"] = t.failed;
  o["incomplete"] = t.incomplete;
  o["notApplicable"] = t.not_applicable;
  o["skipped"] = t.skipped;
  o["retries"] = t.retries;
  return o;
}

void read_tally(json_reader& r, suite_tally& t, bool with_id) {
  if (with_id) t.suite_id = r.str("suiteId");
  t.selected = static_cast<int>(r.integer("selected"));
  t.passed = static_cast<int>(r.integer("passed"));
  t.failed = static_cast<int>(r.integer("failed"));
  t.incomplete = static_cast<int>(r.integer("incomplete"));
  t.not_applicable = static_cast<int>(r.integer("notApplicable", 0));  // absent before not_applicable existed
  t.skipped = static_cast<int>(r.integer("skipped", 0));
  t.retries = static_cast<int>(r.integer("retries", 0));
}

}  // namespace record_json

// ---------------------------------------------------------------- campaign

bool campaign::green() const { return totals.selected > 0 && totals.passed == totals.selected; }

json::value to_json(const campaign& c) {
  json::object o;
  o["schema"] = campaign_schema;
  o["id"] = c.id;
  o["startedAt"] = iso8601(c.started_at_ms);
  o["finishedAt"] = iso8601(c.finished_at_ms);
  o["durationMs"] = c.finished_at_ms - c.started_at_ms;
  o["source"] = json::object{{"sha", string_or_null(c.source_sha)}, {"ref", string_or_null(c.source_ref)}};
  o["binary"] = json::object{{"path", string_or_null(c.binary_path)}, {"version", string_or_null(c.binary_version)}};
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
    if (c.source_sha == "unknown") c.source_sha.clear();  // older records said so
    if (c.source_ref == "unknown") c.source_ref.clear();
  }
  if (auto bin = r.object("binary", optional_field)) {
    c.binary_path = bin->opt_str("path");
    c.binary_version = bin->opt_str("version");
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
    if (ref.status == cell_status::not_applicable) {
      ++s.not_applicable;
      continue;
    }
    if (ref.status == cell_status::skipped && !r.skipped_reason.empty()) {
      ++s.skipped;  // what it needs is not here: like not_applicable, neither a pass nor a failure
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
      case cell_status::not_applicable:
        break;  // counted above
    }
  }
  for (const auto& s : c.suites) {
    c.totals.selected += s.selected;
    c.totals.passed += s.passed;
    c.totals.failed += s.failed;
    c.totals.incomplete += s.incomplete;
    c.totals.not_applicable += s.not_applicable;
    c.totals.skipped += s.skipped;
    c.totals.retries += s.retries;
  }
  return c;
}

}  // namespace tether::e2e
