// tether_process_bench: what a child costs through the process layer. For a
// trivial child (/bin/true), the time from spawn() to its exit being seen and
// reaped, three ways: the asynchronous child (pidfd wait on an io_context),
// the same without a pidfd (the 20 ms polling fallback, fewer rounds), and
// the synchronous run_to_end. Also the spawn() call alone (fork + exec
// confirmed through the status pipe).
//
//   tether_process_bench [--rounds 500] [--out FILE.json]
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include "bench_util.h"
#include "process/child.h"
#include "process/run_to_end.h"

namespace {

namespace asio = boost::asio;
namespace json = boost::json;
namespace process = tether::process;
using tether::bench::micros;
using tether::bench::steady;

process::spawn_options trivial() {
  process::spawn_options o;
  o.argv = {"/bin/true"};
  o.stdout_mode = process::output::null;
  o.stderr_mode = process::output::null;
  return o;
}

// Spawns through the real spawner; drops the pidfd when asked (the fallback).
class bench_spawner final : public process::spawner {
 public:
  bool drop_pidfd = false;
  std::vector<double> spawn_us;
  tether::result<process::spawned> spawn(const process::spawn_options& o) override {
    const auto t0 = steady::now();
    auto s = process::system_spawner().spawn(o);
    spawn_us.push_back(micros(steady::now() - t0));
    if (s && drop_pidfd) s->pidfd.reset();
    return s;
  }
};

// main owns `s` and `out` and runs the io_context to the end.
asio::awaitable<void> spawn_and_wait(bench_spawner* s, std::vector<double>* out, int rounds) {
  const auto ex = co_await asio::this_coro::executor;
  for (int i = 0; i < rounds; ++i) {
    const auto t0 = steady::now();
    auto c = process::child::start(ex, trivial(), *s);
    if (!c) tether::bench::die("spawn", c.error());
    const auto status = co_await (*c)->wait();
    out->push_back(micros(steady::now() - t0));
    if (!status.success()) std::fprintf(stderr, "unexpected: %s\n", status.describe().c_str());
  }
}

json::object row(const char* name, const std::vector<double>& us) {
  const auto s = tether::bench::summarize(us);
  std::printf("%-28s %7zu %10.0f %10.0f %10.0f %10.0f\n", name, us.size(), s.p50_us, s.p90_us, s.p99_us, s.max_us);
  auto o = tether::bench::to_json(s);
  o["name"] = name;
  o["rounds"] = us.size();
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 500;
  std::string out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--rounds" || a == "--out") && i + 1 < argc) {
      const std::string v = argv[++i];
      if (a == "--rounds") rounds = std::stoi(v);
      if (a == "--out") out = v;
    } else {
      std::fprintf(stderr, "usage: tether_process_bench [--rounds 500] [--out FILE.json]\n");
      return 2;
    }
  }
  asio::io_context io;
  bench_spawner pidfd;
  std::vector<double> async_us;
  asio::co_spawn(io, spawn_and_wait(&pidfd, &async_us, rounds), asio::detached);
  io.run();
  io.restart();
  bench_spawner polling;
  polling.drop_pidfd = true;
  std::vector<double> polled_us;
  asio::co_spawn(io, spawn_and_wait(&polling, &polled_us, std::max(1, rounds / 10)), asio::detached);
  io.run();
  std::vector<double> sync_us;
  for (int i = 0; i < rounds; ++i) {
    const auto t0 = steady::now();
    auto done = process::run_to_end(trivial());
    if (!done) tether::bench::die("run_to_end", done.error());
    sync_us.push_back(micros(steady::now() - t0));
  }

  std::printf("/bin/true, spawn to reaped exit (microseconds)\n");
  std::printf("%-28s %7s %10s %10s %10s %10s\n", "", "rounds", "p50", "p90", "p99", "max");
  json::array rows;
  rows.push_back(row("spawn() alone", pidfd.spawn_us));
  rows.push_back(row("child: pidfd wait", async_us));
  rows.push_back(row("child: polling, no pidfd", polled_us));
  rows.push_back(row("run_to_end", sync_us));
  if (!out.empty()) std::ofstream(out) << json::serialize(json::object{{"rows", rows}}) << "\n";
  return 0;
}
