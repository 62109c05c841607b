// tether_bench: durable append throughput and admission latency of the
// SQLite event store (docs/architecture.md §10).
//
//   append   N appenders (coroutines on an io_context run by two threads),
//            each appending single-event requests to its own session until
//            the total is reached, for two workloads: the events of a running
//            agent (step/text/tool events) and input admissions (see
//            `workload`). Every append is acknowledged only after its commit
//            is durable, so the rate shows how well the writer group-commits.
//            "batch" is the mean number of requests per commit, "wcpu/ev"
//            the writer thread's CPU time per event in microseconds.
//   admit    one client admitting inputs one after another through
//            session_service::admit (record_only: no runtime turn runs);
//            p50/p99 of the time until the input is durable.
//   fsync    the cost of one 4 KiB write + fdatasync in the same directory:
//            the ceiling of one-commit-per-append is 1 / this.
//
// Each scenario gets a fresh database in a temporary directory. With
// --postgres URL the append scenarios run again against that PostgreSQL
// database (new sessions each; scripts/pg-cluster starts a throwaway one),
// SQLite beside it in the same run. The table goes to stdout; --out writes
// the same numbers as JSON.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <latch>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>

#include "bench_util.h"
#include "session/service.h"
#include "store/committed_store.h"
#include "store/postgres/postgres_store.h"
#include "store/sqlite/sqlite_store.h"
#include "util/log.h"

namespace {

namespace asio = boost::asio;
namespace json = boost::json;
namespace fs = std::filesystem;
using namespace tether;
using namespace tether::bench;

struct options {
  std::size_t events = 20'000;  // per append scenario, split across appenders
  std::size_t admits = 5'000;
  std::vector<std::size_t> appenders = {1, 16, 256};
  std::string out;
  std::string dir;
  std::string postgres;  // also run the appends against this database
  bool quick = false;
};

void usage() {
  std::puts(
      "usage: tether_bench [--events N] [--admits N] [--appenders 1,16,256] [--quick] [--out FILE.json] [--dir DIR]\n"
      "                    [--postgres URL]\n"
      "  --events     durable events per append scenario (default 20000)\n"
      "  --admits     admissions measured for latency (default 5000)\n"
      "  --appenders  comma-separated appender counts (default 1,16,256)\n"
      "  --quick      small counts for a demo run (4000 events, 1000 admissions)\n"
      "  --out        write results as JSON to this file\n"
      "  --dir        where to put the temporary databases (default: the system temp dir)\n"
      "  --postgres   also run the append scenarios against this PostgreSQL database (postgres://...)");
}

bool parse_args(int argc, char** argv, options& o) {
  bool events_set = false;
  bool admits_set = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (a == "--help" || a == "-h") {
      usage();
      std::exit(0);
    } else if (a == "--quick") {
      o.quick = true;
    } else if (a == "--events" || a == "--admits" || a == "--out" || a == "--dir" || a == "--appenders" ||
               a == "--postgres") {
      const char* v = next();
      if (v == nullptr) return false;
      if (a == "--events") {
        o.events = std::strtoull(v, nullptr, 10);
        events_set = true;
      } else if (a == "--admits") {
        o.admits = std::strtoull(v, nullptr, 10);
        admits_set = true;
      } else if (a == "--out") {
        o.out = v;
      } else if (a == "--dir") {
        o.dir = v;
      } else if (a == "--postgres") {
        o.postgres = v;
      } else {
        o.appenders.clear();
        std::string list = v;
        for (std::size_t pos = 0; pos <= list.size();) {
          const auto comma = std::min(list.find(',', pos), list.size());
          const auto n = std::strtoull(list.substr(pos, comma - pos).c_str(), nullptr, 10);
          if (n > 0) o.appenders.push_back(n);
          pos = comma + 1;
        }
      }
    } else {
      std::fprintf(stderr, "unknown argument: %s\n", a.c_str());
      return false;
    }
  }
  if (o.quick) {
    if (!events_set) o.events = 4'000;
    if (!admits_set) o.admits = 1'000;
  }
  return o.events > 0 && !o.appenders.empty();
}

// SQLite at `path`, or the PostgreSQL database `postgres` when it is set.
std::unique_ptr<store::event_store> open_store(const fs::path& path, const std::string& postgres = {}) {
  if (!postgres.empty()) {
    store::postgres_options po;
    po.url = postgres;
    auto st = store::open_postgres_store(std::move(po));
    if (!st) die("open " + store::redacted_url(postgres), st.error());
    return std::move(st).value();
  }
  store::sqlite_options so;
  so.path = path.string();
  auto st = store::open_sqlite_store(std::move(so));
  if (!st) die("open " + path.string(), st.error());
  return std::move(st).value();
}

// ---- scenario: N appenders ----

// What the appenders write. Both are single-event appends, each acknowledged
// only after its commit is durable.
//   agent   the events a running agent writes, in its order: step.started,
//           text.ended, tool.called, tool.succeeded, step.ended, repeated
//           (one open execution per session; messages, tool calls and
//           executions are projected as in a real run)
//   admit   input.admitted with a fresh id: the heaviest projection (the
//           retry/conflict checks, the inbox row and its pending index)
enum class workload { agent, admit };
std::string_view to_string(workload w) { return w == workload::agent ? "agent" : "admit"; }

struct append_result {
  std::string backend = "sqlite";
  workload load = workload::agent;
  std::size_t appenders = 0;
  std::size_t events = 0;
  double seconds = 0;
  double events_per_s = 0;
  latency_summary latency;
  std::uint64_t commits = 0;  // includes the session-creating appends
  double mean_batch = 0;      // write requests per group commit
  double writer_cpu_us_per_event = 0;
};

model::payload next_event(workload w, const execution_id& exe, std::size_t i, std::optional<call_id>& call) {
  if (w == workload::admit) {
    model::input_admitted ev;
    ev.input = input_id::generate();
    ev.prompt = "benchmark input " + std::to_string(i);
    ev.delivery = model::delivery::queue;
    return ev;
  }
  switch (i % 5) {
    case 0:
      return model::step_started{exe, static_cast<std::int64_t>(i / 5 + 1)};
    case 1:
      return model::text_ended{message_id::generate(), "I will list the files of the workspace first."};
    case 2: {
      call = call_id::generate();
      json::object input;
      input["command"] = "ls -la";
      return model::tool_called{*call, "bash", std::move(input), model::tool_kind::local};
    }
    case 3:
      return model::tool_succeeded{*call, "total 8\ndrwxr-xr-x 2 root root 4096 .\n", ""};
    default: {
      model::step_ended ev;
      ev.finish = "tool_calls";
      ev.usage.input_tokens = 1200;
      ev.usage.output_tokens = 40;
      return ev;
    }
  }
}

// One appender: `count` single-event appends to its own session. The store
// outlives every appender (the scenario stops it only after all are done).
asio::awaitable<std::vector<double>> appender(store::event_store* st, session_id s, execution_id exe, workload w,
                                              std::size_t count) {
  std::vector<double> lat;
  lat.reserve(count);
  std::optional<call_id> call;
  for (std::size_t i = 0; i < count; ++i) {
    // Built step by step: GCC 12 miscompiles braced initializers inside co_await expressions.
    store::append_request req;
    req.session = s;
    req.events.push_back(next_event(w, exe, i, call));
    const auto t0 = steady::now();
    auto r = co_await st->append(std::move(req));
    lat.push_back(micros(steady::now() - t0));
    if (!r) die("append", r.error());
  }
  co_return lat;
}

append_result run_appenders(const fs::path& dir, workload w, std::size_t appenders, std::size_t total,
                            const std::string& postgres) {
  const auto db = dir / ("append-" + std::string(to_string(w)) + "-" + std::to_string(appenders) + ".db");
  auto st = open_store(db, postgres);
  pool p(2);

  std::vector<session_id> sessions;
  std::vector<execution_id> executions;
  for (std::size_t i = 0; i < appenders; ++i) {
    auto s = session_id::generate();
    auto e = execution_id::generate();
    std::vector<model::payload> setup;
    setup.emplace_back(model::session_created{"bench", "", ""});
    setup.emplace_back(model::execution_started{e, "bench"});
    auto r = p.run(st->append(store::append_request{s, std::move(setup), std::nullopt, 0}));
    if (!r) die("create session", r.error());
    sessions.push_back(s);
    executions.push_back(e);
  }

  const std::size_t per = std::max<std::size_t>(1, total / appenders);
  std::vector<std::vector<double>> lat(appenders);
  std::latch done(static_cast<std::ptrdiff_t>(appenders));
  const auto t0 = steady::now();
  for (std::size_t i = 0; i < appenders; ++i) {
    asio::co_spawn(p.executor(), appender(st.get(), sessions[i], executions[i], w, per),
                   [&lat, &done, i](const std::exception_ptr& e, std::vector<double> v) {
                     if (e) std::rethrow_exception(e);
                     lat[i] = std::move(v);
                     done.count_down();
                   });
  }
  done.wait();
  const double secs = std::chrono::duration<double>(steady::now() - t0).count();
  const auto* committed = dynamic_cast<const store::committed_store*>(st.get());
  const auto stats = committed != nullptr ? committed->writer_stats() : store::commit_stats{};
  st->stop();

  std::vector<double> all;
  for (auto& v : lat) all.insert(all.end(), v.begin(), v.end());
  append_result out;
  out.backend = postgres.empty() ? "sqlite" : "postgres";
  out.load = w;
  out.appenders = appenders;
  out.events = per * appenders;
  out.seconds = secs;
  out.events_per_s = static_cast<double>(out.events) / secs;
  out.latency = summarize(std::move(all));
  out.commits = stats.commits;
  out.writer_cpu_us_per_event = static_cast<double>(stats.writer_cpu_us) / static_cast<double>(out.events);
  out.mean_batch = stats.commits ? static_cast<double>(stats.requests) / static_cast<double>(stats.commits) : 0;
  return out;
}

// ---- scenario: admission latency through the session service ----

// A runtime that finishes every turn at once. record_only admissions never
// start a turn; it is here because the service needs one.
class idle_runtime final : public session::runtime {
 public:
  [[nodiscard]] std::string name(std::string_view) const override { return "idle"; }
  session::task<session::turn_result> run_turn(session::turn_context, std::shared_ptr<session::turn_host>) override {
    co_return session::turn_result{};
  }
};

struct admit_result {
  std::size_t count = 0;
  double seconds = 0;
  latency_summary latency;
};

asio::awaitable<std::vector<double>> admit_loop(session::session_service* svc, session_id s, std::size_t count) {
  std::vector<double> lat;
  lat.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    session::input_request req;
    req.prompt = "please look at item " + std::to_string(i);
    req.delivery = model::delivery::queue;
    req.start = session::start_mode::record_only;
    const auto t0 = steady::now();
    auto r = co_await svc->admit(s, std::move(req));
    lat.push_back(micros(steady::now() - t0));
    if (!r) die("admit", r.error());
  }
  co_return lat;
}

admit_result run_admissions(const fs::path& dir, std::size_t count) {
  auto st = open_store(dir / "admit.db");
  idle_runtime rt;
  admit_result out;
  {
    pool p(2);
    session::session_options so;
    so.recovery_interval_ms = 0;
    session::session_service svc(p.executor(), *st, rt, real_clock(), session::make_node_identity("bench"), so);
    if (auto r = p.run(svc.start()); !r) die("start", r.error());
    auto row = p.run(svc.create_session(session::create_request{std::nullopt, "bench", "", ""}));
    if (!row) die("create session", row.error());
    const auto t0 = steady::now();
    auto lat = p.run(admit_loop(&svc, row->id, count));
    out.seconds = std::chrono::duration<double>(steady::now() - t0).count();
    out.count = count;
    out.latency = summarize(std::move(lat));
    p.run(svc.stop());
  }
  st->stop();
  return out;
}

// ---- reference: the cost of one durable write ----

latency_summary measure_fdatasync(const fs::path& dir, int rounds) {
  const auto path = dir / "fsync.probe";
  const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0600);
  if (fd < 0) return {};
  std::vector<char> block(4096, 'x');
  std::vector<double> us;
  for (int i = 0; i < rounds; ++i) {
    const auto t0 = steady::now();
    if (::pwrite(fd, block.data(), block.size(), static_cast<off_t>(i % 16) * 4096) < 0) break;
    if (::fdatasync(fd) != 0) break;
    us.push_back(micros(steady::now() - t0));
  }
  ::close(fd);
  fs::remove(path);
  return summarize(std::move(us));
}

// ---- output ----

constexpr double target_events_per_s = 25'000;  // at 256 appenders
constexpr double target_admit_p50_us = 1'000;   // single appender

}  // namespace

int main(int argc, char** argv) {
  options opt;
  if (!parse_args(argc, argv, opt)) {
    usage();
    return 2;
  }
  setup_logging("warn");

  std::error_code ec;
  fs::path base = opt.dir.empty() ? fs::temp_directory_path() : fs::path(opt.dir);
  fs::create_directories(base, ec);
  std::string tmpl = (base / "tether-bench-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  const fs::path dir = tmpl;

  std::printf("tether_bench: SQLite (WAL, synchronous=FULL) in %s%s\n\n", dir.c_str(), opt.quick ? " [quick]" : "");
  const auto fsync = measure_fdatasync(dir, opt.quick ? 50 : 200);
  std::printf("fdatasync of 4 KiB: p50 %.0f us, p99 %.0f us  (one commit per append would cap near %.0f/s)\n\n",
              fsync.p50_us, fsync.p99_us, fsync.p50_us > 0 ? 1e6 / fsync.p50_us : 0.0);

  std::printf("%-28s %10s %10s %12s %10s %10s %8s %8s\n", "scenario", "events", "seconds", "events/s", "p50 us",
              "p99 us", "batch", "wcpu/ev");
  std::printf("%s\n", std::string(103, '-').c_str());
  std::vector<append_result> appends;
  std::vector<std::string> backends{""};
  if (!opt.postgres.empty()) backends.push_back(opt.postgres);
  for (const auto& backend : backends)
    for (const auto w : {workload::agent, workload::admit}) {
      for (const auto n : opt.appenders) {
        auto r = run_appenders(dir, w, n, opt.events, backend);
        std::printf("%-28s %10zu %10.3f %12.0f %10.0f %10.0f %8.1f %8.1f\n",
                    (r.backend + " " + std::string(to_string(w)) + ", " + std::to_string(n)).c_str(), r.events,
                    r.seconds, r.events_per_s, r.latency.p50_us, r.latency.p99_us, r.mean_batch,
                    r.writer_cpu_us_per_event);
        std::fflush(stdout);
        appends.push_back(r);
      }
    }
  admit_result admit;
  if (opt.admits > 0) {
    admit = run_admissions(dir, opt.admits);
    std::printf("%-28s %10zu %10.3f %12.0f %10.0f %10.0f\n", "admit, 1 client (service)", admit.count, admit.seconds,
                static_cast<double>(admit.count) / admit.seconds, admit.latency.p50_us, admit.latency.p99_us);
  }

  // Targets (docs/architecture.md §10): compare with the closest scenarios run.
  std::printf("\n");
  json::array targets;
  for (const auto& r : appends) {
    if (r.appenders != 256 || r.load != workload::agent || r.backend != "sqlite") continue;
    const bool met = r.events_per_s >= target_events_per_s;
    std::printf("target: >= %.0f durable events/s at 256 appenders (agent events): %.0f  %s\n", target_events_per_s,
                r.events_per_s, met ? "met" : "NOT met");
    targets.push_back({{"name", "durable_events_per_s_at_256"},
                       {"target", whole(target_events_per_s)},
                       {"measured", whole(r.events_per_s)},
                       {"met", met}});
  }
  if (opt.admits > 0) {
    const bool met = admit.latency.p50_us < target_admit_p50_us;
    std::printf("target: admission p50 < %.0f us (single client): %.0f us  %s\n", target_admit_p50_us,
                admit.latency.p50_us, met ? "met" : "NOT met");
    targets.push_back({{"name", "admission_p50_us"},
                       {"target", whole(target_admit_p50_us)},
                       {"measured", whole(admit.latency.p50_us)},
                       {"met", met}});
  }

  if (!opt.out.empty()) {
    json::array scenarios;
    for (const auto& r : appends)
      scenarios.push_back({{"name", "append"},
                           {"backend", r.backend},
                           {"workload", to_string(r.load)},
                           {"appenders", r.appenders},
                           {"events", r.events},
                           {"seconds", r.seconds},
                           {"events_per_s", whole(r.events_per_s)},
                           {"commits", r.commits},
                           {"mean_batch", r.mean_batch},
                           {"writer_cpu_us_per_event", r.writer_cpu_us_per_event},
                           {"latency", to_json(r.latency)}});
    json::object doc{{"benchmark", "append"},
                     {"time", now_iso8601()},
                     {"quick", opt.quick},
                     {"hardware_concurrency", std::thread::hardware_concurrency()},
                     {"store", "sqlite (WAL, synchronous=FULL)"},
                     {"fdatasync", to_json(fsync)},
                     {"append", std::move(scenarios)},
                     {"targets", std::move(targets)}};
    if (opt.admits > 0)
      doc["admission"] = {{"client", "session_service::admit (record_only)"},
                          {"count", admit.count},
                          {"seconds", admit.seconds},
                          {"latency", to_json(admit.latency)}};
    const fs::path out = opt.out;
    if (out.has_parent_path()) fs::create_directories(out.parent_path(), ec);
    std::ofstream f(out);
    f << json::serialize(doc) << "\n";
    if (!f) {
      std::fprintf(stderr, "tether_bench: cannot write %s\n", opt.out.c_str());
      return 1;
    }
    std::printf("\nwrote %s\n", opt.out.c_str());
  }
  fs::remove_all(dir, ec);
  return 0;
}
