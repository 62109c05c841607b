#include "api/serve_process.h"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <map>
#include <stdexcept>
#include <thread>

#include "bench_util.h"
#include "client/client.h"

namespace tether::bench::api {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string tether_binary() {
  const char* b = std::getenv("TETHER_TEST_BINARY");
  return b != nullptr && *b != '\0' ? b : TETHER_BINARY;
}

stdout_drain::stdout_drain(e2e::child_process* proc) : proc_(proc), thread_([this] { run(); }) {}

stdout_drain::~stdout_drain() { stop(); }

void stdout_drain::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void stdout_drain::finish() {
  stop();
  for (;;) {
    auto line = proc_->wait_line("", 20ms);
    if (!line) break;
    lines_.push_back(std::move(*line));
  }
}

void stdout_drain::run() {
  while (!stop_) {
    auto line = proc_->wait_line("", 50ms);
    if (line) {
      lines_.push_back(std::move(*line));
    } else if (line.error().message.find("exited") != std::string::npos) {
      break;
    }
  }
}

server_proc start_server(const fs::path& data, const fs::path& config, const fs::path& log) {
  server_proc s;
  s.data = data;
  s.log = log;
  const std::vector<std::string> argv{tether_binary(), "serve",         "--data",   data.string(),
                                      "--config",      config.string(), "--listen", "127.0.0.1:0"};
  const std::map<std::string, std::string> env{{"NO_PROXY", "127.0.0.1"}, {"no_proxy", "127.0.0.1"}};
  const auto t0 = steady::now();
  auto proc = e2e::child_process::start(argv, log, env);
  if (!proc) throw std::runtime_error(proc.error().message);
  s.proc = std::move(*proc);
  const auto line = s.proc->wait_line("listening on ", 30s);
  if (!line) throw std::runtime_error(line.error().message);
  const auto t1 = steady::now();
  s.port = static_cast<unsigned short>(std::stoi(line->substr(line->rfind(':') + 1)));
  client::client_options o;
  o.server = "http://127.0.0.1:" + std::to_string(s.port);
  o.connect_timeout = 1s;
  client::api_client health(o);
  for (;;) {
    if (auto r = health.raw("GET", "/v1/health"); r && r->status == 200) break;
    if (steady::now() - t1 > 10s) throw std::runtime_error("GET /v1/health never answered 200");
    std::this_thread::sleep_for(200us);
  }
  const auto t2 = steady::now();
  s.drain = std::make_unique<stdout_drain>(s.proc.get());
  s.to_listening_us = micros(t1 - t0);
  s.to_health_us = micros(t2 - t0);
  std::ifstream in(data / "token");
  std::getline(in, s.token);
  return s;
}

stop_result stop_server(server_proc& s) {
  s.drain->stop();
  const auto t0 = steady::now();
  s.proc->signal(SIGTERM);
  stop_result r;
  r.status = s.proc->wait(30s).value_or(-1);
  r.us = micros(steady::now() - t0);
  s.drain->finish();
  return r;
}

log_findings scan_log(const server_proc& srv) {
  log_findings f;
  std::vector<std::string> all = srv.drain->lines();
  std::ifstream in(srv.log);
  for (std::string line; std::getline(in, line);) all.push_back(line);
  f.lines = all.size();
  for (const auto& line : all) {
    const auto sp = line.find(' ');
    const auto level = sp == std::string::npos ? std::string() : line.substr(sp + 1, line.find(' ', sp + 1) - sp - 1);
    const bool err = level == "error" || level == "critical";
    const bool warn = level == "warning";
    if (!err && !warn) continue;
    (err ? f.errors : f.warnings)++;
    if (f.samples.size() < 5) f.samples.push_back(line.substr(0, 300));
  }
  return f;
}

}  // namespace tether::bench::api
