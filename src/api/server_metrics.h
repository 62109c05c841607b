// The API server's own metrics, registered with the process's on first use
// (server::start() uses them, so they are listed from the start).
#pragma once

#include "util/metrics.h"

namespace tether::api {

struct api_metrics {
  metrics::gauge& connections;  // tether_http_connections: open connections (event streams included)
  metrics::counter& refused;    // tether_http_connections_refused_total: answered 503 over a limit
  metrics::gauge& sse_queued;   // tether_sse_queued_bytes: SSE frames waiting in the server (all streams)
};
api_metrics& server_metrics();

}  // namespace tether::api
