// tether_api_bench's load driver: scenarios of N sessions at once, each
// running its turns one after the other against a fresh `tether serve`, and
// the start-up runs.
//
// The client is one thread running one io_context: a keep-alive connection
// per session and ONE `GET /v1/events` SSE stream (read with the shared
// event-stream parser, http/sse_parser.h) that reports every completion (no
// polling). Times on both sides are CLOCK_MONOTONIC (steady_clock)
// microseconds, comparable across processes.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "api/report.h"

namespace tether::bench::api {

struct environment {
  std::filesystem::path dir;
  std::filesystem::path config;
  unsigned short mock_port = 0;
  pid_t mock_pid = 0;
  std::size_t mock_mark = 0;
  int servers = 0;
  boost::asio::io_context ioc{1};
};

// Runs `sessions` sessions of `turns` turns each on a fresh server; with
// idle_rss::measure, samples its RSS one second after start first.
enum class idle_rss { skip, measure };
run_result run_scenario(environment& env, const std::string& name, std::size_t sessions, int turns, idle_rss idle);

struct startup_result {
  std::vector<double> listening_us, health_us, stop_us;
  std::vector<int> exit_status;
};

// Starts and stops `runs` servers on fresh data directories.
startup_result run_startups(environment& env, int runs);

}  // namespace tether::bench::api
