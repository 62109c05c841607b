// e2e::run_campaign — the selected cells of the matrix, in parallel, with
// retries, progress and the files an operator reads afterwards.
//
//   campaign_options o; o.suites_dir = "suites"; o.out = "e2e-results"; o.jobs = 2;
//   auto c = e2e::run_campaign(o, progress);   // result<campaign>
//
// Selection: every (suite, profile, environment, case) whose ids match the
// filters (empty = all; otherwise one id or several separated by commas,
// e.g. "native-openai-chat,native-anthropic"; an id that matches nothing is
// an error, so a typo does not pass as "0 of 0 failed"). Cells run on `jobs` threads, each in
// its own directories, ports and processes (run_cell). A cell whose failure
// class is transient (transient_infrastructure, provider_variance) runs once
// more, as a fresh cell (attempt 2); no other class is retried.
//
// Files: OUT/campaigns/ID/cells/CELL.attempt-N.json and the artifacts
// directory beside it, OUT/campaigns/ID/campaign.json, OUT/history.json
// (see result.h). The campaign is green when every selected cell passed;
// a cell whose case is not applicable to its profile's runtime is not run,
// recorded as not_applicable, and counts neither way.
//
// Progress: `progress` receives one line per event (a cell started,
// finished, retried) and a summary (done/total, passed, failed, ETA);
// `on_terminal` makes it a single line rewritten in place.
//
// Ctrl-C: `cancelled` (polled) makes every running cell stop its processes
// and return; cells not started are skipped; the campaign is written with
// what finished and is not green.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

#include "e2e/result.h"
#include "e2e/suite.h"

namespace tether::e2e {

struct campaign_options {
  std::filesystem::path suites_dir = "suites";
  std::filesystem::path out = "e2e-results";
  std::string suite;  // filters: ids separated by commas, or "" for all
  std::string profile;
  std::string environment;
  std::string kase;
  int jobs = 2;
  std::string tether_binary;
  std::filesystem::path agents_prefix;  // the agent programs' npm prefix, for the ssh environment
  std::filesystem::path scratch_root;  // "" → the system's temp directory
};

enum class progress_style { lines, terminal };

struct progress_sink {
  progress_style style = progress_style::lines;
  std::function<void(const std::string&)> write;  // one line (lines) or the whole status line (terminal)
};

result<campaign> run_campaign(const campaign_options& o, const progress_sink& progress,
                              const std::function<bool()>& cancelled);

}  // namespace tether::e2e
