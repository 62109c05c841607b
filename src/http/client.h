// One HTTP/1.1 exchange with a streamed response body: the outbound client
// of the model providers, the agents' model relay and the opencode server's
// driver.
//
//   http_client client(options);
//   http_handler h{.on_head = ..., .on_body = ...};
//   http_result r = co_await client.send(request, h, stop);
//
// send() connects (directly or through a proxy, see proxy.h), sends the
// request, reports the response head to on_head and then the body, as it
// arrives and already de-chunked, to on_body in pieces of any size. on_body
// may return body_action::stop to end the exchange early (the end marker was
// seen, an error body is long enough); that is not an error. Handlers run on
// the awaiting coroutine's executor, inside send(). A User-Agent among the
// request's headers replaces Tether's.
//
// https:// uses TLS with the system's CA store (plus http_options::ca_file
// when set), SNI and host name verification. Through a proxy, http://
// requests use the absolute-form target and https:// requests a CONNECT
// tunnel.
//
// Keep-alive (connection_pool.h): an exchange first borrows an idle
// connection to the same scheme, host, port and proxy; otherwise it connects,
// offering the endpoint's last TLS session for resumption. A connection whose
// response was read to its end (after on_body's stop, the rest of the body is
// read and dropped, within drain_bytes and drain_timeout) goes back to the
// pool; any other (an error, a stop, a server's Connection: close) is closed.
// A borrowed connection that fails before any byte of a response — the
// server closed it while it was idle — is replaced by a fresh one and the
// request sent once more; never after a response byte arrived.
//
// Deadlines (http_deadlines): `connect` bounds name resolution, TCP connect,
// the proxy's CONNECT and the TLS handshake together; `first_byte` bounds
// writing the request and reading the response head; `idle` bounds each read
// of the body. A passed deadline is client_errc::timeout.
//
// Errors (http_result::error, always a client_errc; the providers map them
// onto their own provider_errc of the same names):
//   invalid_request    the URL or a proxy setting is malformed
//   transport          no connection, proxy refusal, TLS failure, or the
//                      request could not be written (request_sent false)
//   incomplete_stream  the connection broke after the request was sent:
//                      before the head or in the middle of the body
//   timeout            a deadline passed (request_sent says at which side)
//   bad_response       the head is malformed or the body exceeds
//                      max_response_bytes
//   cancelled          `stop` was requested
//
// Cancellation: a std::stop_callback posts the close of this exchange's
// socket — and only this one: idle pooled connections are no Asio objects —
// to the awaiting coroutine's executor (so that executor must be a strand or
// run on one thread, as every session's is); send() then returns cancelled.
//
// One client may run several exchanges at once, from any executors; each
// has a connection of its own while it runs.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "http/proxy.h"

namespace tether::http {

enum class client_errc {
  invalid_request = 1,  // the URL or a proxy setting is malformed
  transport,            // no connection, proxy refusal, TLS failure, request not written
  incomplete_stream,    // the connection broke after the request was sent
  timeout,              // a deadline passed
  bad_response,         // a malformed head, or a body past max_response_bytes
  cancelled,            // stop was requested
};

const std::error_category& client_category();
inline std::error_code make_error_code(client_errc e) { return {static_cast<int>(e), client_category()}; }

// Deadlines are data: each travels with the options.
struct http_deadlines {
  std::chrono::milliseconds connect{10'000};     // TCP (+ proxy CONNECT) + TLS handshake
  std::chrono::milliseconds first_byte{60'000};  // request sent → response head
  std::chrono::milliseconds idle{120'000};       // between two reads of the body
};

// Keep-alive connections (connection_pool.h): how many idle ones are kept
// per endpoint and in all, and for how long. Zero bounds turn reuse off (a
// new connection per request).
struct connection_pool_options {
  std::size_t max_idle_per_endpoint = 8;
  std::size_t max_idle_total = 64;
  std::chrono::milliseconds idle_timeout{30'000};  // below the usual server-side keep-alive (60 s+)
};

struct http_header {
  std::string name;
  std::string value;
};

struct http_request {
  std::string method = "POST";
  std::string url;                   // absolute http:// or https:// URL
  std::vector<http_header> headers;  // Host, Content-Length and User-Agent are added
  std::string body;
};

struct http_response_head {
  int status = 0;
  std::string reason;
  std::vector<http_header> headers;
  // The first header of that name (case-insensitive), or "".
  [[nodiscard]] std::string header(std::string_view name) const;
};

enum class body_action { more, stop };

struct http_handler {
  std::function<void(const http_response_head&)> on_head;
  std::function<body_action(std::string_view)> on_body;
};

// Sees every exchange as it happens: used to record cassettes from a live
// provider (tests, TETHER_RECORD=1). on_request sees the headers as sent,
// secrets included: a tap must redact them before writing anything.
class http_tap {
 public:
  virtual ~http_tap() = default;
  virtual void on_request(const http_request& request) = 0;
  virtual void on_head(const http_response_head& head) = 0;
  virtual void on_body(std::string_view bytes) = 0;
};

struct http_options {
  http_deadlines deadlines;
  proxy_config proxies;
  std::size_t max_response_bytes = 64U << 20U;
  std::shared_ptr<http_tap> tap;
  std::string ca_file;  // PEM certificates trusted besides the system's
  connection_pool_options pool;
  // What is read (and dropped) of a body after on_body's stop, to lend the
  // connection again.
  std::size_t drain_bytes = 64U << 10U;
  std::chrono::milliseconds drain_timeout{1'000};
};

struct http_result {
  std::error_code error;      // empty: the body ended, or on_body said stop
  std::string message;        // one line for logs, no secrets
  bool request_sent = false;  // the whole request was written
  bool head_received = false;
  std::uint64_t body_bytes = 0;
  bool reused_connection = false;  // the exchange ran on a pooled connection
  bool tls_resumed = false;        // the TLS handshake resumed a session
};

class http_client {
 public:
  explicit http_client(http_options options);
  ~http_client();
  http_client(const http_client&) = delete;
  http_client& operator=(const http_client&) = delete;

  // `handler` is copied into the exchange; it runs on the caller's executor.
  boost::asio::awaitable<http_result> send(http_request request, http_handler handler, std::stop_token stop);

  // Idle connections kept for later exchanges.
  [[nodiscard]] std::size_t idle_connections() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace tether::http

template <>
struct std::is_error_code_enum<tether::http::client_errc> : std::true_type {};
