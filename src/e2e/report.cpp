#include "e2e/report.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <boost/json.hpp>

#include "e2e/json_io.h"
#include "e2e/report_html.h"
#include "e2e/report_style.h"

namespace tether::e2e {

namespace fs = std::filesystem;
using html::escape;

// ---------------------------------------------------------------- loading

namespace {

// A campaign id as the runner makes them (UTC time, "-", hex): safe in a file
// name. Anything else in a history is refused rather than used in a path.
bool plain_id(const std::string& id) {
  return !id.empty() && id.size() <= 64 && id != "." && id != ".." &&
         std::all_of(id.begin(), id.end(), [](unsigned char c) { return std::isalnum(c) || c == '-' || c == '_'; });
}

// The regular files of a cell's artifact directory, relative to OUT, sorted.
std::vector<std::string> artifact_files(const fs::path& out, const fs::path& campaign_dir, const std::string& name) {
  std::vector<std::string> files;
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") return files;
  std::error_code ec;
  for (fs::directory_iterator it(out / campaign_dir / name, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file(ec)) files.push_back((campaign_dir / name / it->path().filename()).generic_string());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

std::string dashboard_file(const history& h, const std::string& id) {
  return id == h.latest ? "dashboard.html" : "dashboard-" + id + ".html";
}

namespace {

// What the page of campaign `id` (the latest when empty) shows, from the
// history `hist` already read from OUT.
result<report_data> load_page(const fs::path& out, history hist, const std::string& id) {
  report_data d;
  d.hist = std::move(hist);
  if (d.hist.latest.empty())
    return make_error(e2e_errc::not_found, (out / "history.json").string() + " lists no campaign");
  const std::string wanted = id.empty() ? d.hist.latest : id;
  const auto entry = std::find_if(d.hist.campaigns.begin(), d.hist.campaigns.end(),
                                  [&](const history_entry& e) { return e.id == wanted; });
  if (entry == d.hist.campaigns.end()) {
    if (!id.empty())
      return make_error(e2e_errc::not_found,
                        "no campaign " + id + " in " + (out / "history.json").string() + " (the latest is " +
                            d.hist.latest + ")");
    return make_error(e2e_errc::bad_record, "history.json: latest campaign " + d.hist.latest + " is not listed");
  }
  if (!plain_id(entry->id) || (!d.hist.latest_green.empty() && !plain_id(d.hist.latest_green)))
    return make_error(e2e_errc::bad_record, "history.json: a campaign id that is not [A-Za-z0-9_-]+");
  const fs::path campaign_file = out / entry->path;
  auto cv = read_json_file(campaign_file);
  if (!cv) return cv.error();
  auto c = campaign_from_json(*cv);
  if (!c) return make_error(e2e_errc::bad_record, campaign_file.string() + ": " + c.error().message);
  d.shown = std::move(c).value();
  const fs::path cells_dir = fs::path(entry->path).parent_path() / "cells";  // relative to OUT
  for (const auto& ref : d.shown.cells) {
    const fs::path file = campaign_file.parent_path() / ref.result;
    auto rv = read_json_file(file);
    if (!rv) return rv.error();
    auto r = cell_result_from_json(*rv);
    if (!r) return make_error(e2e_errc::bad_record, file.string() + ": " + r.error().message);
    d.artifacts.push_back(artifact_files(out, cells_dir, r->artifacts));
    d.cells.push_back(std::move(r).value());
  }
  return d;
}

}  // namespace

result<report_data> load_report_data(const fs::path& out, const std::string& id) {
  auto hv = read_json_file(out / "history.json");
  if (!hv) return hv.error();
  auto h = history_from_json(*hv);
  if (!h) return make_error(e2e_errc::bad_record, (out / "history.json").string() + ": " + h.error().message);
  return load_page(out, std::move(h).value(), id);
}

result<fs::path> write_report(const fs::path& out, const std::string& id) {
  auto d = load_report_data(out, id);
  if (!d) return d.error();
  const fs::path file = out / dashboard_file(d->hist, d->shown.id);
  TETHER_TRY(write_file_atomic(file, render_dashboard(*d)));
  const std::string& green = d->hist.latest_green;
  if (!green.empty() && green != d->shown.id) {
    auto g = load_page(out, d->hist, green);  // the same history, not read again
    if (!g) return g.error();
    TETHER_TRY(write_file_atomic(out / dashboard_file(g->hist, green), render_dashboard(*g)));
  }
  return file;
}

// ---------------------------------------------------------------- the page

namespace {

enum class verdict { pass, fail, incomplete, not_applicable };

verdict verdict_of(const cell_result& r) {
  if (r.status == cell_status::passed) return r.cleanup_passed ? verdict::pass : verdict::fail;
  if (r.status == cell_status::failed) return verdict::fail;
  // Not run for a missing credential: neither a pass nor a failure, shown like not applicable.
  if (r.status == cell_status::not_applicable || (r.status == cell_status::skipped && !r.skipped_reason.empty()))
    return verdict::not_applicable;
  return verdict::incomplete;
}
// Why a cell was not run ("" when it was).
const std::string& reason_not_run(const cell_result& r) {
  return r.status == cell_status::skipped ? r.skipped_reason : r.not_applicable_reason;
}
std::string_view css(verdict v) {
  switch (v) {
    case verdict::pass:
      return "pass";
    case verdict::fail:
      return "fail";
    case verdict::incomplete:
      return "incomplete";
    case verdict::not_applicable:
      return "na";
  }
  return "incomplete";
}
std::string_view mark(verdict v) {
  switch (v) {
    case verdict::pass:
      return "✓";
    case verdict::fail:
      return "✗";
    case verdict::incomplete:
      return "!";
    case verdict::not_applicable:
      return "–";
  }
  return "!";
}
// The pill's word for a cell's state.
std::string status_label(const cell_result& r) {
  if (r.status == cell_status::passed && !r.cleanup_passed) return "cleanup failed";
  if (r.status == cell_status::not_applicable) return "not applicable";
  return std::string(to_string(r.status));
}
// " · 3 not applicable · 2 skipped", or "" when every selected cell applied and ran.
std::string not_applicable_note(const suite_tally& t) {
  return (t.not_applicable > 0 ? fmt::format(" · {} not applicable", t.not_applicable) : "") +
         (t.skipped > 0 ? fmt::format(" · {} skipped (what they need is not here)", t.skipped) : "");
}

// "2026-11-30 09:01:02 UTC"
std::string when(std::int64_t ms) {
  std::string s = iso8601(ms);
  return s.substr(0, 10) + " " + s.substr(11, 8) + " UTC";
}
std::string short_hash(const std::string& h) { return h.size() > 12 ? h.substr(0, 12) : h; }
std::string opt_ms(const std::optional<double>& ms) { return ms ? html::duration(std::llround(*ms)) : "—"; }
std::string rate(int passed, int selected) {
  return selected > 0 ? html::percent(static_cast<double>(passed) / selected) : "—";
}

std::string tile(std::string_view label, const std::string& value, const std::string& sub = {},
                 std::string_view cls = {}) {
  return fmt::format(R"(<div class="tile {}"><div class="label">{}</div><div class="value">{}</div>{}</div>)", cls,
                     label, value, sub.empty() ? "" : R"(<div class="sub">)" + sub + "</div>");
}

std::string usage_tiles(const html::usage_sum& u) {
  std::string s;
  s += tile("Input tokens", html::thousands(u.input_tokens),
            fmt::format("{} of {} runs reported usage", u.runs_with_usage, u.runs));
  s += tile("Output tokens", html::thousands(u.output_tokens));
  s += tile("Cached input", html::thousands(u.cached_input_tokens));
  const std::string status = u.cost_status();
  std::string why = "reported by every run";
  if (status == "partial") why = fmt::format("partial: {} of {} runs reported a cost", u.runs_with_cost, u.runs);
  if (status == "unpriced") why = "tokens reported, no price";
  if (status == "unavailable") why = "no run reported usage";
  s += tile("Cost", escape(html::cost(u.cost_usd, status == "partial" ? "reported" : status)), why,
            u.cost_usd ? "" : "muted");
  if (u.leases == 0) {
    s += tile("Agent time", html::duration(u.agent_time_ms), "sum of run durations");
    return s;
  }
  s += tile("Agent time", html::duration(u.agent_time_ms),
            fmt::format("sum of run durations · {} lease ({} leases)", html::duration(u.lease_ms), u.leases));
  std::string lease_why = "lease time × the environment's list price";
  if (u.unpriced_leased_cells > 0)
    lease_why = fmt::format("{} leased cell(s) without a list price not included", u.unpriced_leased_cells);
  s += tile("Runtime cost", u.runtime_cost_usd ? escape(html::cost(u.runtime_cost_usd, "reported")) + " est." : "unpriced",
            lease_why, u.runtime_cost_usd ? "" : "muted");
  return s;
}

std::string campaign_link(const history& h, const std::string& id) {
  return fmt::format(R"(<a class="link" href="{}"><code>{}</code></a>)", html::url_path(dashboard_file(h, id)), escape(id));
}

std::string header(const report_data& d) {
  const campaign& c = d.shown;
  const bool green = c.green();
  std::string sel;
  for (const auto& [k, v] : c.selection)
    if (!v.empty()) sel += fmt::format(" · {} <code>{}</code>", escape(k), escape(v));
  const std::string source =
      c.source_sha.empty()
          ? std::string("suites not in a git checkout")
          : fmt::format("suites at <code title=\"{}\">{}</code> on <code>{}</code>", escape(c.source_sha),
                        escape(short_hash(c.source_sha)), escape(c.source_ref.empty() ? "?" : c.source_ref));
  const std::string binary =
      c.binary_version.empty()
          ? std::string("binary version unknown")
          : fmt::format("binary <code title=\"{}\">{}</code>", escape(c.binary_path), escape(c.binary_version));
  std::string links = "latest green campaign: " +
                      (d.hist.latest_green.empty() ? std::string("none yet")
                       : d.hist.latest_green == c.id ? std::string("this one")
                                                     : campaign_link(d.hist, d.hist.latest_green));
  if (c.id != d.hist.latest) links += " · latest campaign: " + campaign_link(d.hist, d.hist.latest);
  return fmt::format(
      R"(<header class="top"><div><div class="eyebrow">Tether qualification</div>)"
      R"(<h1>Campaign <code>{}</code></h1><div class="meta">{} · {} · {} · {}{}</div>)"
      R"(<div class="meta">{}</div></div>)"
      R"(<div class="badge {}">{}<span>{} of {} cells passed{}</span></div></header>)",
      escape(c.id), when(c.started_at_ms), html::duration(c.finished_at_ms - c.started_at_ms), source, binary, sel,
      links, green ? "green" : "red", green ? "GREEN" : "RED", c.totals.passed, c.totals.selected,
      not_applicable_note(c.totals));
}

std::string summary(const report_data& d) {
  const suite_tally& t = d.shown.totals;
  html::usage_sum u;
  for (const auto& r : d.cells) u.add(r);
  std::string s = R"(<section class="tiles">)";
  s += tile("Pass rate", rate(t.passed, t.selected),
            fmt::format("{} cells selected{}", t.selected, not_applicable_note(t)),
            t.selected > 0 && t.passed == t.selected ? "pass" : "fail");
  s += tile("Passed", std::to_string(t.passed), "", "pass");
  s += tile("Failed", std::to_string(t.failed), "", t.failed ? "fail" : "");
  s += tile("Incomplete", std::to_string(t.incomplete), "error or skipped", t.incomplete ? "incomplete" : "");
  s += tile("Retries", std::to_string(t.retries), "transient failures re-run");
  s += usage_tiles(u);
  return s + "</section>";
}

// Index of each cell's final attempt in `cells`.
std::map<std::string, std::size_t> final_attempts(const std::vector<cell_result>& cells) {
  std::map<std::string, std::size_t> last;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    auto [it, inserted] = last.emplace(cells[i].cell, i);
    if (!inserted && cells[it->second].attempt < cells[i].attempt) it->second = i;
  }
  return last;
}

void push_unique(std::vector<std::string>& v, const std::string& s) {
  if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}

std::string anchor(const cell_result& r) { return r.cell + ".attempt-" + std::to_string(r.attempt); }

// The suite's profile × case grid: a row per profile (· environment when the
// suite ran several), a column per case, in the order the campaign lists
// them (the suite's own order); a cell not selected is an empty square.
std::string grid(const std::vector<const cell_result*>& finals) {
  std::vector<std::string> rows, cases, envs;
  std::map<std::string, std::string> case_titles;
  std::map<std::pair<std::string, std::string>, const cell_result*> at;
  for (const auto* r : finals) push_unique(envs, r->environment_id);
  const bool by_env = envs.size() > 1;
  auto row_of = [&](const cell_result& r) { return by_env ? r.profile_id + " · " + r.environment_id : r.profile_id; };
  for (const auto* r : finals) {
    push_unique(rows, row_of(*r));
    push_unique(cases, r->case_id);
    case_titles.emplace(r->case_id, r->case_title);
    at[{row_of(*r), r->case_id}] = r;
  }
  std::string s = fmt::format(R"(<div class="cases-wrap"><table class="cases"><thead><tr><th>{}</th>)",
                              by_env ? "profile · environment" : "profile");
  for (const auto& k : cases)
    s += fmt::format(R"(<th class="case" title="{}"><span>{}</span></th>)", escape(case_titles[k]), escape(k));
  s += "</tr></thead><tbody>";
  for (const auto& row : rows) {
    s += "<tr><th>" + escape(row) + "</th>";
    for (const auto& k : cases) {
      const auto it = at.find({row, k});
      if (it == at.end()) {
        s += R"(<td class="none" title="not selected">·</td>)";
        continue;
      }
      const cell_result& r = *it->second;
      const verdict v = verdict_of(r);
      const std::string title = v == verdict::not_applicable
                                    ? r.case_title + " — " + status_label(r) + ": " + reason_not_run(r)
                                    : r.case_title + " — " + status_label(r);
      s += fmt::format(R"(<td><a class="chip {}" href="#{}" title="{}">{}{}</a></td>)", css(v), escape(anchor(r)),
                       escape(title), mark(v), r.attempt > 1 ? R"(<span class="retry">↻</span>)" : "");
    }
    s += "</tr>";
  }
  return s + "</tbody></table></div>";
}

// Nearest-rank percentile `q` (0..1] of `v` (sorted here); nullopt when empty.
std::optional<double> percentile(std::vector<double> v, double q) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::clamp<std::size_t>(rank, 1, v.size()) - 1];
}

// Per profile of the suite: what ran it, how many cells passed, the turn
// latency (input sent → its run finished) p50/p95 over every attempt's
// turns, and the tokens and cost of every attempt.
std::string profile_table(const std::vector<const cell_result*>& attempts,
                          const std::vector<const cell_result*>& finals) {
  struct row {
    std::string runtime, model;
    int passed = 0, applied = 0;
    std::vector<double> latencies;
    html::usage_sum usage;
  };
  std::vector<std::string> order;
  std::map<std::string, row> rows;
  for (const auto* r : attempts) {
    push_unique(order, r->profile_id);
    auto& x = rows[r->profile_id];
    x.runtime = r->runtime;
    x.model = r->model;
    x.usage.add(*r);
    for (const auto& t : r->turns)
      if (t.response_ms) x.latencies.push_back(*t.response_ms);
  }
  for (const auto* r : finals) {
    const verdict v = verdict_of(*r);
    if (v == verdict::not_applicable) continue;
    auto& x = rows[r->profile_id];
    ++x.applied;
    if (v == verdict::pass) ++x.passed;
  }
  std::string s =
      R"(<table class="profiles"><thead><tr><th>profile</th><th>runtime</th><th>model</th><th>passed</th>)"
      R"(<th>turns</th><th>turn p50</th><th>turn p95</th><th>input tokens</th><th>output tokens</th>)"
      R"(<th>cost</th></tr></thead><tbody>)";
  for (const auto& id : order) {
    const auto& x = rows[id];
    const auto status = x.usage.cost_status();
    s += fmt::format(
        R"(<tr><th>{}</th><td><code>{}</code></td><td>{}</td><td class="num {}">{} / {}</td><td class="num">{}</td>)"
        R"(<td class="num">{}</td><td class="num">{}</td><td class="num">{}</td><td class="num">{}</td>)"
        R"(<td class="num">{}</td></tr>)",
        escape(id), escape(x.runtime), escape(x.model), x.applied > 0 && x.passed == x.applied ? "pass" : "fail",
        x.passed, x.applied, x.latencies.size(), opt_ms(percentile(x.latencies, 0.50)),
        opt_ms(percentile(x.latencies, 0.95)), html::thousands(x.usage.input_tokens),
        html::thousands(x.usage.output_tokens),
        escape(html::cost(x.usage.cost_usd, status == "partial" ? "reported" : status)));
  }
  return s + "</tbody></table>";
}

std::string matcher_table(const cell_result& r) {
  if (r.matchers.empty()) return R"(<p class="muted">No matcher ran.</p>)";
  std::string s =
      "<table><thead><tr><th>kind</th><th>description</th><th>result</th><th>expected</th><th>actual</th>"
      "<th>why</th></tr></thead><tbody>";
  for (const auto& m : r.matchers)
    s += fmt::format(
        R"(<tr><td><code>{}</code></td><td>{}</td><td class="{}">{}</td><td><pre class="text">{}</pre></td>)"
        R"(<td><pre class="text">{}</pre></td><td>{}</td></tr>)",
        escape(m.kind), escape(m.description), m.passed ? "pass" : "fail", m.passed ? "✓ passed" : "✗ failed",
        escape(m.expected), escape(m.actual), escape(m.why));
  return s + "</tbody></table>";
}

// "3m 30s · 3 leases · $0.0156 est." (or "unpriced").
std::string lease_summary(const runtime_billing& b) {
  std::string s = html::duration(b.lease_duration_ms.value_or(0)) + " · " + std::to_string(b.lease_count) +
                  (b.lease_count == 1 ? " lease" : " leases") + " · ";
  if (b.estimated_cost_usd)
    s += escape(html::cost(b.estimated_cost_usd, "reported")) + " est. (" + escape(b.cost_source) +
         (b.price ? ", " + escape(b.price->date) : "") + ")";
  else
    s += escape(b.cost_status);
  return s;
}

std::string turn_table(const cell_result& r) {
  if (r.turns.empty()) return R"(<p class="muted">No turn was timed.</p>)";
  const bool leased = std::any_of(r.turns.begin(), r.turns.end(), [](const turn_timing& t) {
    return !t.lease_outcome.empty();
  });
  std::string s = "<table><thead><tr><th>turn</th><th>run</th><th>input</th>";
  if (leased) s += "<th>lease</th><th>lease time</th>";
  s += "<th>scheduler latency</th><th>run duration</th><th>response time</th></tr></thead><tbody>";
  int n = 0;
  for (const auto& t : r.turns) {
    s += fmt::format(R"(<tr><td class="num">{}</td><td><code>{}</code></td><td><code>{}</code></td>)", ++n,
                     escape(t.run_id), escape(t.input_id));
    if (leased)
      s += fmt::format(R"(<td data-test="lease-outcome">{}</td><td class="num">{}</td>)",
                       t.lease_outcome.empty() ? "—" : escape(t.lease_outcome), opt_ms(t.lease_duration_ms));
    s += fmt::format(R"(<td class="num">{}</td><td class="num">{}</td><td class="num">{}</td></tr>)",
                     opt_ms(t.scheduler_latency_ms), opt_ms(t.run_duration_ms), opt_ms(t.response_ms));
  }
  return s + "</tbody></table>";
}

std::string opt_tokens(const std::optional<std::int64_t>& n) { return n ? html::thousands(*n) : "—"; }

std::string usage_table(const cell_result& r) {
  if (r.usage.empty()) return R"(<p class="muted">No run reported.</p>)";
  std::string s =
      "<table><thead><tr><th>run</th><th>outcome</th><th>input</th><th>output</th><th>cached input</th>"
      "<th>cost</th></tr></thead><tbody>";
  for (const auto& u : r.usage)
    s += fmt::format(R"(<tr><td><code>{}</code></td><td>{}</td><td class="num">{}</td><td class="num">{}</td>)"
                     R"(<td class="num">{}</td><td class="num">{}</td></tr>)",
                     escape(u.run_id), escape(u.outcome), opt_tokens(u.input_tokens), opt_tokens(u.output_tokens),
                     opt_tokens(u.cached_input_tokens), escape(html::cost(u.cost_usd, u.cost_status)));
  return s + "</tbody></table>";
}

std::string fact(std::string_view name, const std::string& value_html) {
  return fmt::format("<dt>{}</dt><dd>{}</dd>", name, value_html.empty() ? "—" : value_html);
}

// Links to a cell's artifact files (server.log, model.log, transcript.json, …).
std::string artifact_links(const std::vector<std::string>& files) {
  std::string s;
  for (const auto& f : files) {
    const auto name = f.substr(f.rfind('/') + 1);
    s += fmt::format(R"({}<a class="file" href="{}">{}</a>)", s.empty() ? "" : " · ", html::url_path(f), escape(name));
  }
  return s;
}

std::string cell_details(const cell_result& r, bool final_attempt, const std::vector<std::string>& files) {
  const verdict v = verdict_of(r);
  const auto j = to_json(r);
  boost::json::object usage{{"usage", j.at("usage")}, {"billing", j.at("billing")}};
  std::string facts;
  facts += fact("profile", escape(r.profile_id));
  facts += fact("environment", escape(r.environment_id));
  facts += fact("runtime", escape(r.runtime));
  // An agent program has no provider of Tether's: it speaks its own wire protocol.
  facts += fact("provider · model",
                (r.provider.empty() ? R"(<span class="muted">the agent's own</span>)" : escape(r.provider)) + " · " +
                    escape(r.model));
  facts += fact("session", r.session_id.empty() ? "" : "<code>" + escape(r.session_id) + "</code>");
  facts += fact("nonce", "<code>" + escape(r.nonce) + "</code>");
  facts += fact("started", when(r.started_at_ms));
  facts += fact("duration", html::duration(r.duration_ms));
  facts +=
      fact("failure class", r.failure ? fmt::format(R"(<span class="fail">{}</span>)", to_string(*r.failure)) : "");
  facts += fact("error", r.error.empty() ? "" : fmt::format(R"(<span class="fail">{}</span>)", escape(r.error)));
  facts += fact("cleanup", (r.cleanup_passed ? "passed" : R"(<span class="fail">failed</span>)") +
                               (r.cleanup_details.empty() ? "" : " — " + escape(r.cleanup_details)));
  facts += fact("cost", escape(html::cost(r.llm.reported_cost_usd, r.llm.cost_status)));
  facts += fact("artifacts", artifact_links(files));
  if (v == verdict::not_applicable)
    facts += fact(r.status == cell_status::skipped ? "skipped" : "not applicable",
                  fmt::format(R"(<span class="na">{}</span>)", escape(reason_not_run(r))));
  if (r.runtime_cost.lease_duration_ms && v != verdict::not_applicable)
    facts += fact("environment lease", lease_summary(r.runtime_cost));
  std::string attempt = "attempt " + std::to_string(r.attempt);
  if (!final_attempt) attempt += ", retried";
  return fmt::format(
      R"(<details class="cell is-{}" id="{}"{}><summary><span class="pill {}" title="{}">{} {}</span> <code>{}</code>)"
      R"( <span class="title">{}</span><span class="muted"> · {} · {}</span></summary>)"
      R"(<div class="body"><dl class="facts">{}</dl><h4>Matchers</h4>{}<h4>Turns</h4>{})"
      R"(<h4>Usage</h4>{}<details class="raw"><summary>usage and billing JSON</summary><pre class="json">{}</pre>)"
      R"(</details></div></details>)",
      css(v), escape(anchor(r)),
      v != verdict::pass && v != verdict::not_applicable && final_attempt ? " open" : "", css(v),
      escape(reason_not_run(r)), mark(v), escape(status_label(r)), escape(r.cell), escape(r.case_title), attempt,
      html::duration(r.duration_ms), facts, matcher_table(r), turn_table(r), usage_table(r),
      escape(pretty_json(usage)));
}

std::string pct_label(double v) { return fmt::format("{:.0f}%", v); }
std::string tokens_label(double v) {
  if (v >= 1e6) return fmt::format("{:.1f}M", v / 1e6);
  if (v >= 1e3) return fmt::format("{:.1f}k", v / 1e3);
  return fmt::format("{:.0f}", v);
}
std::string seconds_label(double ms) { return html::duration(std::llround(ms)); }

// The filters of a selection that narrow it ("" or absent selects all), as
// one comparable key; without the suite filter for a suite's own trend (a
// suite's cells do not change with which other suites ran).
std::string selection_key(const std::map<std::string, std::string>& sel, bool with_suite) {
  std::string key;
  for (const auto& [k, v] : sel)
    if (!v.empty() && (with_suite || k != "suite")) key += k + "=" + v + ";";
  return key;
}

// What one trend chart set plots: a label and values per campaign.
struct trend_points {
  std::vector<std::string> labels;
  html::series pass{"pass rate", "#1a7f37", {}};
  html::series input{"input", "#0969da", {}}, cached{"cached", "#54aeff", {}}, output{"output", "#8250df", {}};
  html::series agent{"agent time", "#bc4c00", {}};

  void add(std::int64_t started_at_ms, const suite_tally& t, const usage_totals& u) {
    const std::string when = iso8601(started_at_ms);
    labels.push_back(when.substr(5, 5) + " " + when.substr(11, 5));
    pass.values.push_back(t.selected > 0 ? std::optional<double>(100.0 * t.passed / t.selected) : std::nullopt);
    const auto cached_tokens = std::min(u.cached_input_tokens, u.input_tokens);
    input.values.push_back(static_cast<double>(u.input_tokens - cached_tokens));
    cached.values.push_back(static_cast<double>(cached_tokens));
    output.values.push_back(static_cast<double>(u.output_tokens));
    agent.values.push_back(static_cast<double>(u.agent_time_ms));
  }
  [[nodiscard]] std::string charts() const {
    return R"(<div class="charts">)" + html::line_chart("Pass rate", labels, pass, 100, pct_label) +
           html::bar_chart("Tokens", labels, {input, cached, output}, tokens_label) +
           html::bar_chart("Agent time", labels, {agent}, seconds_label) + "</div>";
  }
};

// "3 of 5 stored campaigns with this selection, oldest to newest"
std::string trend_note(std::size_t shown, std::size_t stored, std::string_view what) {
  return fmt::format("{} of {} stored campaign{} {}, oldest to newest", shown, stored, stored == 1 ? "" : "s", what);
}

// The campaign's trends: the stored campaigns with exactly its selection.
std::string trends(const history& h, const campaign& shown) {
  const auto key = selection_key(shown.selection, true);
  trend_points p;
  std::size_t n = 0;
  for (const auto& e : h.campaigns) {
    if (selection_key(e.selection, true) != key || e.started_at_ms > shown.started_at_ms) continue;
    ++n;
    p.add(e.started_at_ms, e.totals,
          usage_totals{e.input_tokens, e.output_tokens, e.cached_input_tokens, e.cost_usd, e.agent_time_ms});
  }
  return fmt::format(R"(<section class="card"><div class="suite-head"><h2>Trends</h2><div class="meta">{}</div>)"
                     R"(</div>{}</section>)",
                     trend_note(n, h.campaigns.size(), "with this campaign's selection"), p.charts());
}

// One suite's trends: the stored campaigns that ran it with the same
// profile, environment and case filters.
std::string suite_trends(const history& h, const campaign& shown, const std::string& suite) {
  const auto key = selection_key(shown.selection, false);
  trend_points p;
  std::size_t n = 0;
  for (const auto& e : h.campaigns) {
    if (selection_key(e.selection, false) != key || e.started_at_ms > shown.started_at_ms) continue;
    const auto t = std::find_if(e.suites.begin(), e.suites.end(), [&](const suite_tally& x) { return x.suite_id == suite; });
    if (t == e.suites.end()) continue;
    ++n;
    const auto u = e.suite_usage.find(suite);
    p.add(e.started_at_ms, *t, u == e.suite_usage.end() ? usage_totals{} : u->second);
  }
  return fmt::format(R"(<h3>Trend</h3><div class="meta">{}</div>{})",
                     trend_note(n, h.campaigns.size(), "that ran this suite with the same filters"), p.charts());
}

// A suite's card: its tiles, grid, profiles, trend and cells. `attempts`
// index d.cells (the suite's, each cell's attempts together).
std::string suite_section(const report_data& d, const suite_tally& t, const std::vector<std::size_t>& attempts,
                          const std::map<std::string, std::size_t>& finals) {
  std::vector<const cell_result*> all, final_cells;
  html::usage_sum u;
  for (const auto i : attempts) {
    const cell_result& r = d.cells[i];
    u.add(r);
    all.push_back(&r);
    if (finals.at(r.cell) == i) final_cells.push_back(&r);
  }
  const cell_result* first = all.empty() ? nullptr : all.front();
  const std::string title = first && !first->suite_title.empty() ? first->suite_title : t.suite_id;
  const bool green = t.selected > 0 && t.passed == t.selected;
  const bool none_applied = t.selected == 0 && t.not_applicable > 0;
  std::string s = fmt::format(R"(<section class="card suite" id="suite-{}"><div class="suite-head"><div><h2>{}</h2>)"
                              R"(<div class="meta"><code>{}</code> · definition <code title="{}">{}</code></div></div>)"
                              R"(<div class="badge small {}">{}</div></div>)",
                              escape(t.suite_id), escape(title), escape(t.suite_id),
                              escape(first ? first->suite_definition_hash : ""),
                              escape(short_hash(first ? first->suite_definition_hash : "")),
                              none_applied ? "na"
                              : green      ? "green"
                                           : "red",
                              none_applied ? std::string("not applicable") : rate(t.passed, t.selected) + " passed");
  if (first && !first->suite_description.empty())
    s += R"(<p class="description">)" + escape(first->suite_description) + "</p>";
  s += R"(<div class="tiles small">)";
  s += tile("Cells",
            fmt::format(R"(<span class="pass">{}</span> / <span class="fail">{}</span> / )"
                        R"(<span class="incomplete">{}</span> / <span class="na">{}</span>)",
                        t.passed, t.failed, t.incomplete, t.not_applicable),
            "passed / failed / incomplete / not applicable" +
                (t.skipped > 0 ? fmt::format(" · {} skipped", t.skipped) : std::string()));
  s += tile("Retries", std::to_string(t.retries));
  s += usage_tiles(u);
  s += "</div>" + grid(final_cells);
  s += "<h3>Profiles</h3>" + profile_table(all, final_cells);
  s += suite_trends(d.hist, d.shown, t.suite_id);
  s += R"(<h3>Cells</h3><div class="cells">)";
  for (const auto i : attempts) s += cell_details(d.cells[i], finals.at(d.cells[i].cell) == i, d.artifacts[i]);
  return s + "</div></section>";
}

}  // namespace

std::string render_dashboard(const report_data& d) {
  const auto finals = final_attempts(d.cells);
  // Suites in the campaign's order, then any only the cells name.
  std::vector<suite_tally> suites = d.shown.suites;
  for (const auto& r : d.cells)
    if (std::none_of(suites.begin(), suites.end(), [&](const suite_tally& t) { return t.suite_id == r.suite_id; }))
      suites.push_back(suite_tally{.suite_id = r.suite_id});

  std::string page =
      "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">";
  page += "<title>Tether qualification · " + escape(d.shown.id) + "</title><style>";
  page += dashboard_css;
  page += "</style></head><body><main>";
  page += header(d);
  page += summary(d);
  page += trends(d.hist, d.shown);
  for (const auto& t : suites) {
    std::vector<std::size_t> attempts;
    for (std::size_t i = 0; i < d.cells.size(); ++i)
      if (d.cells[i].suite_id == t.suite_id) attempts.push_back(i);
    // Cells in the campaign's order, each cell's attempts together.
    std::map<std::string, std::size_t> first_seen;
    for (const auto i : attempts) first_seen.emplace(d.cells[i].cell, first_seen.size());
    std::stable_sort(attempts.begin(), attempts.end(), [&](std::size_t a, std::size_t b) {
      const auto &x = d.cells[a], &y = d.cells[b];
      if (x.cell != y.cell) return first_seen[x.cell] < first_seen[y.cell];
      return x.attempt < y.attempt;
    });
    page += suite_section(d, t, attempts, finals);
  }
  page += R"(<footer>Generated by <code>tether e2e report</code> from the records in this directory.</footer>)";
  page += "</main></body></html>\n";
  return page;
}

}  // namespace tether::e2e
