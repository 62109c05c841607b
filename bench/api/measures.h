// What tether_api_bench measures with: latency statistics and samples of
// /proc (memory, CPU per process and per thread, the load average).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json.hpp>

#include "bench_util.h"

namespace tether::bench::api {

// Statistics in microseconds; may be negative for cross-process deltas.
struct stats {
  std::size_t count = 0;
  double p50 = 0, p95 = 0, p99 = 0, max = 0, mean = 0;
};

stats summarize(std::vector<double> v);
boost::json::object to_json(const stats& s);
inline double ms(double us) { return us / 1000.0; }
// A steady_clock time as microseconds since its epoch (CLOCK_MONOTONIC, as
// the scripted model records its own times).
std::int64_t mono_us(steady::time_point t);
double median(std::vector<double> v);
double maximum(const std::vector<double>& v);

// /proc/PID/status's value for `key` ("VmRSS:", "VmHWM:") in MB.
std::optional<double> status_mb(pid_t pid, std::string_view key);
// utime + stime of a process, in seconds.
double process_cpu_s(pid_t pid);

struct thread_cpu {
  int tid = 0;
  std::string name;
  double seconds = 0;
};

std::map<int, thread_cpu> threads_of(pid_t pid);
// CPU per thread between two samples, busiest first.
std::vector<thread_cpu> busiest(const std::map<int, thread_cpu>& before, const std::map<int, thread_cpu>& after);
double self_cpu_s();
std::string load_average();

}  // namespace tether::bench::api
