// The `tether serve` processes tether_api_bench measures: started on a fresh
// data directory, their stdout kept drained, stopped with SIGTERM, and their
// logs scanned for warnings and errors. Started through the harness's
// process layer (e2e/run/process.h); errors are exceptions (a benchmark
// that cannot start its server has nothing to report).
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "e2e/run/process.h"

namespace tether::bench::api {

// serve logs to stdout after its "listening on" line; nobody else reads the
// pipe, so a thread keeps it drained (a full pipe would block the server)
// and keeps the lines for scan_log.
class stdout_drain {
 public:
  explicit stdout_drain(e2e::child_process* proc);
  ~stdout_drain();
  stdout_drain(const stdout_drain&) = delete;
  stdout_drain& operator=(const stdout_drain&) = delete;
  // Joins the thread; the child must not be touched by others before.
  void stop();
  // After the child exited: what it wrote last.
  void finish();
  [[nodiscard]] const std::vector<std::string>& lines() const { return lines_; }

 private:
  void run();
  e2e::child_process* proc_;
  std::vector<std::string> lines_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

struct server_proc {
  std::unique_ptr<e2e::child_process> proc;
  std::unique_ptr<stdout_drain> drain;
  std::filesystem::path data;
  std::filesystem::path log;
  unsigned short port = 0;
  std::string token;
  double to_listening_us = 0;
  double to_health_us = 0;
};

// Starts serve and waits for its first 200 from GET /v1/health.
server_proc start_server(const std::filesystem::path& data, const std::filesystem::path& config,
                         const std::filesystem::path& log);

struct stop_result {
  int status = 0;  // exit status; 128+signal; -1 when it had to be killed
  double us = 0;   // SIGTERM → exit
};

stop_result stop_server(server_proc& s);

// Warning and error lines of a server's output, stdout and stderr
// (util/log: "TIME LEVEL message"), the first few kept verbatim.
struct log_findings {
  std::size_t lines = 0;
  std::size_t warnings = 0;
  std::size_t errors = 0;
  std::vector<std::string> samples;
};

log_findings scan_log(const server_proc& srv);

// The tether binary (a compile definition; $TETHER_TEST_BINARY overrides it).
std::string tether_binary();

}  // namespace tether::bench::api
