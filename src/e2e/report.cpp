#include "e2e/report.h"

#include <algorithm>
#include <cmath>
#include <fstream>
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

result<report_data> load_report_data(const fs::path& out) {
  auto hv = read_json_file(out / "history.json");
  if (!hv) return hv.error();
  auto h = history_from_json(*hv);
  if (!h) return make_error(e2e_errc::bad_record, (out / "history.json").string() + ": " + h.error().message);
  report_data d;
  d.hist = std::move(h).value();
  if (d.hist.latest.empty())
    return make_error(e2e_errc::not_found, (out / "history.json").string() + " lists no campaign");
  const auto entry = std::find_if(d.hist.campaigns.begin(), d.hist.campaigns.end(),
                                  [&](const history_entry& e) { return e.id == d.hist.latest; });
  if (entry == d.hist.campaigns.end())
    return make_error(e2e_errc::bad_record, "history.json: latest campaign " + d.hist.latest + " is not listed");
  const fs::path campaign_file = out / entry->path;
  auto cv = read_json_file(campaign_file);
  if (!cv) return cv.error();
  auto c = campaign_from_json(*cv);
  if (!c) return make_error(e2e_errc::bad_record, campaign_file.string() + ": " + c.error().message);
  d.latest = std::move(c).value();
  for (const auto& ref : d.latest.cells) {
    const fs::path file = campaign_file.parent_path() / ref.result;
    auto rv = read_json_file(file);
    if (!rv) return rv.error();
    auto r = cell_result_from_json(*rv);
    if (!r) return make_error(e2e_errc::bad_record, file.string() + ": " + r.error().message);
    d.latest_cells.push_back(std::move(r).value());
  }
  return d;
}

result<fs::path> write_report(const fs::path& out) {
  auto d = load_report_data(out);
  if (!d) return d.error();
  const std::string page = render_dashboard(*d);
  const fs::path file = out / "dashboard.html";
  const fs::path tmp = out / "dashboard.html.tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << page;
    f.close();
    if (!f) return make_error(e2e_errc::io, "cannot write " + tmp.string());
  }
  std::error_code ec;
  fs::rename(tmp, file, ec);
  if (ec) return make_error(e2e_errc::io, "cannot rename " + tmp.string() + ": " + ec.message());
  return file;
}

// ---------------------------------------------------------------- the page

namespace {

enum class verdict { pass, fail, incomplete, not_applicable };

verdict verdict_of(const cell_result& r) {
  if (r.status == cell_status::passed) return r.cleanup_passed ? verdict::pass : verdict::fail;
  if (r.status == cell_status::failed) return verdict::fail;
  if (r.status == cell_status::not_applicable) return verdict::not_applicable;
  return verdict::incomplete;
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
// " · 3 not applicable", or "" when every selected cell applied.
std::string not_applicable_note(const suite_tally& t) {
  return t.not_applicable > 0 ? fmt::format(" · {} not applicable", t.not_applicable) : "";
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
  s += tile("Agent time", html::duration(u.agent_time_ms), "sum of run durations");
  return s;
}

std::string header(const report_data& d) {
  const campaign& c = d.latest;
  const bool green = c.green();
  std::string sel;
  for (const auto& [k, v] : c.selection)
    if (!v.empty()) sel += fmt::format(" · {} <code>{}</code>", escape(k), escape(v));
  return fmt::format(
      R"(<header class="top"><div><div class="eyebrow">Tether qualification</div>)"
      R"(<h1>Campaign <code>{}</code></h1><div class="meta">{} · {} · source <code>{}</code> on <code>{}</code>{}</div>)"
      R"(<div class="meta">latest green campaign: {}</div></div>)"
      R"(<div class="badge {}">{}<span>{} of {} cells passed{}</span></div></header>)",
      escape(c.id), when(c.started_at_ms), html::duration(c.finished_at_ms - c.started_at_ms),
      escape(short_hash(c.source_sha)), escape(c.source_ref), sel,
      d.hist.latest_green.empty() ? "none yet" : "<code>" + escape(d.hist.latest_green) + "</code>",
      green ? "green" : "red", green ? "GREEN" : "RED", c.totals.passed, c.totals.selected,
      not_applicable_note(c.totals));
}

std::string summary(const report_data& d) {
  const suite_tally& t = d.latest.totals;
  html::usage_sum u;
  for (const auto& r : d.latest_cells) u.add(r);
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

std::string matrix(const std::vector<const cell_result*>& finals) {
  std::vector<std::string> profiles, envs;
  for (const auto* r : finals) {
    push_unique(profiles, r->profile_id);
    push_unique(envs, r->environment_id);
  }
  std::string s = R"(<table class="matrix"><thead><tr><th>profile \ environment</th>)";
  for (const auto& e : envs) s += "<th>" + escape(e) + "</th>";
  s += "</tr></thead><tbody>";
  for (const auto& p : profiles) {
    s += "<tr><th>" + escape(p) + "</th>";
    for (const auto& e : envs) {
      s += "<td>";
      for (const auto* r : finals) {
        if (r->profile_id != p || r->environment_id != e) continue;
        const verdict v = verdict_of(*r);
        const std::string title = v == verdict::not_applicable
                                      ? r->case_title + " — not applicable: " + r->not_applicable_reason
                                      : r->case_title;
        s += fmt::format(R"(<a class="chip {}" href="#{}" title="{}">{} {}{}</a>)", css(v),
                         escape(r->cell + ".attempt-" + std::to_string(r->attempt)), escape(title), mark(v),
                         escape(r->case_id), r->attempt > 1 ? R"( <span class="retry">↻</span>)" : "");
      }
      s += "</td>";
    }
    s += "</tr>";
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

std::string turn_table(const cell_result& r) {
  if (r.turns.empty()) return R"(<p class="muted">No turn was timed.</p>)";
  std::string s =
      "<table><thead><tr><th>run</th><th>input</th><th>scheduler latency</th><th>run duration</th>"
      "<th>response time</th></tr></thead><tbody>";
  for (const auto& t : r.turns)
    s += fmt::format(R"(<tr><td><code>{}</code></td><td><code>{}</code></td><td class="num">{}</td>)"
                     R"(<td class="num">{}</td><td class="num">{}</td></tr>)",
                     escape(t.run_id), escape(t.input_id), opt_ms(t.scheduler_latency_ms), opt_ms(t.run_duration_ms),
                     opt_ms(t.response_ms));
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

std::string cell_details(const cell_result& r, bool final_attempt) {
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
  facts += fact("artifacts", r.artifacts.empty() ? "" : "<code>" + escape(r.artifacts) + "</code>");
  if (v == verdict::not_applicable)
    facts += fact("not applicable", fmt::format(R"(<span class="na">{}</span>)", escape(r.not_applicable_reason)));
  std::string attempt = "attempt " + std::to_string(r.attempt);
  if (!final_attempt) attempt += ", retried";
  return fmt::format(
      R"(<details class="cell is-{}" id="{}"{}><summary><span class="pill {}" title="{}">{} {}</span> <code>{}</code>)"
      R"( <span class="title">{}</span><span class="muted"> · {} · {}</span></summary>)"
      R"(<div class="body"><dl class="facts">{}</dl><h4>Matchers</h4>{}<h4>Turns</h4>{})"
      R"(<h4>Usage</h4>{}<details class="raw"><summary>usage and billing JSON</summary><pre class="json">{}</pre>)"
      R"(</details></div></details>)",
      css(v), escape(r.cell + ".attempt-" + std::to_string(r.attempt)),
      v != verdict::pass && v != verdict::not_applicable && final_attempt ? " open" : "", css(v),
      escape(r.not_applicable_reason), mark(v), escape(status_label(r)), escape(r.cell), escape(r.case_title), attempt,
      html::duration(r.duration_ms), facts, matcher_table(r), turn_table(r), usage_table(r),
      escape(pretty_json(usage)));
}

std::string suite_section(const suite_tally& t, const std::vector<const cell_result*>& attempts,
                          const std::map<std::string, std::size_t>& finals, const std::vector<cell_result>& all) {
  std::vector<const cell_result*> final_cells;
  html::usage_sum u;
  for (const auto* r : attempts) {
    u.add(*r);
    if (&all[finals.at(r->cell)] == r) final_cells.push_back(r);
  }
  const cell_result* first = attempts.empty() ? nullptr : attempts.front();
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
            "passed / failed / incomplete / not applicable");
  s += tile("Retries", std::to_string(t.retries));
  s += usage_tiles(u);
  s += "</div>" + matrix(final_cells);
  s += R"(<h3>Cells</h3><div class="cells">)";
  for (const auto* r : attempts) s += cell_details(*r, &all[finals.at(r->cell)] == r);
  return s + "</div></section>";
}

std::string pct_label(double v) { return fmt::format("{:.0f}%", v); }
std::string tokens_label(double v) {
  if (v >= 1e6) return fmt::format("{:.1f}M", v / 1e6);
  if (v >= 1e3) return fmt::format("{:.1f}k", v / 1e3);
  return fmt::format("{:.0f}", v);
}
std::string seconds_label(double ms) { return html::duration(std::llround(ms)); }

std::string trends(const history& h) {
  std::vector<std::string> labels;
  html::series pass{"pass rate", "#1a7f37", {}};
  html::series input{"input", "#0969da", {}}, cached{"cached", "#54aeff", {}}, output{"output", "#8250df", {}};
  html::series agent{"agent time", "#bc4c00", {}};
  for (const auto& e : h.campaigns) {
    const std::string t = iso8601(e.started_at_ms);
    labels.push_back(t.substr(5, 5) + " " + t.substr(11, 5));
    pass.values.push_back(e.totals.selected > 0 ? std::optional<double>(100.0 * e.totals.passed / e.totals.selected)
                                                : std::nullopt);
    const auto cached_tokens = std::min(e.cached_input_tokens, e.input_tokens);
    input.values.push_back(static_cast<double>(e.input_tokens - cached_tokens));
    cached.values.push_back(static_cast<double>(cached_tokens));
    output.values.push_back(static_cast<double>(e.output_tokens));
    agent.values.push_back(static_cast<double>(e.agent_time_ms));
  }
  std::string s = fmt::format(
      R"(<section class="card"><div class="suite-head"><h2>Trends</h2><div class="meta">{} stored campaign{}, )"
      R"(oldest to newest</div></div><div class="charts">)",
      h.campaigns.size(), h.campaigns.size() == 1 ? "" : "s");
  s += html::line_chart("Pass rate", labels, pass, 100, pct_label);
  s += html::bar_chart("Tokens", labels, {input, cached, output}, tokens_label);
  s += html::bar_chart("Agent time", labels, {agent}, seconds_label);
  return s + "</div></section>";
}

}  // namespace

std::string render_dashboard(const report_data& d) {
  const auto finals = final_attempts(d.latest_cells);
  // Suites in the campaign's order, then any only the cells name.
  std::vector<suite_tally> suites = d.latest.suites;
  for (const auto& r : d.latest_cells)
    if (std::none_of(suites.begin(), suites.end(), [&](const suite_tally& t) { return t.suite_id == r.suite_id; }))
      suites.push_back(suite_tally{.suite_id = r.suite_id});

  std::string page =
      "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">";
  page += "<title>Tether qualification · " + escape(d.latest.id) + "</title><style>";
  page += dashboard_css;
  page += "</style></head><body><main>";
  page += header(d);
  page += summary(d);
  page += trends(d.hist);
  for (const auto& t : suites) {
    std::vector<const cell_result*> attempts;
    for (const auto& r : d.latest_cells)
      if (r.suite_id == t.suite_id) attempts.push_back(&r);
    // Cells in the order the campaign ran them, each cell's attempts together.
    std::map<std::string, std::size_t> first_seen;
    for (const auto* r : attempts) first_seen.emplace(r->cell, first_seen.size());
    std::stable_sort(attempts.begin(), attempts.end(), [&](const cell_result* a, const cell_result* b) {
      if (a->cell != b->cell) return first_seen[a->cell] < first_seen[b->cell];
      return a->attempt < b->attempt;
    });
    page += suite_section(t, attempts, finals, d.latest_cells);
  }
  page += R"(<footer>Generated by <code>tether e2e report</code> from the records in this directory.</footer>)";
  page += "</main></body></html>\n";
  return page;
}

}  // namespace tether::e2e
