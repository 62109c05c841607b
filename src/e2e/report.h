// e2e::write_report — the dashboard: one self-contained HTML file.
//
//   auto r = e2e::write_report(out_dir);   // reads OUT/history.json and the
//                                          // campaigns it lists; writes
//                                          // OUT/dashboard.html
//   auto png = e2e::screenshot(out_dir / "dashboard.html", out_dir / "dashboard.png");
//
// The page needs no network and no external asset: CSS inline, charts as
// inline SVG, no script required to read it. It shows, for the latest
// campaign: a summary (pass rate, cells, tokens, cost, agent time, retries);
// per suite a configuration matrix (profiles × environments, each cell
// listing its cases with pass/fail), pass rate, tokens (input, output,
// cached), cost, agent time and retries; per cell the matcher table, the turn
// table and the usage JSON (in <details>); and trends across every stored
// campaign as charts (pass rate, tokens, agent time). A cell not applicable
// to its runtime is its own grey state ("–", "not applicable"), its reason
// in the chip's title and the cell's facts; pass rates leave it out. A missing cost reads
// "unavailable" (or "unpriced"), never $0. All text from results is HTML-escaped.
//
// screenshot() runs headless Chromium (`chromium`, or $TETHER_CHROMIUM) with
// no network, a temporary profile and a 1400-pixel-wide window, and checks
// that a non-empty PNG came out.
//
// Errors (e2e_errc): not_found (no history, or a campaign file it names is
// missing), bad_record (a file that is not the expected schema),
// io (cannot write; Chromium missing or failed, with its stderr's last line).
#pragma once

#include <filesystem>
#include <string>

#include "e2e/result.h"
#include "util/result.h"

namespace tether::e2e {

struct report_data {
  history hist;
  campaign latest;
  std::vector<cell_result> latest_cells;  // the latest campaign's results, every attempt
};

// Loads what the dashboard shows from OUT.
result<report_data> load_report_data(const std::filesystem::path& out);
// The page (pure: no I/O).
std::string render_dashboard(const report_data& d);
// load_report_data + render_dashboard, written to OUT/dashboard.html; returns its path.
result<std::filesystem::path> write_report(const std::filesystem::path& out);

result<void> screenshot(const std::filesystem::path& html, const std::filesystem::path& png);

}  // namespace tether::e2e
