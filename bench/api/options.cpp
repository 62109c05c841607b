#include "api/options.h"

#include <cstdio>
#include <cstdlib>

namespace tether::bench::api {

void usage() {
  std::puts(
      "usage: tether_api_bench [--sessions-large N] [--turns N] [--quick] [--out FILE.json] [--dir DIR] [--keep]\n"
      "                        [--store URL]\n"
      "  --sessions-large  sessions at once in the large load scenario (default 1000)\n"
      "  --turns           turns per session in the load scenarios (default 3)\n"
      "  --quick           a smoke run: 3 start-ups, 10 single-session turns, 100 large sessions\n"
      "  --out             write results as JSON to this file\n"
      "  --dir             where to put data directories and logs (default: the system temp dir)\n"
      "  --keep            keep the data directories and server logs\n"
      "  --store           the servers' store: a PostgreSQL URL (default: SQLite in each data directory)");
}

bool parse_args(int argc, char** argv, options& o) {
  bool large_set = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (a == "--help" || a == "-h") {
      usage();
      std::exit(0);
    } else if (a == "--quick") {
      o.quick = true;
    } else if (a == "--keep") {
      o.keep = true;
    } else if (a == "--sessions-large" || a == "--turns" || a == "--out" || a == "--dir" || a == "--store") {
      const char* v = next();
      if (v == nullptr) return false;
      if (a == "--sessions-large") {
        o.sessions_large = std::strtoull(v, nullptr, 10);
        large_set = true;
      } else if (a == "--turns") {
        o.turns = std::atoi(v);
      } else if (a == "--out") {
        o.out = v;
      } else if (a == "--store") {
        o.store = v;
      } else {
        o.dir = v;
      }
    } else {
      std::fprintf(stderr, "unknown argument: %s\n", a.c_str());
      return false;
    }
  }
  if (o.quick) {
    o.startup_runs = 3;
    o.latency_turns = 10;
    if (!large_set) o.sessions_large = 100;
  }
  return o.sessions_large > 0 && o.turns > 0;
}

}  // namespace tether::bench::api
