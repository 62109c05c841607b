// tether_api_bench: `tether serve` measured as a black box over HTTP, against
// a separate `tether mock-llm` (the scripted model), both the real binary.
//
//   startup   fork → the "listening on" line, and fork → the first 200 from
//             GET /v1/health, each on a fresh data directory; median and max.
//   idle      VmRSS of a fresh server one second after it is ready.
//   latency   one session, turns one after the other ("Reply with exactly:
//             …"): POST …/inputs → that session's execution.finished on the
//             global event stream. The model's own time per turn (its
//             recorded completed_us − received_us) is subtracted per turn to
//             give Tether's overhead.
//   load      N sessions at once, each running its turns one after the other
//             (N = 20 and --sessions-large), a fresh server each: turns/s,
//             turn latency, the server's peak RSS (VmHWM), and the scheduler
//             latency: the 202 of the admission → the model receiving that
//             turn's request. Turns are matched to the model's requests by
//             the session id and turn number in the prompt.
//
// The client is one thread running one io_context: a keep-alive connection
// per session and ONE `GET /v1/events` SSE stream that reports every
// completion (no polling). Times on both sides are CLOCK_MONOTONIC
// (steady_clock) microseconds, comparable across processes. Processes are
// started with the harness's process layer; mock-llm once, serve once per
// scenario. The table goes to stdout; --out writes JSON.
//
// The parts: api/options (the command line), api/load (the load driver and
// the start-up runs), api/serve_process (the server processes), api/turns
// (the model's and the server's side of each turn), api/measures (statistics
// and /proc), api/report (table and JSON).
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <boost/json.hpp>

#include "api/load.h"
#include "api/options.h"
#include "bench_util.h"
#include "e2e/run/process.h"

namespace json = boost::json;
namespace fs = std::filesystem;
namespace e2e = tether::e2e;
using namespace tether::bench::api;
using tether::bench::now_iso8601;
using tether::bench::whole;
using namespace std::chrono_literals;

int main(int argc, char** argv) {
  options opt;
  if (!parse_args(argc, argv, opt)) {
    usage();
    return 2;
  }

  // 1,000+ sockets here, and as many in the server (it inherits the limit).
  rlimit nofile{};
  ::getrlimit(RLIMIT_NOFILE, &nofile);
  nofile.rlim_cur = nofile.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &nofile);
  ::getrlimit(RLIMIT_NOFILE, &nofile);
  if (nofile.rlim_cur < 2 * opt.sessions_large + 64)
    std::fprintf(stderr, "tether_api_bench: warning: RLIMIT_NOFILE is %llu, %zu sessions need about %zu\n",
                 static_cast<unsigned long long>(nofile.rlim_cur), opt.sessions_large, 2 * opt.sessions_large + 64);

  std::error_code ec;
  const fs::path base = opt.dir.empty() ? fs::temp_directory_path() : fs::path(opt.dir);
  fs::create_directories(base, ec);
  std::string tmpl = (base / "tether-api-bench-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  environment env;
  env.dir = tmpl;
  const std::string load_start = load_average();

  int rc = 0;
  json::object doc;
  try {
    auto started =
        e2e::child_process::start({tether_binary(), "mock-llm", "--listen", "127.0.0.1:0"}, env.dir / "mock.log");
    if (!started) throw std::runtime_error(started.error().message);
    auto& mock = **started;
    const auto line = mock.wait_line("mock-llm listening on ", 20s);
    if (!line) throw std::runtime_error(line.error().message);
    env.mock_port = static_cast<unsigned short>(std::stoi(line->substr(line->rfind(':') + 1)));
    env.mock_pid = mock.pid();
    env.config = env.dir / "tether.toml";
    {
      std::ofstream cfg(env.config);
      if (!opt.store.empty()) cfg << "store = \"" << opt.store << "\"\n";
      cfg << "[profiles.default]\nprovider = \"openai-chat\"\nbase_url = \"http://127.0.0.1:" << env.mock_port
          << "/v1\"\nmodel = \"scripted\"\n";
    }

    std::printf(
        "tether_api_bench: %s vs mock-llm, store %s, %u CPUs, load average %s, RLIMIT_NOFILE %llu%s\n  in %s\n\n",
        tether_binary().c_str(), opt.store.empty() ? "SQLite" : "PostgreSQL", std::thread::hardware_concurrency(),
        load_start.c_str(), static_cast<unsigned long long>(nofile.rlim_cur), opt.quick ? " [quick]" : "",
        env.dir.c_str());

    // 1. start-up
    const auto st = run_startups(env, opt.startup_runs);
    std::printf("start-up, %d runs on fresh data dirs     median      max\n", opt.startup_runs);
    std::printf("  fork → \"listening on\"              %8.1f ms %6.1f ms\n", ms(median(st.listening_us)),
                ms(maximum(st.listening_us)));
    std::printf("  fork → first 200 GET /v1/health      %8.1f ms %6.1f ms\n", ms(median(st.health_us)),
                ms(maximum(st.health_us)));
    std::printf("  SIGTERM → exit (idle)                %8.1f ms %6.1f ms\n\n", ms(median(st.stop_us)),
                ms(maximum(st.stop_us)));
    std::fflush(stdout);

    // 2 + 3. idle RSS, then one session's turns on the same fresh server
    std::printf("%-22s %6s %6s %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s\n", "scenario (ms)", "turns", "ok",
                "seconds", "turns/s", "lat p50", "lat p95", "lat p99", "model50", "ovh p50", "ovh p95", "ovh p99",
                "sch p50", "sch p99", "peakMB");
    std::printf("%s\n", std::string(157, '-').c_str());
    std::vector<run_result> runs;
    runs.push_back(
        run_scenario(env, "1 session x " + std::to_string(opt.latency_turns), 1, opt.latency_turns, idle_rss::measure));
    print_row(runs.back());
    // 4. concurrent sessions, a fresh server each
    for (const auto n : {opt.sessions_small, opt.sessions_large}) {
      runs.push_back(run_scenario(env, std::to_string(n) + " sessions x " + std::to_string(opt.turns), n, opt.turns,
                                  idle_rss::skip));
      print_row(runs.back());
    }
    std::printf("\nidle RSS one second after start: %.1f MB\n", runs.front().idle_rss_mb);
    for (const auto& r : runs) print_details(r);

    // Targets (issue 4).
    json::array targets;
    auto target = [&](const std::string& name, const std::string& what, double limit, double measured, bool below) {
      const bool met = below ? measured < limit : measured > limit;
      std::printf("target: %-52s %s %8.1f: %10.1f  %s\n", what.c_str(), below ? "<" : ">", limit, measured,
                  met ? "met" : "NOT met");
      targets.push_back({{"name", name}, {"target", limit}, {"measured", measured}, {"below", below}, {"met", met}});
    };
    std::printf("\n");
    const auto& one = runs[0];
    const auto& small = runs[1];
    const auto& large = runs[2];
    const std::string nl = std::to_string(large.sessions);
    target("single_session_overhead_p50_ms", "overhead per turn p50, 1 session (ms)", 5, ms(one.overhead.p50), true);
    target("single_session_overhead_p95_ms", "overhead per turn p95, 1 session (ms)", 5, ms(one.overhead.p95), true);
    target("turns_per_s_at_" + std::to_string(small.sessions),
           "turns/s at " + std::to_string(small.sessions) + " sessions", 500, small.turns_per_s, false);
    target("scheduler_p99_ms_at_" + nl, "scheduler latency p99 at " + nl + " sessions (ms)", 250,
           ms(large.scheduler.p99), true);
    target("turn_latency_p99_ms_at_" + nl, "turn latency p99 at " + nl + " sessions (ms)", 250, ms(large.latency.p99),
           true);
    target("peak_rss_mb_at_" + nl, "server peak RSS at " + nl + " sessions (MB)", 300, large.peak_rss_mb, true);

    json::array scenarios;
    for (const auto& r : runs) scenarios.push_back(to_json(r));
    json::array exits;
    for (int s : st.exit_status) exits.push_back(s);
    doc = {{"benchmark", "api"},
           {"time", now_iso8601()},
           {"quick", opt.quick},
           {"hardware_concurrency", std::thread::hardware_concurrency()},
           {"load_average_start", load_start},
           {"load_average_end", load_average()},
           {"rlimit_nofile", static_cast<std::uint64_t>(nofile.rlim_cur)},
           {"binary", tether_binary()},
           {"store", opt.store.empty() ? "sqlite" : "postgres"},
           {"startup",
            {{"runs", opt.startup_runs},
             {"to_listening_median_us", whole(median(st.listening_us))},
             {"to_listening_max_us", whole(maximum(st.listening_us))},
             {"to_health_median_us", whole(median(st.health_us))},
             {"to_health_max_us", whole(maximum(st.health_us))},
             {"sigterm_to_exit_median_us", whole(median(st.stop_us))},
             {"exit_status", std::move(exits)}}},
           {"idle_rss_mb", one.idle_rss_mb},
           {"scenarios", std::move(scenarios)},
           {"targets", std::move(targets)}};
    mock.signal(SIGTERM);
    mock.wait(10s);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tether_api_bench: %s (logs kept in %s)\n", e.what(), env.dir.c_str());
    return 1;
  }

  if (!opt.out.empty()) {
    const fs::path out = opt.out;
    if (out.has_parent_path()) fs::create_directories(out.parent_path(), ec);
    std::ofstream f(out);
    f << json::serialize(doc) << "\n";
    if (!f) {
      std::fprintf(stderr, "tether_api_bench: cannot write %s\n", opt.out.c_str());
      rc = 1;
    } else {
      std::printf("\nwrote %s\n", opt.out.c_str());
    }
  }
  if (!opt.keep)
    fs::remove_all(env.dir, ec);
  else
    std::printf("kept %s\n", env.dir.c_str());
  return rc;
}
