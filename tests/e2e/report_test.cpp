#include "e2e/report.h"

#include <unistd.h>

#include <array>
#include <cstdlib>
#include <fstream>
#include <random>

#include <gtest/gtest.h>

#include "e2e/scratch_dir.h"

namespace tether::e2e {
namespace {

namespace fs = std::filesystem;

using test::scratch_dir;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

constexpr std::int64_t t0 = 1'796'029'262'345;  // 2026-11-30T09:01:02.345Z
constexpr std::int64_t day = 86'400'000;

struct cell_spec {
  std::string suite, profile, kase;
  cell_status status = cell_status::passed;
  int attempt = 1;
  bool priced = true;
};

cell_result make_cell(const std::string& campaign_id, const cell_spec& s, std::int64_t start) {
  cell_result r;
  r.suite_id = s.suite;
  r.suite_title = s.suite == "chat-basics" ? "Chat basics" : "Workspace files";
  r.suite_description = s.suite == "chat-basics"
                            ? "A message reaches the model and its answer comes back, steered and queued."
                            : "The agent writes and reads files in the cell's workspace.";
  r.suite_definition_hash = s.suite == "chat-basics"
                                ? "9c1f0e7d5b3a29184c6e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e"
                                : "5e2d8a0b7c6f41938d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c";
  r.source_sha = "3f9e2c1a7b8d4e6f0a1b2c3d4e5f60718293a4b5";
  r.source_ref = "main";
  r.attempt = s.attempt;
  r.status = s.status;
  r.profile_id = s.profile;
  r.environment_id = "local";
  r.case_id = s.kase;
  r.case_title = "Case " + s.kase;
  r.cell = s.suite + "." + s.profile + ".local." + s.kase;
  r.execution_id = campaign_id + "/" + r.cell + "/" + std::to_string(s.attempt);
  const bool agent = s.profile == "codex-exec";
  r.runtime = agent ? "codex-exec" : "native";
  r.provider = agent ? "" : s.profile.find("anthropic") != std::string::npos ? "anthropic" : "openai-chat";
  r.model = "scripted";
  r.session_id = "ses_" + s.kase;
  r.run_ids = {"run_" + s.kase + "_1", "run_" + s.kase + "_2"};
  r.nonce = "a1b2c3d4e5f6-" + std::to_string(s.attempt);
  r.started_at_ms = start;
  r.duration_ms = 2'500 + static_cast<std::int64_t>(s.kase.size()) * 300;
  r.finished_at_ms = start + r.duration_ms;
  r.turns = {{r.run_ids[0], "in_1", 14.0, 900.0, 930.0}, {r.run_ids[1], "in_2", 9.5, 1'150.0, 1'171.0}};
  const std::optional<double> c1 = s.priced ? std::optional<double>(0.0021) : std::nullopt;
  const std::optional<double> c2 = s.priced ? std::optional<double>(0.0034) : std::nullopt;
  r.usage = {{r.run_ids[0], "succeeded", 1'200, 180, 400, c1, s.priced ? "reported" : "unpriced"},
             {r.run_ids[1], "succeeded", 1'650, 240, 800, c2, s.priced ? "reported" : "unpriced"}};
  if (s.status == cell_status::not_applicable) {
    r.not_applicable_reason = "a steer reaches <codex> only at its next turn";
    r.session_id.clear();
    r.run_ids.clear();
    r.turns.clear();
    r.usage.clear();
    r.artifacts.clear();
    r.duration_ms = 0;
    r.finished_at_ms = start;
    compute_billing(r);
    return r;
  }
  const bool passed = s.status == cell_status::passed;
  r.matchers = {{"message_exact", "message_exact \"MARK-a1b2c3d4e5f6\"", passed, "MARK-a1b2c3d4e5f6",
                 passed ? "MARK-a1b2c3d4e5f6" : "<script>alert('x')</script> MARK-wrong",
                 passed ? "" : "the last assistant message differs"},
                {"run_count", "run_count 2", true, "2", "2", ""}};
  if (s.status == cell_status::failed) r.failure = failure_class::candidate_failure;
  if (s.status == cell_status::error) {
    r.failure = failure_class::transient_infrastructure;
    r.error = "mock-llm did not listen within 10 s";
  }
  r.artifacts = r.cell + ".attempt-" + std::to_string(s.attempt);
  compute_billing(r);
  return r;
}

// Writes a campaign's cell records and campaign.json under OUT and records it.
void write_campaign(const fs::path& out, const std::string& id, std::int64_t start,
                    const std::vector<cell_spec>& specs) {
  std::vector<cell_result> results;
  std::int64_t t = start;
  for (const auto& s : specs) {
    results.push_back(make_cell(id, s, t));
    t += 3'000;
  }
  campaign c = summarize(id, results);
  c.selection = {{"suite", ""}, {"profile", ""}, {"environment", ""}, {"case", ""}};
  const fs::path dir = out / "campaigns" / id;
  for (const auto& r : results)
    ASSERT_TRUE(
        write_json_file(dir / "cells" / (r.cell + ".attempt-" + std::to_string(r.attempt) + ".json"), to_json(r)));
  ASSERT_TRUE(write_json_file(dir / "campaign.json", to_json(c)));
  auto h = record_campaign(out, c, results);
  ASSERT_TRUE(h) << h.error().describe();
}

// Two campaigns: yesterday's all green and unpriced, today's with a failure,
// a retried cell, an error, and an agent-program cell whose case does not
// apply to it.
void write_two_campaigns(const fs::path& out) {
  write_campaign(out, "20261129T090102Z-0a1b", t0 - day,
                 {{"chat-basics", "openai-chat-mock", "hello", cell_status::passed, 1, false},
                  {"chat-basics", "openai-chat-mock", "steer", cell_status::passed, 1, false},
                  {"chat-basics", "anthropic-mock", "hello", cell_status::passed, 1, false},
                  {"workspace-files", "openai-chat-mock", "write-file", cell_status::passed, 1, false}});
  write_campaign(out, "20261130T090102Z-ab12", t0,
                 {{"chat-basics", "openai-chat-mock", "hello"},
                  {"chat-basics", "openai-chat-mock", "steer"},
                  {"chat-basics", "openai-chat-mock", "queue", cell_status::failed},
                  {"chat-basics", "anthropic-mock", "hello", cell_status::error, 1},
                  {"chat-basics", "anthropic-mock", "hello", cell_status::passed, 2},
                  {"chat-basics", "anthropic-mock", "steer"},
                  {"chat-basics", "anthropic-mock", "queue"},
                  {"workspace-files", "openai-chat-mock", "write-file", cell_status::passed, 1, false},
                  {"workspace-files", "openai-chat-mock", "read-file", cell_status::skipped, 1, false},
                  {"chat-basics", "codex-exec", "hello"},
                  {"chat-basics", "codex-exec", "steer", cell_status::not_applicable}});
}

TEST(Report, LoadsTheLatestCampaignAndEveryAttempt) {
  scratch_dir out;
  write_two_campaigns(out.path());
  auto d = load_report_data(out.path());
  ASSERT_TRUE(d) << d.error().describe();
  EXPECT_EQ(d->hist.campaigns.size(), 2u);
  EXPECT_EQ(d->shown.id, "20261130T090102Z-ab12");
  EXPECT_EQ(d->cells.size(), 11u);
  EXPECT_EQ(d->hist.latest_green, "20261129T090102Z-0a1b");
}

TEST(Report, TheDashboardShowsEverySuiteProfileCaseAndMatcher) {
  scratch_dir out;
  write_two_campaigns(out.path());
  auto d = load_report_data(out.path());
  ASSERT_TRUE(d) << d.error().describe();
  const std::string page = render_dashboard(*d);
  for (const char* s : {"chat-basics",
                        "workspace-files",
                        "Chat basics",
                        "Workspace files",
                        "openai-chat-mock",
                        "anthropic-mock",
                        "hello",
                        "steer",
                        "queue",
                        "write-file",
                        "read-file",
                        "20261130T090102Z-ab12",
                        "3f9e2c1a7b8d",
                        "9c1f0e7d5b3a",
                        "MARK-a1b2c3d4e5f6",
                        "the last assistant message differs",
                        "mock-llm did not listen within 10 s",
                        "transient_infrastructure",
                        "<details",
                        "<svg",
                        "Trends",
                        "RED"})
    EXPECT_NE(page.find(s), std::string::npos) << s;
}

TEST(Report, AMissingCostReadsUnavailableOrUnpricedNeverZero) {
  scratch_dir out;
  write_campaign(out.path(), "c1", t0,
                 {{"workspace-files", "openai-chat-mock", "write-file", cell_status::passed, 1, false}});
  auto d = load_report_data(out.path());
  ASSERT_TRUE(d) << d.error().describe();
  // Tokens without a cost: unpriced.
  std::string page = render_dashboard(*d);
  EXPECT_NE(page.find("unpriced"), std::string::npos);
  EXPECT_EQ(page.find("$0.0000"), std::string::npos);
  // No usage at all: unavailable.
  for (auto& r : d->cells) {
    for (auto& u : r.usage) u.input_tokens = u.output_tokens = u.cached_input_tokens = std::nullopt;
    compute_billing(r);
  }
  page = render_dashboard(*d);
  EXPECT_NE(page.find("unavailable"), std::string::npos);
  EXPECT_EQ(page.find("$0"), std::string::npos);
  EXPECT_NE(page.find("GREEN"), std::string::npos);
}

TEST(Report, RecordTextIsEscapedAndThePageNeedsNoNetwork) {
  scratch_dir out;
  write_two_campaigns(out.path());
  auto d = load_report_data(out.path());
  ASSERT_TRUE(d) << d.error().describe();
  d->cells[0].case_title = "\"quoted\" & <b>bold</b>";
  const std::string page = render_dashboard(*d);
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_NE(page.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(page.find("<b>bold</b>"), std::string::npos);
  EXPECT_NE(page.find("&quot;quoted&quot; &amp; &lt;b&gt;bold&lt;/b&gt;"), std::string::npos);
  EXPECT_EQ(page.find("http://"), std::string::npos);
  EXPECT_EQ(page.find("https://"), std::string::npos);
  EXPECT_EQ(page.find("src="), std::string::npos);
  EXPECT_EQ(page.find("@import"), std::string::npos);
  EXPECT_EQ(page.find("url("), std::string::npos);
}

TEST(Report, ANotApplicableCellIsItsOwnGreyStateWithItsReason) {
  scratch_dir out;
  write_campaign(out.path(), "c1", t0,
                 {{"chat-basics", "openai-chat-mock", "hello"},
                  {"chat-basics", "openai-chat-mock", "steer"},
                  {"chat-basics", "codex-exec", "hello"},
                  {"chat-basics", "codex-exec", "steer", cell_status::not_applicable}});
  auto d = load_report_data(out.path());
  ASSERT_TRUE(d) << d.error().describe();
  const std::string page = render_dashboard(*d);
  // The campaign is green: the cell that does not apply does not count.
  EXPECT_NE(page.find("GREEN"), std::string::npos);
  EXPECT_NE(page.find("3 of 3 cells passed · 1 not applicable"), std::string::npos);
  EXPECT_NE(page.find("100%"), std::string::npos);
  // The chip: grey, its own mark, the reason in its title (escaped).
  const std::string chip =
      R"(<td><a class="chip na" href="#chat-basics.codex-exec.local.steer.attempt-1" )"
      R"(title="Case steer — not applicable: a steer reaches &lt;codex&gt; only at its next turn">–</a></td>)";
  EXPECT_NE(page.find(chip), std::string::npos) << page.substr(page.find("chip na"), 300);
  // The cell: a grey pill saying so, closed, and the reason among its facts.
  EXPECT_NE(page.find(R"(<details class="cell is-na" id="chat-basics.codex-exec.local.steer.attempt-1"><summary>)"),
            std::string::npos);
  EXPECT_NE(page.find(">– not applicable</span>"), std::string::npos);
  EXPECT_NE(
      page.find(R"(<dt>not applicable</dt><dd><span class="na">a steer reaches &lt;codex&gt; only at its next turn)"),
      std::string::npos);
  // An agent cell has no provider of Tether's.
  EXPECT_NE(page.find("the agent's own"), std::string::npos);
  // Neither passed, failed nor incomplete: the suite counts it in its own column.
  EXPECT_NE(page.find(R"(<span class="pass">3</span> / <span class="fail">0</span> / )"
                      R"(<span class="incomplete">0</span> / <span class="na">1</span>)"),
            std::string::npos);
  EXPECT_EQ(page.find("chip fail"), std::string::npos);
  EXPECT_EQ(page.find("chip incomplete"), std::string::npos);
}

TEST(Report, ASuiteWhoseCellsAllDoNotApplySaysSoInsteadOfRed) {
  scratch_dir out;
  write_campaign(out.path(), "c1", t0,
                 {{"chat-basics", "openai-chat-mock", "hello"},
                  {"workspace-files", "codex-exec", "write-file", cell_status::not_applicable}});
  auto d = load_report_data(out.path());
  ASSERT_TRUE(d) << d.error().describe();
  const std::string page = render_dashboard(*d);
  EXPECT_NE(page.find(R"(<div class="badge small na">not applicable</div>)"), std::string::npos);
  EXPECT_NE(page.find("GREEN"), std::string::npos);
}

TEST(Report, TrendsReadWithASingleCampaign) {
  scratch_dir out;
  write_campaign(out.path(), "only", t0, {{"chat-basics", "openai-chat-mock", "hello"}});
  auto d = load_report_data(out.path());
  ASSERT_TRUE(d) << d.error().describe();
  const std::string page = render_dashboard(*d);
  EXPECT_NE(page.find("1 of 1 stored campaign with this campaign's selection"), std::string::npos) << page;
  EXPECT_NE(page.find("<polyline"), std::string::npos);
  EXPECT_NE(page.find("<circle"), std::string::npos);
  EXPECT_NE(page.find("100%"), std::string::npos);
}

// The substring of `page` from `from` to the next `to` (after it), or "".
std::string between(const std::string& page, std::string_view from, std::string_view to) {
  const auto a = page.find(from);
  if (a == std::string::npos) return "";
  const auto b = page.find(to, a + from.size());
  return b == std::string::npos ? "" : page.substr(a, b - a);
}

std::size_t count(const std::string& text, std::string_view what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// A suite is a profile × case grid: a column per case in the campaign's
// order, a row per profile, one square per (profile, case), an empty one for
// a cell that was not selected.
TEST(Report, ASuiteIsAProfileByCaseGridInTheCampaignsOrder) {
  scratch_dir out;
  write_two_campaigns(out.path());
  auto d = load_report_data(out.path());
  ASSERT_TRUE(d) << d.error().describe();
  const std::string page = render_dashboard(*d);
  const std::string grid = between(page, R"(<table class="cases">)", "</table>");
  ASSERT_FALSE(grid.empty());
  EXPECT_NE(grid.find(R"(<th class="case" title="Case hello"><span>hello</span></th>)"
                      R"(<th class="case" title="Case steer"><span>steer</span></th>)"
                      R"(<th class="case" title="Case queue"><span>queue</span></th>)"),
            std::string::npos)
      << grid;
  // Rows in the campaign's order, a square per case: codex-exec ran no queue case.
  const auto openai = grid.find("<tr><th>openai-chat-mock</th>");
  const auto anthropic = grid.find("<tr><th>anthropic-mock</th>");
  const auto codex = grid.find("<tr><th>codex-exec</th>");
  ASSERT_NE(openai, std::string::npos);
  EXPECT_LT(openai, anthropic);
  EXPECT_LT(anthropic, codex);
  const std::string codex_row = grid.substr(codex, grid.find("</tr>", codex) - codex);
  EXPECT_EQ(count(codex_row, "<td"), 3u) << codex_row;
  EXPECT_EQ(count(codex_row, R"(<td class="none" title="not selected">)"), 1u) << codex_row;
  // The retried cell's square says so and links to its final attempt.
  EXPECT_NE(grid.find(R"(href="#chat-basics.anthropic-mock.local.hello.attempt-2")"), std::string::npos);
  EXPECT_NE(grid.find(R"(<span class="retry">↻</span>)"), std::string::npos);
  // The same records render the same page: nothing depends on map order or time.
  EXPECT_EQ(render_dashboard(*d), page);
}

// Per profile: passed cells, turns, latency p50/p95 (nearest rank over every
// attempt's turns), tokens and cost.
TEST(Report, EachProfileShowsItsTurnLatencyTokensAndCost) {
  scratch_dir out;
  write_campaign(out.path(), "c1", t0,
                 {{"chat-basics", "openai-chat-mock", "hello"},
                  {"chat-basics", "openai-chat-mock", "steer"},
                  {"chat-basics", "openai-chat-mock", "queue", cell_status::failed}});
  auto d = load_report_data(out.path());
  ASSERT_TRUE(d) << d.error().describe();
  d->cells[2].turns[1].response_ms = 9'000.0;  // one slow turn: the p95, not the p50
  const std::string page = render_dashboard(*d);
  const std::string row = between(page, "<tr><th>openai-chat-mock</th><td><code>native</code>", "</tr>");
  ASSERT_FALSE(row.empty()) << page;
  // 6 turns: 930, 930, 930, 1171, 1171, 9000 ms. p50 = the 3rd, p95 = the 6th.
  EXPECT_NE(row.find(R"(<td class="num fail">2 / 3</td><td class="num">6</td><td class="num">930 ms</td>)"
                     R"(<td class="num">9.0 s</td>)"),
            std::string::npos)
      << row;
  EXPECT_NE(row.find("8,550"), std::string::npos) << row;  // input tokens: 3 × (1,200 + 1,650)
  EXPECT_NE(row.find("$0.0165"), std::string::npos) << row;  // 3 × (0.0021 + 0.0034)
}

// Trends compare like with like: a campaign of another selection (here a
// profile filter) is not a point of this one's trend, and a suite's trend
// counts the campaigns that ran it with the same filters, whatever other
// suites ran with it.
TEST(Report, TrendsOnlyCompareCampaignsOfTheSameSelection) {
  scratch_dir out;
  write_campaign(out.path(), "c1", t0 - 2 * day, {{"chat-basics", "openai-chat-mock", "hello"},
                                                  {"workspace-files", "openai-chat-mock", "write-file"}});
  write_campaign(out.path(), "c2", t0 - day, {{"chat-basics", "openai-chat-mock", "hello"}});
  write_campaign(out.path(), "c3", t0, {{"chat-basics", "openai-chat-mock", "hello"},
                                        {"workspace-files", "openai-chat-mock", "write-file"}});
  // c2 selected one profile: rewrite its history entry's selection.
  auto hv = read_json_file(out.path() / "history.json");
  ASSERT_TRUE(hv);
  hv->at("campaigns").at(1).as_object()["selection"] = boost::json::object{{"profile", "openai-chat-mock"}};
  ASSERT_TRUE(write_json_file(out.path() / "history.json", *hv));
  auto d = load_report_data(out.path());
  ASSERT_TRUE(d) << d.error().describe();
  const std::string page = render_dashboard(*d);
  EXPECT_NE(page.find("2 of 3 stored campaigns with this campaign's selection"), std::string::npos) << page;
  EXPECT_EQ(count(page, "2 of 3 stored campaigns that ran this suite with the same filters"), 2u);
  // Seen from c2, only c2 shares its selection.
  auto old = load_report_data(out.path(), "c2");
  ASSERT_TRUE(old) << old.error().describe();
  EXPECT_NE(render_dashboard(*old).find("1 of 3 stored campaigns with this campaign's selection"), std::string::npos);
}

// Each cell links to its artifacts, by paths relative to the page.
TEST(Report, EachCellLinksToItsLogsAndTranscript) {
  scratch_dir out;
  write_campaign(out.path(), "c1", t0, {{"chat-basics", "openai-chat-mock", "hello"}});
  const fs::path art = out.path() / "campaigns/c1/cells/chat-basics.openai-chat-mock.local.hello.attempt-1";
  fs::create_directories(art);
  for (const char* f : {"server.log", "model.log", "transcript.json"}) std::ofstream(art / f) << "x";
  auto d = load_report_data(out.path());
  ASSERT_TRUE(d) << d.error().describe();
  const std::string page = render_dashboard(*d);
  const std::string base = "campaigns/c1/cells/chat-basics.openai-chat-mock.local.hello.attempt-1/";
  for (const char* f : {"server.log", "model.log", "transcript.json"})
    EXPECT_NE(page.find(R"(<a class="file" href=")" + base + f + R"(">)" + f + "</a>"), std::string::npos) << f;
}

// The header names the binary that ran and says when the suites were not in
// a git checkout (instead of "unknown on unknown").
TEST(Report, TheHeaderNamesTheBinaryAndTheSuitesSource) {
  scratch_dir out;
  write_campaign(out.path(), "c1", t0, {{"chat-basics", "openai-chat-mock", "hello"}});
  auto d = load_report_data(out.path());
  ASSERT_TRUE(d) << d.error().describe();
  d->shown.binary_path = "/usr/bin/tether";
  d->shown.binary_version = "tether 0.1.0 (revision 1a2b3c4d5e6f)";
  std::string page = render_dashboard(*d);
  EXPECT_NE(page.find(R"(binary <code title="/usr/bin/tether">tether 0.1.0 (revision 1a2b3c4d5e6f)</code>)"),
            std::string::npos);
  EXPECT_NE(page.find("suites at <code"), std::string::npos);
  d->shown.source_sha.clear();
  d->shown.source_ref.clear();
  page = render_dashboard(*d);
  EXPECT_NE(page.find("suites not in a git checkout"), std::string::npos);
  EXPECT_EQ(page.find("unknown on unknown"), std::string::npos);
}

// `e2e report --campaign ID`: any stored campaign's page, linked to the
// latest; the latest's page links to the latest green one, whose page is
// written with it.
TEST(Report, AnyCampaignHasItsPageAndTheLatestGreenIsLinked) {
  scratch_dir out;
  write_two_campaigns(out.path());  // yesterday's green, today's red
  const std::string green = "20261129T090102Z-0a1b";
  auto latest = write_report(out.path());
  ASSERT_TRUE(latest) << latest.error().describe();
  const std::string page = read_file(*latest);
  EXPECT_NE(page.find(R"(latest green campaign: <a class="link" href="dashboard-)" + green + R"(.html">)"),
            std::string::npos);
  ASSERT_TRUE(fs::exists(out.path() / ("dashboard-" + green + ".html")));
  const std::string old = read_file(out.path() / ("dashboard-" + green + ".html"));
  EXPECT_NE(old.find("Campaign <code>" + green + "</code>"), std::string::npos);
  EXPECT_NE(old.find("latest green campaign: this one"), std::string::npos);
  EXPECT_NE(old.find(R"(latest campaign: <a class="link" href="dashboard.html">)"), std::string::npos);

  auto shown = write_report(out.path(), green);
  ASSERT_TRUE(shown) << shown.error().describe();
  EXPECT_EQ(*shown, out.path() / ("dashboard-" + green + ".html"));
  auto missing = write_report(out.path(), "20200101T000000Z-dead");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error(), e2e_errc::not_found);
  EXPECT_NE(missing.error().message.find("20200101T000000Z-dead"), std::string::npos);
}

TEST(Report, WriteReportWritesTheDashboardIntoOut) {
  scratch_dir out;
  write_two_campaigns(out.path());
  auto file = write_report(out.path());
  ASSERT_TRUE(file) << file.error().describe();
  EXPECT_EQ(*file, out.path() / "dashboard.html");
  const std::string page = read_file(*file);
  EXPECT_EQ(page.rfind("<!doctype html>", 0), 0u);
  EXPECT_NE(page.find("20261130T090102Z-ab12"), std::string::npos);
  EXPECT_NE(page.find("</html>"), std::string::npos);
  EXPECT_FALSE(fs::exists(out.path() / "dashboard.html.tmp"));
}

TEST(Report, MissingHistoryOrCampaignIsNotFound) {
  scratch_dir out;
  EXPECT_EQ(write_report(out.path()).error(), e2e_errc::not_found);
  write_campaign(out.path(), "c1", t0, {{"chat-basics", "openai-chat-mock", "hello"}});
  fs::remove(out.path() / "campaigns" / "c1" / "campaign.json");
  EXPECT_EQ(load_report_data(out.path()).error(), e2e_errc::not_found);
}

TEST(Report, ACorruptCellRecordIsABadRecordNamingTheFile) {
  scratch_dir out;
  write_campaign(out.path(), "c1", t0, {{"chat-basics", "openai-chat-mock", "hello"}});
  const fs::path cell = out.path() / "campaigns/c1/cells/chat-basics.openai-chat-mock.local.hello.attempt-1.json";
  std::ofstream(cell) << R"({"schema": "something else"})";
  auto d = load_report_data(out.path());
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error(), e2e_errc::bad_record);
  EXPECT_NE(d.error().message.find("attempt-1.json"), std::string::npos) << d.error().message;
}

// ---------------------------------------------------------------- screenshot

// Where the screenshot test leaves its page and picture for a person to look
// at: $TETHER_TEST_OUTPUT_DIR, else the test's working directory.
fs::path test_output_dir() {
  const char* env = std::getenv("TETHER_TEST_OUTPUT_DIR");
  return fs::path(env && *env ? env : fs::current_path()) / "qualification-dashboard";
}

std::uint32_t be32(const std::string& s, std::size_t at) {
  return (static_cast<std::uint32_t>(static_cast<unsigned char>(s[at])) << 24) |
         (static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + 1])) << 16) |
         (static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + 2])) << 8) |
         static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + 3]));
}

TEST(Report, TheDashboardScreenshotIsAReadablePng) {
  scratch_dir out;
  write_two_campaigns(out.path());
  auto html = write_report(out.path());
  ASSERT_TRUE(html) << html.error().describe();
  const fs::path png = out.path() / "dashboard.png";
  auto shot = screenshot(*html, png);
  // `make test` installs Chromium, so its absence is a failure, not a skip.
  ASSERT_TRUE(shot) << "screenshot failed: " << shot.error().describe();

  const std::string bytes = read_file(png);
  ASSERT_GT(bytes.size(), 20u * 1024) << "a dashboard screenshot should not be this small";
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(bytes.substr(12, 4), "IHDR");
  EXPECT_EQ(be32(bytes, 16), 1400u);  // the window's width
  EXPECT_GT(be32(bytes, 20), 1000u);  // as tall as the page

  std::error_code ec;
  const fs::path keep = test_output_dir();
  fs::create_directories(keep, ec);
  fs::copy_file(png, keep / "dashboard.png", fs::copy_options::overwrite_existing, ec);
  fs::copy_file(*html, keep / "dashboard.html", fs::copy_options::overwrite_existing, ec);
}

// The screenshot is as tall as the page: nothing cut off, no empty band.
TEST(Report, TheScreenshotIsAsTallAsThePage) {
  scratch_dir out;
  for (const int height : {5123, 700}) {
    const fs::path page = out.path() / ("tall-" + std::to_string(height) + ".html");
    std::ofstream(page) << "<!doctype html><html><body style=\"margin:0\"><div style=\"height:" << height
                        << "px;background:linear-gradient(#fff,#0969da)\"></div></body></html>";
    const fs::path png = out.path() / ("tall-" + std::to_string(height) + ".png");
    auto shot = screenshot(page, png);
    ASSERT_TRUE(shot) << shot.error().describe();
    const std::string bytes = read_file(png);
    ASSERT_GT(bytes.size(), 24u);
    EXPECT_EQ(be32(bytes, 16), 1400u);
    EXPECT_EQ(be32(bytes, 20), static_cast<std::uint32_t>(height));
  }
}

TEST(Report, AMissingChromiumSaysWhatToInstall) {
  scratch_dir out;
  std::ofstream(out.path() / "page.html") << "<p>x</p>";
  const char* before = std::getenv("TETHER_CHROMIUM");
  const std::string saved = before ? before : "";
  const std::string path_before = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::unsetenv("TETHER_CHROMIUM");
  ::setenv("PATH", out.path().c_str(), 1);
  auto shot = screenshot(out.path() / "page.html", out.path() / "page.png");
  ::setenv("PATH", path_before.c_str(), 1);
  if (before) ::setenv("TETHER_CHROMIUM", saved.c_str(), 1);
  ASSERT_FALSE(shot);
  EXPECT_EQ(shot.error(), e2e_errc::io);
  EXPECT_NE(shot.error().message.find("chromium"), std::string::npos) << shot.error().message;
}

// Runs screenshot() with $TETHER_CHROMIUM set to a shell script.
result<void> screenshot_with_fake_chromium(const fs::path& dir, const std::string& script) {
  const fs::path fake = dir / "fake-chromium";
  std::ofstream(fake) << "#!/bin/sh\n" << script << "\n";
  fs::permissions(fake, fs::perms::owner_all);
  std::ofstream(dir / "page.html") << "<p>x</p>";
  const char* before = std::getenv("TETHER_CHROMIUM");
  const std::string saved = before ? before : "";
  ::setenv("TETHER_CHROMIUM", fake.c_str(), 1);
  auto shot = screenshot(dir / "page.html", dir / "page.png");
  if (before)
    ::setenv("TETHER_CHROMIUM", saved.c_str(), 1);
  else
    ::unsetenv("TETHER_CHROMIUM");
  return shot;
}

TEST(Report, AFailingChromiumReportsItsLastOutputLine) {
  scratch_dir out;
  auto shot = screenshot_with_fake_chromium(out.path(), "echo starting; echo 'fatal: no display' >&2; exit 3");
  ASSERT_FALSE(shot);
  EXPECT_EQ(shot.error(), e2e_errc::io);
  EXPECT_NE(shot.error().message.find("exit 3"), std::string::npos) << shot.error().message;
  EXPECT_NE(shot.error().message.find("fatal: no display"), std::string::npos) << shot.error().message;
}

TEST(Report, AChromiumThatWritesNoPictureIsAnError) {
  scratch_dir out;
  auto shot = screenshot_with_fake_chromium(out.path(), "exit 0");
  ASSERT_FALSE(shot);
  EXPECT_EQ(shot.error(), e2e_errc::io);

  // A file that is not a PNG is refused too.
  shot = screenshot_with_fake_chromium(
      out.path(),
      "for a in \"$@\"; do case $a in --screenshot=*) echo not-a-png > \"${a#--screenshot=}\";; esac; done");
  ASSERT_FALSE(shot);
  EXPECT_NE(shot.error().message.find("not a PNG"), std::string::npos) << shot.error().message;
}

}  // namespace
}  // namespace tether::e2e
