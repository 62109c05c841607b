#include "e2e/run/campaign.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include <boost/json.hpp>

#include "e2e/run/cell.h"
#include "e2e/run/database.h"
#include "process/run_to_end.h"
#include "util/clock.h"
#include "util/random.h"

namespace tether::e2e {

namespace fs = std::filesystem;

namespace {

std::string campaign_id() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return std::string(buf) + "-" + random_hex(2);
}

// The first line `argv` prints when it succeeds within 10 s, or "".
std::string first_line_of(std::vector<std::string> argv) {
  process::spawn_options o;
  o.argv = std::move(argv);
  o.env = process::inherited_environment();
  o.stderr_mode = process::output::null;
  auto done = process::run_to_end(std::move(o), {.limit = std::chrono::seconds(10), .max_output = 4096});
  if (!done || done->timed_out || !done->status.success()) return "";
  std::string out = done->output.substr(0, done->output.find('\n'));
  while (!out.empty() && out.back() == '\r') out.pop_back();
  return out;
}

// The first line `git -C repo args...` prints when it succeeds, or "".
std::string first_line_of_git(const std::string& repo, const std::vector<std::string>& args) {
  const auto git = process::find_program("git");
  if (!git) return "";
  std::vector<std::string> argv{git->string(), "-C", repo};
  argv.insert(argv.end(), args.begin(), args.end());
  return first_line_of(std::move(argv));
}

// A selection filter: "" (everything) or ids separated by commas, each of
// which must select something (a typo is an error, not "0 of 0 failed").
class id_filter {
 public:
  explicit id_filter(const std::string& spec) {
    std::size_t from = 0;
    while (from <= spec.size()) {
      const auto comma = std::min(spec.find(',', from), spec.size());
      if (comma > from) ids_.push_back(spec.substr(from, comma - from));
      from = comma + 1;
    }
  }
  bool matches(const std::string& id) {
    if (ids_.empty()) return true;
    if (std::find(ids_.begin(), ids_.end(), id) == ids_.end()) return false;
    seen_.insert(id);
    return true;
  }
  // The first id that selected nothing.
  [[nodiscard]] std::optional<std::string> unseen() const {
    for (const auto& id : ids_)
      if (!seen_.contains(id)) return id;
    return std::nullopt;
  }

 private:
  std::vector<std::string> ids_;
  std::set<std::string> seen_;
};

struct matrix {
  std::vector<cell_plan> plans;
  std::map<std::string, std::string> hashes;
};

result<matrix> select(const catalogue& cat, const campaign_options& o) {
  matrix m;
  id_filter suites(o.suite), profiles(o.profile), environments(o.environment), cases(o.kase);
  for (const auto& s : cat.suites) {
    if (!suites.matches(s.id)) continue;
    m.hashes[s.id] = definition_hash(s);
    for (const auto& p : s.profiles) {
      if (!profiles.matches(p)) continue;
      for (const auto& e : s.environments) {
        if (!environments.matches(e)) continue;
        for (const auto& c : s.cases) {
          if (!cases.matches(c.id)) continue;
          cell_plan plan;
          plan.suite = &s;
          plan.kase = &c;
          plan.profile = cat.profiles.at(p);
          plan.environment = cat.environments.at(e);
          plan.suite_hash = m.hashes[s.id];
          m.plans.push_back(std::move(plan));
        }
      }
    }
  }
  const std::pair<std::string_view, const id_filter*> filters[] = {
      {"suite", &suites}, {"profile", &profiles}, {"environment", &environments}, {"case", &cases}};
  for (const auto& [what, f] : filters)
    if (auto id = f->unseen())
      return make_error(e2e_errc::invalid_definition, "no " + std::string(what) + " '" + *id + "' in the selection");
  if (m.plans.empty()) return make_error(e2e_errc::invalid_definition, "the selection has no cell");
  return m;
}

std::string result_name(const cell_plan& p) { return cell_name(p) + ".attempt-" + std::to_string(p.attempt); }

// The shared state of the workers.
class scheduler {
 public:
  scheduler(std::vector<cell_plan> plans, const campaign_options& o, const progress_sink& progress,
            const std::function<bool()>& cancelled, fs::path cells_dir)
      : queue_(plans.begin(), plans.end()),
        total_(plans.size()),
        options_(o),
        progress_(progress),
        cancelled_(cancelled),
        cells_dir_(std::move(cells_dir)),
        started_(std::chrono::steady_clock::now()) {}

  void work() {
    for (;;) {
      cell_plan plan;
      {
        std::lock_guard lock(mu_);
        if (queue_.empty()) return;
        plan = std::move(queue_.front());
        queue_.pop_front();
      }
      plan.artifacts_dir = cells_dir_ / result_name(plan);
      cell_result r;
      if (cancelled_()) {
        r = skipped(plan);
      } else if (auto reason = not_applicable_reason(plan)) {
        r = not_applicable_record(plan, std::move(*reason));
      } else if (auto why = skip_reason(plan)) {
        r = skipped_record(plan, std::move(*why));
      } else {
        say("start " + cell_name(plan) + (plan.attempt > 1 ? " (retry)" : ""));
        r = run_cell(plan, cancelled_);
      }
      (void)write_json_file(cells_dir_ / (result_name(plan) + ".json"), to_json(r));
      finish(plan, std::move(r));
    }
  }

  std::vector<cell_result> take_results() { return std::move(results_); }

 private:
  static cell_result skipped(const cell_plan& plan) {
    cell_result r = cell_record(plan, "");
    r.artifacts.clear();
    r.status = cell_status::skipped;
    r.error = "interrupted before it started";
    r.finished_at_ms = r.started_at_ms;
    compute_billing(r);
    return r;
  }

  void finish(const cell_plan& plan, cell_result r) {
    std::lock_guard lock(mu_);
    const bool retry = r.failure && retryable(*r.failure) && plan.attempt == 1 && !cancelled_();
    std::string line = std::string(to_string(r.status)) + " " + r.cell;
    if (plan.attempt > 1) line += " (attempt " + std::to_string(plan.attempt) + ")";
    if (r.failure) line += " [" + std::string(to_string(*r.failure)) + "]";
    if (!r.error.empty()) line += ": " + r.error;
    if (!r.not_applicable_reason.empty()) line += ": " + r.not_applicable_reason;
    if (!r.skipped_reason.empty()) line += ": " + r.skipped_reason;
    for (const auto& m : r.matchers)
      if (!m.passed) line += "\n    " + m.description + ": " + m.why;
    line += " (" + std::to_string(r.duration_ms) + " ms)";
    if (retry) {
      cell_plan again = plan;
      again.attempt = 2;
      queue_.push_back(std::move(again));
      ++retries_;
      line += " — retrying once";
    } else {
      ++done_;
      if (r.status == cell_status::passed) ++passed_;
      if (r.status == cell_status::failed) ++failed_;
      if (r.status == cell_status::not_applicable) ++not_applicable_;
    }
    results_.push_back(std::move(r));
    emit(line);
  }

  void say(const std::string& line) {
    std::lock_guard lock(mu_);
    emit(line);
  }

  // Called with mu_ held.
  void emit(const std::string& line) {
    if (!progress_.write) return;
    const auto elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    std::string summary = "[" + std::to_string(done_) + "/" + std::to_string(total_) + "] " + std::to_string(passed_) +
                          " passed, " + std::to_string(failed_) + " failed";
    if (not_applicable_ > 0) summary += ", " + std::to_string(not_applicable_) + " not applicable";
    if (retries_ > 0) summary += ", " + std::to_string(retries_) + " retried";
    if (done_ > 0 && done_ < total_) {
      const auto eta = elapsed / static_cast<double>(done_) * static_cast<double>(total_ - done_);
      summary += ", ETA " + std::to_string(static_cast<int>(eta + 0.5)) + " s";
    }
    if (progress_.style == progress_style::terminal) {
      if (!line.starts_with("start ")) progress_.write("\r\033[K" + line + "\n");
      progress_.write("\r\033[K" + summary);
    } else {
      progress_.write(summary + " " + line + "\n");
    }
  }

  std::mutex mu_;
  std::deque<cell_plan> queue_;
  std::size_t total_;
  std::size_t done_ = 0, passed_ = 0, failed_ = 0, not_applicable_ = 0, retries_ = 0;
  const campaign_options& options_;
  const progress_sink& progress_;
  const std::function<bool()>& cancelled_;
  fs::path cells_dir_;
  std::chrono::steady_clock::time_point started_;
  std::vector<cell_result> results_;
};

}  // namespace

result<campaign> run_campaign(const campaign_options& o, const progress_sink& progress,
                              const std::function<bool()>& cancelled) {
  auto cat = load_catalogue(o.suites_dir);
  if (!cat) return cat.error();
  auto m = select(*cat, o);
  if (!m) return m.error();
  const std::string id = campaign_id();
  const std::string repo = o.suites_dir.string();  // an argument, not a shell word
  const std::string sha = first_line_of_git(repo, {"rev-parse", "HEAD"});
  const std::string ref = first_line_of_git(repo, {"rev-parse", "--abbrev-ref", "HEAD"});
  std::error_code ec;
  const fs::path scratch = o.scratch_root.empty() ? fs::temp_directory_path(ec) / ("tether-e2e-" + id) : o.scratch_root;
  const char* pg_env = std::getenv("TETHER_PG_CLUSTER");
  const fs::path pg_cluster = pg_env != nullptr && *pg_env != '\0'
                                  ? fs::path(pg_env)
                                  : fs::absolute(o.suites_dir, ec).parent_path() / "scripts" / "pg-cluster";
  // One PostgreSQL cluster for every postgres-2node cell (started by the
  // first, stopped when the campaign ends).
  auto database = std::make_shared<database_server>(pg_cluster);
  for (auto& p : m->plans) {
    p.database = database;
    p.campaign_id = id;
    p.source_sha = sha;  // "": the suites are not in a git checkout
    p.source_ref = ref;
    p.tether_binary = o.tether_binary;
    p.scratch_root = scratch;
    p.pg_cluster = pg_cluster;
    p.agents_prefix = o.agents_prefix;
  }
  const auto dir = o.out / "campaigns" / id;
  const std::int64_t started = real_clock().now();
  scheduler sched(m->plans, o, progress, cancelled, dir / "cells");
  std::vector<std::thread> workers;
  const int jobs = std::max(1, std::min<int>(o.jobs, static_cast<int>(m->plans.size())));
  for (int i = 0; i < jobs; ++i) workers.emplace_back([&sched] { sched.work(); });
  for (auto& w : workers) w.join();
  if (progress.write && progress.style == progress_style::terminal) progress.write("\n");
  fs::remove_all(scratch, ec);

  auto results = sched.take_results();
  // The plans' order (suite, profile, environment, case as defined), not the
  // order cells finished in: the record and the dashboard read the same
  // every time.
  std::map<std::string, std::size_t> planned;
  for (const auto& p : m->plans) planned.emplace(cell_name(p), planned.size());
  std::stable_sort(results.begin(), results.end(), [&](const cell_result& a, const cell_result& b) {
    if (a.cell != b.cell) return planned[a.cell] < planned[b.cell];
    return a.attempt < b.attempt;
  });
  campaign c = summarize(id, results);
  c.binary_path = o.tether_binary;
  c.binary_version = first_line_of({o.tether_binary, "version"});
  c.started_at_ms = started;
  c.finished_at_ms = real_clock().now();
  c.source_sha = m->plans.front().source_sha;
  c.source_ref = m->plans.front().source_ref;
  c.selection = {{"suite", o.suite}, {"profile", o.profile}, {"environment", o.environment}, {"case", o.kase}};
  for (auto& ref_ : c.cells) ref_.result = "cells/" + ref_.cell + ".attempt-" + std::to_string(ref_.attempt) + ".json";
  TETHER_TRY(write_json_file(dir / "campaign.json", to_json(c)));
  auto h = record_campaign(o.out, c, results);
  if (!h) return h.error();
  return c;
}

}  // namespace tether::e2e
