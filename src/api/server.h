// api::server — Tether's HTTP/1.1 API (docs/architecture.md §7; docs/openapi.json is
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
//   POST /v1/interactions/{id}/answer        checked against the question (model/questions.h)
//   GET  /v1/events                          SSE of every session, live
//   GET  /v1/openapi.json · /metrics         the contract · Prometheus text
//
// SSE: durable events carry `id: <seq>`; ephemeral deltas have no id; a
// comment line every `heartbeat` while idle. A slow reader never grows the
// server's memory: at most sse_max_buffered bytes of frames are queued for it
// (one larger frame alone), and behind that its store tail holds at most the
// store's byte budget (sqlite_options::tail_buffer_bytes, 1 MiB): over it the
// tail drops deltas first, then a session tail re-reads durable events from
// the store and the global stream ends with an `error` event, code lagged.
// One whose socket accepts nothing for sse_stall_timeout is disconnected
// (api/sse_stream.h). tether_sse_queued_bytes (here) and
// tether_tail_buffered_bytes (the store) add up what waits for slow readers.
//
// Errors are {"error":{"code","message"}}: 400 malformed JSON / wrong field
// types / unknown fields / a key given twice / U+0000 in a string / invalid
// UTF-8 / a workspace outside the roots / an answer that does not fit its
// question (the message names the field; see body.h, workspace.h and
// model/questions.h), 401 missing or wrong token, 404 unknown route or id,
// 405 wrong method, 409 conflict, 413 body over max_body_bytes, 415 a body
// that is not application/json, 431 a request head over 16 KiB, 500/503
// storage failures, 503 over the connection limits. The mapping from
// session/store/util error codes to statuses lives in one place
// (errors.cpp).
//
// The routes do no session work of their own: they parse, call the session
// service (session/service.h) and render its answers (views.h).
//
// Connections are the HTTP shell's (http/server_shell.h): each on its own
// strand, at most max_connections at once (default 4096) and
// max_connections_per_peer from one address (default half of that), and
// never more than the descriptor limit leaves after descriptor_reserve
// (default a quarter of the limit, at least 256: the store, the model
// clients and the tools' pipes must still get descriptors under a flood).
// At a limit, the oldest connection waiting for a request (first one that
// never sent a complete request, then one idle between requests; of that
// peer, for the per-peer limit) is answered 503 and closed to make room;
// when there is none (all busy or streaming) the new connection is. A 503
// here is a short canned answer with `Connection: close`. A new connection
// must send its request within request_timeout, a kept-alive one its next
// within idle_timeout, any body within request_timeout; `Expect:
// 100-continue` is answered before the body is read; a reply the client
// does not take within write_timeout ends the connection.
// tether_http_connections and tether_http_connections_refused_total count
// them.
//
// Memory: every trim_interval freed heap memory is handed back to the
// system (malloc_trim), so a burst does not stay in the RSS for good.
//
// Threads: the server runs on the executor it is given (the session
// service's); each connection on a strand of its own, so a slow request or
// reader on one never delays another. start() binds on the calling thread.
// stop() closes the listener and every connection and returns when all
// connection coroutines have finished (awaited, not polled); a stopped
// server cannot be started again.
//
// Errors of start(): http::server_errc::address_in_use; util_errc::invalid_argument (listen address not
// numeric HOST:PORT), api_errc::listen_failed (bind/listen failed).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "http/server_shell.h"
#include "session/service.h"
#include "store/event_store.h"
#include "util/result.h"

namespace tether::work {
class work_service;
}
namespace boost::asio::ssl {
class context;
}

namespace tether::api {

struct server_options {
  std::string listen = "127.0.0.1:7420";   // host:port (numeric address); port 0 = pick a free one
  std::string token;                       // bearer token every route but health requires; empty refuses them all
  std::size_t max_body_bytes = 1U << 20U;  // larger bodies get 413
  std::string version = "0.1.0";           // reported by /v1/health
  // Why a session may not name a profile ("" is `default`): "" when it may;
  // otherwise its creation is refused with that reason. Unset: every
  // profile is accepted.
  std::function<std::string(std::string_view)> profile_problem;
  std::chrono::milliseconds heartbeat{15'000};          // SSE comment lines while idle
  std::size_t sse_max_buffered = 1U << 20U;             // bytes queued for an SSE client before events for it wait
  std::chrono::milliseconds sse_stall_timeout{30'000};  // an SSE client whose socket takes nothing this long is dropped
  std::size_t sse_tail_buffer = 8192;                   // events the global stream holds for a slow client
  // Absolute directories a session's workspace must lie under (api/workspace.h);
  // empty: only the default workspace (no `workspace` field) is accepted.
  std::vector<std::filesystem::path> workspace_roots;
  std::filesystem::path data_dir;  // a workspace holding it is refused (api/workspace.h)
  // Host names the server answers to besides IP literals and localhost
  // (api/guard.h: other names are refused, against DNS rebinding).
  std::vector<std::string> allowed_hosts;
  // Connections at once, in total and from one peer address; 0 = automatic
  // (see "Connections" above). The total is also kept under what the
  // descriptor limit leaves after descriptor_reserve.
  std::size_t max_connections = 0;
  std::size_t max_connections_per_peer = 0;
  std::size_t descriptor_reserve = 0;                 // 0 = automatic: max(256, a quarter of the limit)
  std::chrono::milliseconds request_timeout{10'000};  // a new connection's first request must arrive within it
  std::chrono::milliseconds idle_timeout{60'000};     // a keep-alive connection may wait this long for the next one
  std::chrono::milliseconds write_timeout{60'000};    // a reply not taken within it ends the connection
  // How often freed heap memory is handed back to the system (malloc_trim); 0 = never.
  std::chrono::milliseconds trim_interval{5'000};
  // The work layer behind /v1/projects and /v1/tasks (api/work_routes.h);
  // null: those routes answer 503. Must outlive the server.
  work::work_service* work = nullptr;
  // The profiles a session may name, as GET /v1/profiles lists them.
  struct profile_info {
    std::string name;
    std::string runtime;
    std::string model;    // config::model_label()
    std::string problem;  // why it is unavailable here; "" when it is available
  };
  std::vector<profile_info> profiles;
  // The qualification results the interface shows (api/web_routes.h):
  // `tether e2e`'s results folder and its dashboard page of a campaign (the
  // latest for ""; api_errc::not_found when there is none).
  struct qualification_source {
    std::filesystem::path dir;
    std::function<result<std::string>(const std::string& campaign)> dashboard;
  };
  std::optional<qualification_source> qualification;
  // Set: HTTPS only, with this context (http/server_tls.h); the sign-in
  // cookie is then `Secure`.
  std::shared_ptr<boost::asio::ssl::context> tls;
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
  // Connections open now (tests); any thread.
  [[nodiscard]] std::size_t connections() const;

  struct impl;

 private:
  std::shared_ptr<impl> impl_;
};

// This process's soft limit on open descriptors (RLIMIT_NOFILE), and
// raising it to the hard one (a server wants every descriptor it may have;
// its connection limits stay well below): http/server_shell.h's.
using http::descriptor_limit;
using http::raise_descriptor_limit;

}  // namespace tether::api
