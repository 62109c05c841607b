// One SSE client of the API: a connection the server shell handed over
// (http/server_shell.h, a streaming reply), fed from a store tail until
// either side ends it.
//
// Three coroutines feed one writer on the connection's strand: the tail
// pump queues frames (sse.h), the heartbeat queues a comment when nothing
// was written for `heartbeat`, the reader notices the client leaving.
// Memory per client is bounded: the pump stops pulling from the tail while
// `max_buffered` bytes wait for the socket (the tail then keeps its own
// bounded buffer: a session tail drops deltas and re-reads durable events
// from the store, the global tail ends with an `error` event, code lagged),
// and a client whose socket accepts nothing for `stall_timeout` is
// disconnected (it can resume with Last-Event-ID). tether_sse_queued_bytes
// adds up what waits in the server for slow clients.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>

#include <boost/asio/awaitable.hpp>

#include "http/server_shell.h"
#include "store/event_log.h"

namespace tether::api {

struct sse_options {
  std::chrono::milliseconds heartbeat{15'000};
  std::size_t max_buffered = 1U << 20U;
  std::chrono::milliseconds stall_timeout{30'000};
  unsigned http_version = 11;  // of the request: the status line answers in kind
  bool with_ids = true;        // `id: <seq>` lines (a session's stream; the global one has none)
};

// Writes the response head, then the tail's events, until the client leaves,
// stalls, the tail ends, or the connection closes. Runs on the connection's
// strand; the connection is done afterwards.
boost::asio::awaitable<http::after_stream> stream_events(std::shared_ptr<http::stream> stream,
                                                         std::unique_ptr<store::event_tail> tail, sse_options o);

}  // namespace tether::api
