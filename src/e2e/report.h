// e2e::write_report — the dashboard: one self-contained HTML file per campaign.
//
//   auto r = e2e::write_report(out_dir);          // the latest campaign: OUT/dashboard.html
//   auto p = e2e::write_report(out_dir, "ID");    // campaign ID: OUT/dashboard-ID.html
//   auto png = e2e::screenshot(*r, out_dir / "dashboard.png");
//
// The page needs no network and no external asset: CSS inline, charts as
// inline SVG, no script. It shows, for one campaign: a header (id, time,
// the suites' source revision or that they are not in a git checkout, the
// revision of the `tether` binary that ran, the selection, and a link to the
// page of the latest green campaign, which write_report writes too); a
// summary (pass rate, cells, tokens, cost, agent time, retries); per suite a
// profile × case grid (a row per profile, and environment when there are
// several; a column per case; both in the order the suite defines them, so
// every campaign of a suite reads the same), per profile the turn latency
// p50/p95 (input sent → its run finished), tokens and cost, and trends of
// that suite over the stored campaigns with the same selection (profile,
// environment and case filters); per cell the matcher table, the turn
// table, links to its artifacts (server and model logs, transcript) and the
// usage JSON (in <details>); and the campaign's trends over the stored
// campaigns with the same selection. A cell not applicable
// to its runtime is its own grey state ("–", "not applicable"), its reason
// in the chip's title and the cell's facts; pass rates leave it out. A missing cost reads
// "unavailable" (or "unpriced"), never $0. All text from results is HTML-escaped.
//
// screenshot() runs headless Chromium (`chromium`, or $TETHER_CHROMIUM) with
// no network, a temporary profile and a 1400-pixel-wide window as tall as
// the page (measured first on a copy of it; at most 16,000 pixels), and
// checks that a non-empty PNG came out.
//
// Errors (e2e_errc): not_found (no history, a campaign id it does not list,
// or a campaign file it names is missing), bad_record (a file that is not
// the expected schema), io (cannot write; Chromium missing or failed, with
// its stderr's last line).
#pragma once

#include <filesystem>
#include <string>

#include "e2e/result.h"
#include "util/result.h"

namespace tether::e2e {

struct report_data {
  history hist;
  campaign shown;                  // the campaign the page is about
  std::vector<cell_result> cells;  // its results, every attempt, in the campaign's order
  // Per entry of `cells`: its artifact files, as paths relative to OUT.
  std::vector<std::vector<std::string>> artifacts;
};

// Loads what the page of campaign `id` shows from OUT (the latest when `id`
// is empty).
result<report_data> load_report_data(const std::filesystem::path& out, const std::string& id = {});
// The page (pure: no I/O).
std::string render_dashboard(const report_data& d);
// The page's file name in OUT: dashboard.html for the latest campaign,
// dashboard-<id>.html for any other.
std::string dashboard_file(const history& h, const std::string& id);
// load_report_data + render_dashboard, written to OUT/dashboard_file(id);
// the latest green campaign's page is written too when it is another one
// (the header links to it). Returns the page's path.
result<std::filesystem::path> write_report(const std::filesystem::path& out, const std::string& id = {});

result<void> screenshot(const std::filesystem::path& html, const std::filesystem::path& png);

}  // namespace tether::e2e
