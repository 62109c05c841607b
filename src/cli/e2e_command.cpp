// `tether e2e`: the qualification harness (docs/architecture.md §9).
//
//   tether e2e run [--suites DIR] [--suite S] [--profile P] [--env E]
//                  [--case C] [--jobs N] [--out DIR] [--screenshot] [--tether PATH]
//       runs the selected cells (each filter: one id or several, separated
//       by commas), writes their records, the campaign, the
//       history and the dashboard (OUT/dashboard.html; with --screenshot also
//       OUT/dashboard.png through headless Chromium). Exit 0 only when every
//       selected cell passed (cells not applicable to their runtime are not
//       run and do not count); 1 otherwise; 2 for a bad definition or
//       selection; 130 after Ctrl-C (every process it started is stopped).
//   tether e2e report [--out DIR] [--campaign ID] [--screenshot]
//       renders the dashboard again from OUT: the latest campaign's
//       (OUT/dashboard.html) or campaign ID's (OUT/dashboard-ID.html), and
//       the latest green campaign's page it links to. The screenshot is
//       OUT/dashboard.png, or OUT/dashboard-ID.png.
//   tether e2e list [--suites DIR]
//       the matrix: every cell the definitions describe.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "cli/client.h"
#include "cli/commands.h"
#include "e2e/report.h"
#include "e2e/run/campaign.h"
#include "e2e/run/process.h"
#include "e2e/suite.h"
#include "runtime/agent/programs.h"

namespace tether::cli {

namespace {

namespace fs = std::filesystem;

struct e2e_args {
  e2e::campaign_options run;
  bool screenshot = false;
  std::string campaign;  // report: "" for the latest
};

int report(const fs::path& out, bool screenshot, const std::string& campaign = {}) {
  auto html = e2e::write_report(out, campaign);
  if (!html) {
    fmt::print(stderr, "tether: cannot write the dashboard: {}\n", html.error().message);
    return html.error() == e2e::e2e_errc::not_found && !campaign.empty() ? exit_usage : exit_failed;
  }
  fmt::print("dashboard: {}\n", html->string());
  if (!screenshot) return exit_ok;
  auto png = *html;
  png.replace_extension(".png");
  if (auto shot = e2e::screenshot(*html, png); !shot) {
    fmt::print(stderr, "tether: cannot take the dashboard's screenshot: {}\n", shot.error().message);
    return exit_failed;
  }
  fmt::print("screenshot: {}\n", png.string());
  return exit_ok;
}

int run(e2e_args a) {
  install_sigint_handler();
  std::error_code ec;
  if (a.run.tether_binary.empty()) a.run.tether_binary = fs::read_symlink("/proc/self/exe", ec).string();
  // The prefix the cells' servers find the agent programs in (programs.h), seen by the ssh environment too.
  const char* prefix = std::getenv("TETHER_AGENTS_PREFIX");
  a.run.agents_prefix = prefix != nullptr && *prefix != '\0' ? fs::path(prefix) : runtime::agent::default_prefix();
  e2e::progress_sink progress;
  progress.style = ::isatty(STDOUT_FILENO) == 1 ? e2e::progress_style::terminal : e2e::progress_style::lines;
  progress.write = [](const std::string& s) {
    std::fputs(s.c_str(), stdout);
    std::fflush(stdout);
  };
  const auto cancelled = [] { return sigint_count() > 0; };
  auto c = e2e::run_campaign(a.run, progress, cancelled);
  if (!c) {
    e2e::stop_all_children();
    fmt::print(stderr, "tether: {}\n", c.error().message);
    return c.error() == e2e::e2e_errc::invalid_definition || c.error() == e2e::e2e_errc::not_found ? exit_usage
                                                                                                   : exit_failed;
  }
  const auto& t = c->totals;
  fmt::print("campaign {}: {} selected, {} passed, {} failed, {} incomplete, {} not applicable, {} retried\n", c->id,
             t.selected, t.passed, t.failed, t.incomplete, t.not_applicable, t.retries);
  fmt::print("results: {}\n", (a.run.out / "campaigns" / c->id).string());
  const int shown = report(a.run.out, a.screenshot);
  if (cancelled()) return exit_interrupted;
  if (!c->green()) return exit_failed;
  return shown;
}

int list(const fs::path& suites) {
  auto cat = e2e::load_catalogue(suites);
  if (!cat) {
    fmt::print(stderr, "tether: {}\n", cat.error().message);
    return exit_usage;
  }
  std::size_t n = 0;
  for (const auto& s : cat->suites) {
    fmt::print("{} — {} (definition {})\n", s.id, s.title, e2e::definition_hash(s).substr(0, 12));
    for (const auto& p : s.profiles)
      for (const auto& e : s.environments)
        for (const auto& k : s.cases) {
          const auto na = k.not_applicable.find(cat->profiles.at(p).runtime);
          fmt::print("  {}.{}.{}.{}  {}{}\n", s.id, p, e, k.id, k.title,
                     na == k.not_applicable.end() ? "" : " (not applicable: " + na->second + ")");
          ++n;
        }
  }
  fmt::print("{} cells\n", n);
  return exit_ok;
}

}  // namespace

void add_e2e_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<e2e_args>();
  auto* e2e = app.add_subcommand("e2e", "The qualification harness: suites × profiles × environments");
  e2e->require_subcommand(1);

  auto* r = e2e->add_subcommand("run", "Run the selected cells and write their results and the dashboard");
  r->add_option("--suites", a->run.suites_dir, "Directory of the suite definitions")->capture_default_str();
  r->add_option("--suite", a->run.suite, "Only these suites (ids separated by commas)");
  r->add_option("--profile", a->run.profile, "Only these profiles (ids separated by commas)");
  r->add_option("--env", a->run.environment, "Only these environments (ids separated by commas)");
  r->add_option("--case", a->run.kase, "Only these cases (ids separated by commas)");
  r->add_option("--jobs", a->run.jobs, "Cells at once")->capture_default_str()->check(CLI::Range(1, 64));
  r->add_option("--out", a->run.out, "Results directory")->capture_default_str();
  r->add_flag("--screenshot", a->screenshot, "Also render the dashboard to a PNG with headless Chromium");
  r->add_option("--tether", a->run.tether_binary, "The tether to qualify (serve, mock-llm); default: this one");
  r->callback([a, &exit_code] { exit_code = run(*a); });

  auto* rep = e2e->add_subcommand("report", "Render the dashboard from a results directory");
  rep->add_option("--out", a->run.out, "Results directory")->capture_default_str();
  rep->add_option("--campaign", a->campaign, "The campaign to show (an id from OUT/history.json); default: the latest");
  rep->add_flag("--screenshot", a->screenshot, "Also render the dashboard to a PNG with headless Chromium");
  rep->callback([a, &exit_code] { exit_code = report(a->run.out, a->screenshot, a->campaign); });

  auto* l = e2e->add_subcommand("list", "List every cell of the matrix");
  l->add_option("--suites", a->run.suites_dir, "Directory of the suite definitions")->capture_default_str();
  l->callback([a, &exit_code] { exit_code = list(a->run.suites_dir); });
}

}  // namespace tether::cli
