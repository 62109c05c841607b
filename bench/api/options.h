// tether_api_bench's command line.
#pragma once

#include <cstddef>
#include <string>

namespace tether::bench::api {

struct options {
  int startup_runs = 5;
  int latency_turns = 50;
  std::size_t sessions_small = 20;
  std::size_t sessions_large = 1000;
  int turns = 3;
  bool quick = false;
  bool keep = false;
  std::string out;
  std::string dir;
  std::string store;  // the servers' store (empty: SQLite)
};

void usage();
// Fills `o` from argv; false on a bad argument (then print usage()).
bool parse_args(int argc, char** argv, options& o);

}  // namespace tether::bench::api
