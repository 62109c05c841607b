#include "api/measures.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tether::bench::api {

namespace json = boost::json;
namespace fs = std::filesystem;

stats summarize(std::vector<double> v) {
  const std::size_t count = v.size();
  const auto l = tether::bench::summarize(std::move(v));
  return stats{count, l.p50_us, l.p95_us, l.p99_us, l.max_us, l.mean_us};
}

json::object to_json(const stats& s) {
  return {{"count", s.count},       {"p50_us", whole(s.p50)}, {"p95_us", whole(s.p95)},
          {"p99_us", whole(s.p99)}, {"max_us", whole(s.max)}, {"mean_us", whole(s.mean)}};
}

std::int64_t mono_us(steady::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

std::optional<double> status_mb(pid_t pid, std::string_view key) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.starts_with(key)) return std::strtod(line.c_str() + key.size(), nullptr) / 1024.0;
  return std::nullopt;
}

namespace {

// A /proc/…/stat line: the name and utime + stime in seconds.
std::optional<std::pair<std::string, double>> read_stat(const fs::path& path) {
  std::ifstream in(path);
  std::string s;
  if (!std::getline(in, s)) return std::nullopt;
  const auto open = s.find('(');
  const auto close = s.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close + 2 > s.size()) return std::nullopt;
  std::istringstream rest(s.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 13; ++i) rest >> field;  // state … cmajflt
  long utime = 0;
  long stime = 0;
  rest >> utime >> stime;
  static const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  return std::make_pair(s.substr(open + 1, close - open - 1), static_cast<double>(utime + stime) / ticks);
}

}  // namespace

double process_cpu_s(pid_t pid) {
  auto r = read_stat("/proc/" + std::to_string(pid) + "/stat");
  return r ? r->second : 0;
}

std::map<int, thread_cpu> threads_of(pid_t pid) {
  std::map<int, thread_cpu> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    const int tid = std::atoi(e.path().filename().c_str());
    if (auto r = read_stat(e.path() / "stat")) out[tid] = thread_cpu{tid, r->first, r->second};
  }
  return out;
}

std::vector<thread_cpu> busiest(const std::map<int, thread_cpu>& before, const std::map<int, thread_cpu>& after) {
  std::vector<thread_cpu> out;
  for (const auto& [tid, t] : after) {
    auto d = t;
    if (auto it = before.find(tid); it != before.end()) d.seconds -= it->second.seconds;
    out.push_back(d);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.seconds > b.seconds; });
  return out;
}

double self_cpu_s() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return s(ru.ru_utime) + s(ru.ru_stime);
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 2];
}

double maximum(const std::vector<double>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }

}  // namespace tether::bench::api
