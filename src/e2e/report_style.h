// The dashboard's stylesheet, inlined into the page (internal to src/e2e).
//
// A light theme; status colours: green = passed, red = failed, amber =
// incomplete (error or skipped), grey = not applicable (`na`: the case does
// not apply to the runtime, so it did not run). No web fonts, no external
// anything.
#pragma once

#include <string_view>

namespace tether::e2e {

inline constexpr std::string_view dashboard_css = R"css(
:root {
  --ink: #1f2328; --muted: #59636e; --line: #d1d9e0; --soft: #f6f8fa; --page: #eef1f4;
  --green: #1a7f37; --green-bg: #dafbe1; --green-line: #aceebb;
  --red: #cf222e; --red-bg: #ffebe9; --red-line: #ffcecb;
  --amber: #9a6700; --amber-bg: #fff8c5; --amber-line: #f2e08a;
  --grey: #59636e; --grey-bg: #eaeef2; --grey-line: #d1d9e0;
}
* { box-sizing: border-box; }
html { background: var(--page); }
body {
  margin: 0; color: var(--ink);
  font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Helvetica Neue", Arial, sans-serif;
}
main { max-width: 1320px; margin: 0 auto; padding: 24px 32px 48px; }
code, pre { font-family: ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12.5px; }
code { background: var(--soft); border: 1px solid var(--line); border-radius: 4px; padding: 0 4px; }
h1 { font-size: 24px; margin: 2px 0 6px; font-weight: 650; }
h1 code { font-size: 20px; }
h2 { font-size: 18px; margin: 0; font-weight: 650; }
h3 { font-size: 14px; margin: 18px 0 8px; text-transform: uppercase; letter-spacing: .05em; color: var(--muted); }
h4 { font-size: 13px; margin: 14px 0 6px; color: var(--muted); }
a { color: inherit; text-decoration: none; }
.muted { color: var(--muted); }
.meta { color: var(--muted); font-size: 13px; margin-top: 2px; }
.eyebrow { font-size: 12px; font-weight: 600; text-transform: uppercase; letter-spacing: .08em; color: var(--muted); }
.pass { color: var(--green); } .fail { color: var(--red); } .incomplete { color: var(--amber); } .na { color: var(--grey); }

header.top, section.card {
  background: #fff; border: 1px solid var(--line); border-radius: 12px;
  box-shadow: 0 1px 2px rgba(31, 35, 40, .04);
}
header.top { display: flex; justify-content: space-between; align-items: center; gap: 24px; padding: 20px 24px; }
section.card { padding: 20px 24px; margin: 16px 0; }

.badge {
  display: flex; flex-direction: column; align-items: center; justify-content: center;
  min-width: 180px; padding: 12px 22px; border-radius: 12px; color: #fff;
  font-size: 26px; font-weight: 750; letter-spacing: .06em;
}
.badge span { font-size: 12px; font-weight: 500; letter-spacing: 0; opacity: .92; }
.badge.green { background: var(--green); } .badge.red { background: var(--red); } .badge.na { background: var(--grey); }
.badge.small { min-width: 0; padding: 4px 14px; border-radius: 999px; font-size: 14px; letter-spacing: 0; flex-direction: row; }

.tiles { display: grid; grid-template-columns: repeat(5, 1fr); gap: 12px; margin: 16px 0; }
.tiles.small { grid-template-columns: repeat(7, 1fr); gap: 8px; margin: 14px 0; }
.tile { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 10px 14px; border-top: 4px solid var(--line); }
.tiles.small .tile { background: var(--soft); padding: 8px 12px; }
.tile .label { font-size: 11.5px; font-weight: 600; text-transform: uppercase; letter-spacing: .05em; color: var(--muted); }
.tile .value { font-size: 24px; font-weight: 650; font-variant-numeric: tabular-nums; line-height: 1.3; }
.tiles.small .tile .value { font-size: 18px; }
.tile .sub { font-size: 12px; color: var(--muted); }
.tile.pass { border-top-color: var(--green); } .tile.pass .value { color: var(--green); }
.tile.fail { border-top-color: var(--red); } .tile.fail .value { color: var(--red); }
.tile.incomplete { border-top-color: #d4a72c; } .tile.incomplete .value { color: var(--amber); }
.tile.muted .value { color: var(--muted); font-weight: 550; }

.suite-head { display: flex; justify-content: space-between; align-items: center; gap: 16px; }
.description { margin: 8px 0 0; max-width: 900px; }

table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { padding: 6px 10px; text-align: left; vertical-align: top; border-bottom: 1px solid var(--line); }
thead th { background: var(--soft); font-weight: 600; color: var(--muted); font-size: 12px; border-bottom: 2px solid var(--line); }
tbody tr:nth-child(even) { background: #f9fafb; }
td.num { font-variant-numeric: tabular-nums; white-space: nowrap; }
td.pass, td.fail { font-weight: 600; white-space: nowrap; }

.cases-wrap { overflow-x: auto; margin: 12px 0 4px; }
table.cases { width: auto; border: 1px solid var(--line); }
table.cases th.case { vertical-align: bottom; padding: 6px 2px; font-weight: 550; }
table.cases th.case span { writing-mode: vertical-rl; transform: rotate(180deg); white-space: nowrap; max-height: 200px; display: inline-block; }
table.cases tbody th { background: var(--soft); white-space: nowrap; position: sticky; left: 0; }
table.cases td { padding: 3px; text-align: center; min-width: 34px; }
table.cases td.none { color: var(--line); }
table.cases .chip { margin: 0; padding: 2px 6px; text-align: center; }
table.profiles tbody th { white-space: nowrap; }
a.file, a.link { color: #0969da; text-decoration: underline; }
.chip {
  display: block; margin: 3px 0; padding: 3px 10px; border-radius: 6px; border: 1px solid;
  font-weight: 550; font-size: 12.5px;
}
.chip.pass { background: var(--green-bg); border-color: var(--green-line); }
.chip.fail { background: var(--red-bg); border-color: var(--red-line); }
.chip.incomplete { background: var(--amber-bg); border-color: var(--amber-line); }
.chip.na { background: var(--grey-bg); border-color: var(--grey-line); color: var(--grey); font-weight: 450; }
.retry { color: var(--muted); font-weight: 400; }

.charts { display: grid; grid-template-columns: repeat(3, 1fr); gap: 16px; margin-top: 12px; }
svg.chart { width: 100%; height: auto; background: var(--soft); border: 1px solid var(--line); border-radius: 8px; }
svg.chart .chart-title { font-size: 13px; font-weight: 650; fill: var(--ink); }
svg.chart .tick { font-size: 10.5px; fill: var(--muted); }
svg.chart .point { font-size: 11px; font-weight: 600; fill: var(--ink); }
svg.chart .legend { font-size: 11px; fill: var(--muted); }
svg.chart .grid { stroke: #e1e6eb; stroke-width: 1; }
svg.chart .axis { stroke: #afb8c1; stroke-width: 1; }

details.cell { border: 1px solid var(--line); border-left: 4px solid var(--line); border-radius: 8px; margin: 6px 0; background: #fff; }
details.cell.is-pass { border-left-color: var(--green); }
details.cell.is-fail { border-left-color: var(--red); }
details.cell.is-incomplete { border-left-color: #d4a72c; }
details.cell.is-na { border-left-color: var(--grey-line); }
details.cell summary { cursor: pointer; padding: 8px 12px; list-style-position: inside; }
details.cell summary .title { margin-left: 6px; font-weight: 550; }
details.cell .body { padding: 4px 16px 14px; border-top: 1px solid var(--line); }
.pill { display: inline-block; min-width: 78px; text-align: center; padding: 1px 8px; border-radius: 999px; font-size: 12px; font-weight: 650; }
.pill.pass { background: var(--green-bg); } .pill.fail { background: var(--red-bg); } .pill.incomplete { background: var(--amber-bg); }
.pill.na { background: var(--grey-bg); color: var(--grey); }
dl.facts { display: grid; grid-template-columns: max-content 1fr max-content 1fr; gap: 2px 14px; margin: 10px 0 4px; font-size: 13px; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
pre.text { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; max-width: 360px; }
details.raw { margin-top: 8px; }
details.raw summary { cursor: pointer; color: var(--muted); font-size: 12.5px; margin-bottom: 6px; }
pre.json { margin: 0; padding: 10px 12px; background: var(--soft); border: 1px solid var(--line); border-radius: 6px; max-height: 360px; overflow: auto; }
footer { color: var(--muted); font-size: 12px; text-align: center; margin-top: 24px; }
)css";

}  // namespace tether::e2e
