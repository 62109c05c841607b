// What one tether_api_bench scenario measured, as a table row, details and
// JSON.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "api/measures.h"
#include "api/serve_process.h"
#include "api/turns.h"

namespace tether::bench::api {

struct run_result {
  std::string name;
  std::size_t sessions = 0;
  int turns_per_session = 0;
  std::size_t turns = 0;
  std::size_t turns_ok = 0;  // execution.finished with outcome succeeded
  double seconds = 0;        // first POST → last execution.finished
  double turns_per_s = 0;
  stats latency;    // POST sent → execution.finished received
  stats admission;  // POST sent → 202 received
  stats scheduler;  // 202 received → the model received the turn's request
  stats dispatch;   // POST sent → the model received the turn's request
  stats model;      // the model's own time for the turn
  stats overhead;   // latency − model
  stats finish;     // the model's response complete → execution.finished received
  double idle_rss_mb = 0;
  double rss_end_mb = 0;
  double peak_rss_mb = 0;
  double server_cpu_s = 0;
  double mock_cpu_s = 0;
  double client_cpu_s = 0;
  std::vector<thread_cpu> threads;
  model_match model_requests;
  std::size_t turns_without_model_request = 0;
  std::size_t turns_with_retries = 0;
  std::map<std::string, std::size_t> event_counts;
  std::map<unsigned, std::size_t> statuses;
  std::map<std::string, double> metrics;  // the server's, after the turns
  std::uint64_t event_bytes = 0;
  std::size_t error_count = 0;
  std::vector<std::string> errors;
  stop_result stop;
  log_findings log;
  bool completed = false;
  std::string load_before;
};

boost::json::object to_json(const run_result& r);
// One row of the scenario table (its header is printed by main).
void print_row(const run_result& r);
// The lines under the table: latencies split by stage, CPU, errors.
void print_details(const run_result& r);

}  // namespace tether::bench::api
