// tether_env_bench: what a lease costs, against a real sshd on loopback
// (tests/support/sshd.h) and the Daytona fake (tests/support/daytona/):
//   acquire   created (a key never seen), resumed (the key again after a
//             release: stop), re-attached (a new environment, as a Tether
//             restarted after a SIGKILL builds, for a lease never released)
//   sync      a 10 MiB workspace (64 files of 160 KiB, incompressible): the
//             first push, a push and a pull after one file changed, the stamps
//             that spare a transfer when nothing changed, and the
//             tree digest alone (describe_tree, done on every sync)
//   command   `true` run to its end through the lease's spawner
// All on this machine: the numbers are the kinds' own overhead (ssh's
// connection and tar, Daytona's REST round trips and the relay's polling),
// not a network's.
//
//   tether_env_bench [--rounds 10] [--out FILE.json] [--only ssh|daytona]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "bench_util.h"
#include "env/daytona/daytona.h"
#include "env/environment.h"
#include "env/errors.h"
#include "env/ssh/ssh.h"
#include "env/tree.h"
#include "process/run_to_end.h"
#include "support/daytona/fake_daytona.h"
#include "support/files.h"
#include "support/sshd.h"

#ifndef TETHER_BINARY
#error "TETHER_BINARY must name the built tether binary (the Daytona relay)"
#endif

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
namespace env = tether::env;
using tether::bench::micros;
using tether::bench::steady;

json::object row(const std::string& kind, const char* name, const std::vector<double>& us) {
  const auto s = tether::bench::summarize(us);
  std::printf("%-8s %-30s %6zu %10.1f %10.1f %10.1f\n", kind.c_str(), name, us.size(), s.p50_us / 1000, s.p90_us / 1000,
              s.max_us / 1000);
  auto o = tether::bench::to_json(s);
  o["kind"] = kind;
  o["name"] = name;
  o["rounds"] = us.size();
  return o;
}

template <class T>
T must(tether::result<T> r, const char* what) {
  if (!r) tether::bench::die(what, r.error());
  return std::move(*r);
}

void must(const tether::result<void>& r, const char* what) {
  if (!r) tether::bench::die(what, r.error());
}

void random_file(const fs::path& p, std::size_t bytes, std::mt19937_64& rng) {
  std::string data(bytes, '\0');
  for (std::size_t i = 0; i + 8 <= bytes; i += 8) {
    const auto v = rng();
    std::memcpy(data.data() + i, &v, 8);
  }
  tether::test::put(p, data);
}

void run_in(env::lease& l, std::vector<std::string> argv) {
  auto done = tether::process::run_to_end({.argv = std::move(argv)}, {.limit = std::chrono::seconds(60)}, l.spawner());
  if (!done || !done->status.success()) {
    std::fprintf(stderr, "a command in the lease failed: %s\n",
                 done ? done->output.c_str() : done.error().describe().c_str());
    std::exit(1);
  }
}

// Every measurement of one kind. `fresh()` builds a new environment object
// for the same provider (what a restarted Tether does).
template <class Fresh>
json::array measure(const std::string& kind, Fresh fresh, int rounds) {
  json::array rows;
  std::vector<double> created, resumed, reattached, command;
  auto e = fresh();
  for (int i = 0; i < rounds; ++i) {
    const std::string key = kind + "-bench-" + std::to_string(i);
    auto t0 = steady::now();
    auto l = must(e->acquire({.key = key, .labels = {{"session", key}}}), "acquire (created)");
    created.push_back(micros(steady::now() - t0));
    if (l->outcome() != env::lease_outcome::created)
      tether::bench::die("acquire", tether::error(env::env_errc::failed, "a new key was not created"));
    must(e->release(*l, env::release_mode::stop), "release");
    t0 = steady::now();
    auto again = must(e->acquire({.key = key}), "acquire (resumed)");
    resumed.push_back(micros(steady::now() - t0));
    // Never released: the next environment object finds it as it was left.
    auto other = fresh();
    t0 = steady::now();
    auto found = must(other->acquire({.key = key, .previous = again->provider_id()}), "acquire (re-attached)");
    reattached.push_back(micros(steady::now() - t0));
    if (found->provider_id() != again->provider_id())
      tether::bench::die("re-attach", tether::error(env::env_errc::failed, "another lease was found"));
    t0 = steady::now();
    run_in(*found, {"true"});
    command.push_back(micros(steady::now() - t0));
    must(other->release(*found, env::release_mode::destroy), "release (destroy)");
  }
  rows.push_back(row(kind, "acquire: created", created));
  rows.push_back(row(kind, "acquire: resumed", resumed));
  rows.push_back(row(kind, "acquire: re-attached", reattached));
  rows.push_back(row(kind, "command `true` to its end", command));

  tether::test::temp_dir host("tether-env-bench");
  const fs::path ws = host.path / "workspace";
  std::mt19937_64 rng(35);
  for (int f = 0; f < 64; ++f)
    random_file(ws / ("dir" + std::to_string(f % 8)) / ("f" + std::to_string(f)), 160 * 1024, rng);
  auto l = must(e->acquire({.key = kind + "-bench-sync"}), "acquire (sync)");
  std::vector<double> first, push_one, pull_one, digest, stamp_there, stamp_here;
  for (int i = 0; i < rounds; ++i) {
    auto t0 = steady::now();
    must(l->push(ws), "push");
    first.push_back(micros(steady::now() - t0));
    random_file(ws / "dir0/f0", 160 * 1024, rng);
    t0 = steady::now();
    must(l->push(ws), "push (one file changed)");
    push_one.push_back(micros(steady::now() - t0));
    run_in(*l, {"sh", "-c", "head -c 163840 /dev/urandom > dir1/f1"});
    t0 = steady::now();
    auto back = must(l->pull(ws), "pull (one file changed)");
    pull_one.push_back(micros(steady::now() - t0));
    if (back.bytes != 64U * 160 * 1024)
      tether::bench::die("pull", tether::error(env::env_errc::failed, "the pulled tree is not the whole workspace"));
    t0 = steady::now();
    (void)must(env::describe_tree(ws), "describe_tree");
    digest.push_back(micros(steady::now() - t0));
    // What a command that changed nothing costs instead of a pull: the two stamps.
    t0 = steady::now();
    (void)must(l->stamp(), "stamp there");
    stamp_there.push_back(micros(steady::now() - t0));
    t0 = steady::now();
    (void)must(env::stamp_tree(ws), "stamp_tree");
    stamp_here.push_back(micros(steady::now() - t0));
  }
  rows.push_back(row(kind, "push 10 MiB", first));
  rows.push_back(row(kind, "push 10 MiB, one file changed", push_one));
  rows.push_back(row(kind, "pull 10 MiB, one file changed", pull_one));
  rows.push_back(row(kind, "describe_tree 10 MiB", digest));
  rows.push_back(row(kind, "stamp there, 10 MiB", stamp_there));
  rows.push_back(row(kind, "stamp_tree, 10 MiB", stamp_here));
  must(e->release(*l, env::release_mode::destroy), "release (sync)");
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 10;
  std::string out, only;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--rounds" || a == "--out" || a == "--only") && i + 1 < argc) {
      const std::string v = argv[++i];
      if (a == "--rounds") rounds = std::stoi(v);
      if (a == "--out") out = v;
      if (a == "--only") only = v;
    } else {
      std::fprintf(stderr, "usage: tether_env_bench [--rounds 10] [--out FILE.json] [--only ssh|daytona]\n");
      return 2;
    }
  }
  std::printf("leases and workspace sync on this machine (milliseconds)\n");
  std::printf("%-8s %-30s %6s %10s %10s %10s\n", "kind", "", "rounds", "p50", "p90", "max");
  json::array rows;
  if (only.empty() || only == "ssh") {
    auto server = must(tether::test::sshd::start(), "starting sshd");
    const auto options = server->options();
    auto got = measure(
        "ssh", [&] { return must(env::ssh::make_environment(options), "ssh environment"); }, rounds);
    rows.insert(rows.end(), got.begin(), got.end());
  }
  if (only.empty() || only == "daytona") {
    tether::test::daytona::fake_daytona fake;
    must(fake.start(), "starting the Daytona fake");
    env::daytona::daytona_options o;
    o.name = "bench";
    o.api_url = fake.api_url();
    o.api_key = "fake-daytona-key";
    o.relay_program = TETHER_BINARY;
    auto got = measure(
        "daytona", [&] { return must(env::daytona::make_environment(o), "daytona environment"); }, rounds);
    rows.insert(rows.end(), got.begin(), got.end());
  }
  if (!out.empty()) std::ofstream(out) << json::serialize(json::object{{"rows", rows}}) << "\n";
  return 0;
}
