// api::server — Tether's HTTP/1.1 API (DESIGN.md §7; docs/openapi.json is
// the full contract).
//
//   api::server srv(executor, service, store, {.listen = "127.0.0.1:0", .token = "t"});
//   if (auto r = srv.start(); !r) fail(r.error());
//   ... http://127.0.0.1:<srv.port()>/v1/... ...
//   co_await srv.stop();
//
// Routes (every route but health needs `Authorization: Bearer TOKEN`):
//   GET  /v1/health                          {status:"ok", node, version}
//   POST /v1/sessions                        201 {session}; exact retry of an id 200; other attributes 409
//   GET  /v1/sessions · /v1/sessions/{id}    {sessions:[…]} · {session}
//   POST /v1/sessions/{id}/inputs            202 {input}; exact retry 200; conflict 409
//   GET  /v1/sessions/{id}/inputs            {inputs:[…]} in admission order
//   DELETE /v1/sessions/{id}/inputs/{input}  {input} cancelled; 409 once promoted
//   POST /v1/sessions/{id}/interrupt|reset|resume   {interrupted} | {generation} | {started}
//   GET  /v1/sessions/{id}/messages          the transcript, every generation
//   GET  /v1/sessions/{id}/events?after=N    a JSON page, or with Accept: text/event-stream
//                                            an SSE stream: replay after N (or Last-Event-ID), then live
//   GET  /v1/sessions/{id}/executions|interactions
//   POST /v1/interactions/{id}/answer        checked against the question (answers.h)
//   GET  /v1/events                          SSE of every session, live
//   GET  /v1/openapi.json · /metrics         the contract · Prometheus text
//
// SSE: durable events carry `id: <seq>`; ephemeral deltas have no id; a
// comment line every `heartbeat` while idle. A slow reader never grows the
// server's memory: at most sse_max_buffered bytes are queued for it (then the
// session tail drops deltas and re-reads durable events; the global stream
// ends with an `error` event, code lagged), and one whose socket accepts
// nothing for sse_stall_timeout is disconnected.
//
// Errors are {"error":{"code","message"}}: 400 malformed JSON / wrong field
// types / invalid UTF-8 (the message names the field), 401 missing or wrong
// token, 404 unknown route or id, 405 wrong method, 409 conflict, 413 body
// over max_body_bytes, 500/503 storage failures. The mapping from
// session/store/util error codes to statuses lives in one place (errors.cpp).
//
// Threads: the server runs on the executor it is given (the session
// service's); all its state lives on an internal strand. start() binds on the
// calling thread. stop() closes the listener and every connection and
// returns when all connection coroutines have finished; a stopped server
// cannot be started again.
//
// Errors of start(): util_errc::invalid_argument (listen address not
// numeric HOST:PORT), api_errc::listen_failed (bind/listen failed).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "session/service.h"
#include "store/event_store.h"
#include "util/result.h"

namespace tether::api {

struct server_options {
  std::string listen = "127.0.0.1:7420";   // host:port (numeric address); port 0 = pick a free one
  std::string token;                       // bearer token every route but health requires; empty refuses them all
  std::size_t max_body_bytes = 1U << 20U;  // larger bodies get 413
  std::string version = "0.1.0";           // reported by /v1/health
  // Whether a profile is configured ("" is `default`); a session naming an
  // unknown one is refused at creation. Unset: every profile is accepted.
  std::function<bool(std::string_view)> profile_known;
  std::chrono::milliseconds heartbeat{15'000};          // SSE comment lines while idle
  std::size_t sse_max_buffered = 1U << 20U;             // bytes queued for an SSE client before events for it wait
  std::chrono::milliseconds sse_stall_timeout{30'000};  // an SSE client whose socket takes nothing this long is dropped
  std::size_t sse_tail_buffer = 8192;                   // events the global stream holds for a slow client
};

class server {
 public:
  // `service` and `store` must outlive the server.
  server(const boost::asio::any_io_executor& executor, session::session_service& service, store::event_store& store,
         server_options options);
  ~server();
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  result<void> start();
  boost::asio::awaitable<void> stop();
  // The bound port (after start()); any thread.
  [[nodiscard]] std::uint16_t port() const;

  struct impl;  // server.cpp's connection coroutines share it

 private:
  std::shared_ptr<impl> impl_;
};

}  // namespace tether::api
