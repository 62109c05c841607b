// The turns tether_api_bench drives, and what the other two sides say about
// them: the scripted model's recorded requests (matched to turns by the
// session id and turn number in the prompt) and the server's own counters.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "bench_util.h"

namespace tether::bench::api {

struct turn {
  std::size_t session = 0;
  int number = 0;  // 1-based
  steady::time_point sent, admitted, finished;
  unsigned status = 0;  // of the POST
  std::string outcome;  // of execution.finished
  bool done = false;
  // From the model's recorded requests that carry this turn's prompt.
  int model_requests = 0;
  std::int64_t model_received_us = 0;   // the first one
  std::int64_t model_us = 0;            // Σ completed_us − received_us
  std::int64_t model_completed_us = 0;  // the last one
};

// The prompt of turn k of a session: the scripted model replies with it.
std::string prompt(const std::string& session, int k);

struct model_match {
  std::size_t requests = 0;    // recorded in this scenario
  std::size_t unmatched = 0;   // carrying no prompt of ours
  std::size_t incomplete = 0;  // no completed_us
};

// Fetches the model's requests recorded after `*mark` and fills the turns'
// model fields (`session_ids[t.session]` names a turn's session); `*mark`
// moves to the last seq seen. Throws when the model does not answer.
model_match match_model_requests(unsigned short mock_port, std::size_t* mark, std::vector<turn>& turns,
                                 const std::vector<std::string>& session_ids);

// Every sample of the server's Prometheus text (GET /metrics) but histogram
// buckets, by its full name with labels; empty when it cannot be read.
std::map<std::string, double> server_metrics(unsigned short port, const std::string& token);
double metric(const std::map<std::string, double>& m, const std::string& name);

}  // namespace tether::bench::api
