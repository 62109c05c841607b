// tether_sse_memory_bench: what stalled event-stream readers cost a real
// `tether serve`. For N readers that connect with a tiny receive buffer and
// then read nothing, it admits large inputs (each becomes one large durable
// event every reader's stream must carry) and reports the server's RSS
// before, at its peak, and some seconds after the readers left (freed memory
// is handed back by the server's malloc_trim timer), with the bytes the
// server says it holds for them (tether_sse_queued_bytes,
// tether_tail_buffered_bytes).
//
//   tether_sse_memory_bench [--readers 20,40] [--inputs 60] [--bytes 60000] [--out FILE.json]
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <boost/json.hpp>

#include "server/harness.h"
#include "support/loopback.h"

namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

double rss_mb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("VmRSS:")) return std::stod(line.substr(6)) / 1024.0;
  return 0;
}

double metric(tether::e2e::cluster& c, const std::string& name) {
  const auto m = c.call_raw("GET", "/metrics", "");
  std::istringstream in(m.body);
  for (std::string line; std::getline(in, line);)
    if (line.starts_with(name + " ")) return std::stod(line.substr(name.size() + 1));
  return 0;
}

int stalled_reader(unsigned short port, const std::string& token, const std::string& session) {
  const int fd = tether::test::connect_loopback(port, 4096);
  if (fd < 0) return -1;
  const std::string req = "GET /v1/sessions/" + session +
                          "/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + token +
                          "\r\nAccept: text/event-stream\r\n\r\n";
  if (::write(fd, req.data(), req.size()) != static_cast<ssize_t>(req.size())) {
    ::close(fd);
    return -1;
  }
  return fd;
}

struct row {
  int readers = 0;
  double idle = 0, peak = 0, after = 0;
  double queued_mb = 0, buffered_mb = 0;
};

row run(int readers, int inputs, std::size_t bytes) {
  tether::e2e::cluster c;
  row r;
  r.readers = readers;
  const auto pid = c.server().pid();
  const auto s = c.create_session();
  r.idle = rss_mb(pid);
  std::vector<int> fds;
  for (int i = 0; i < readers; ++i) fds.push_back(stalled_reader(c.port(), c.token(), s));
  const std::string text(bytes, 'x');
  for (int i = 0; i < inputs; ++i) {
    c.call("POST", "/v1/sessions/" + s + "/inputs", json::object{{"text", text}, {"resume", false}});
    r.peak = std::max(r.peak, rss_mb(pid));
    r.queued_mb = std::max(r.queued_mb, metric(c, "tether_sse_queued_bytes") / 1048576.0);
    r.buffered_mb = std::max(r.buffered_mb, metric(c, "tether_tail_buffered_bytes") / 1048576.0);
  }
  for (const int fd : fds)
    if (fd >= 0) ::close(fd);
  std::this_thread::sleep_for(7s);  // the server trims every 5 s
  r.after = rss_mb(pid);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> counts{20, 40};
  int inputs = 60;
  std::size_t bytes = 60'000;
  std::string out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--readers") {
      counts.clear();
      std::stringstream list(next());
      for (std::string n; std::getline(list, n, ',');) counts.push_back(std::stoi(n));
    } else if (a == "--inputs") {
      inputs = std::stoi(next());
    } else if (a == "--bytes") {
      bytes = static_cast<std::size_t>(std::stoul(next()));
    } else if (a == "--out") {
      out = next();
    } else {
      std::fprintf(
          stderr, "usage: tether_sse_memory_bench [--readers 20,40] [--inputs 60] [--bytes 60000] [--out FILE.json]\n");
      return 2;
    }
  }
  std::printf("%d inputs of %zu bytes; stalled readers with a 4 KiB receive buffer\n", inputs, bytes);
  std::printf("%8s %10s %10s %10s %12s %12s\n", "readers", "idle MB", "peak MB", "after MB", "queued MB", "tails MB");
  json::array rows;
  for (const int n : counts) {
    const auto r = run(n, inputs, bytes);
    std::printf("%8d %10.1f %10.1f %10.1f %12.1f %12.1f\n", r.readers, r.idle, r.peak, r.after, r.queued_mb,
                r.buffered_mb);
    std::fflush(stdout);
    rows.push_back(json::object{{"readers", r.readers},
                                {"rss_idle_mb", r.idle},
                                {"rss_peak_mb", r.peak},
                                {"rss_after_mb", r.after},
                                {"sse_queued_peak_mb", r.queued_mb},
                                {"tail_buffered_peak_mb", r.buffered_mb}});
  }
  if (!out.empty()) {
    std::ofstream f(out);
    f << json::serialize(json::object{{"inputs", inputs}, {"bytes", bytes}, {"rows", rows}}) << "\n";
  }
  return 0;
}
