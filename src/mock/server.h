// mock::server — the scripted model server behind `tether mock-llm`
// (docs/architecture.md §8, grammar in docs/mock-model.md).
//
//   mock::server srv({.listen = "127.0.0.1:0"});
//   if (auto r = srv.start(); !r) fail(r.error());
//   client.base_url = srv.base_url() + "/v1";
//   ... srv.requests() ...
//   srv.stop();   // or let the destructor do it
//
// It speaks OpenAI Chat Completions, OpenAI Responses and Anthropic Messages
// over HTTP/1.1 with keep-alive (routes in handler.h), streaming (SSE,
// chunked, each event flushed as produced) or not, and decides every answer
// from the request alone (script.h). Any model name and any API key are
// accepted. The HTTP side is the shared shell (http/server_shell.h): each
// connection on its own strand, `Expect: 100-continue` answered, 431 for a
// request head over 64 KiB, 413 for a body over max_body_bytes, a reply the
// client does not take within write_timeout ends its connection, and a
// connection idle for 10 minutes is closed.
//
// Threads: start() binds on the calling thread, then serves on one internal
// I/O thread of its own (the connections' strands share it). start() and
// stop() are the owner's calls (not made concurrently with each other);
// requests(), port(), base_url() and connections() may be called from any
// thread. Nothing here may be called from the I/O thread.
//
// stop() closes the listener and every connection (including streams that
// are mid-way or sleeping in `Stream slowly`), waits for every connection to
// end, then joins the thread; it is idempotent and the destructor calls it. A stopped server cannot be started
// again.
//
// HTTPS: with `tls` set, every connection starts with a TLS handshake (TLS
// 1.2/1.3) presenting that identity, and base_url() says https://. A client
// trusts the server by trusting tls->certificate_pem; make one with
// http::make_self_signed_identity() (http/server_tls.h), which names
// localhost, 127.0.0.1 and ::1. A connection that is not TLS, or whose
// handshake does not finish within 10 s, is closed.
//
// Errors of start(): mock_errc::invalid_listen_address (not HOST:PORT with a
// numeric IPv4/IPv6 address or "localhost"), address_in_use, listen_failed,
// record_failed (the record file cannot be opened), already_started;
// http::server_errc::tls_failed (the identity is not usable).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/json/value.hpp>

#include "http/server_tls.h"
#include "mock/errors.h"
#include "util/result.h"

namespace tether::mock {

struct server_options {
  std::string listen = "127.0.0.1:0";                // host:port; port 0 = pick a free one
  std::optional<std::filesystem::path> record_file;  // append each request as one JSON line
  std::size_t max_body_bytes = 32U << 20U;           // larger requests get 413
  std::size_t max_kept_bytes = 64U << 20U;           // requests() keeps the newest within this many bytes
  std::optional<http::tls_identity> tls;             // serve HTTPS with this certificate and key
  std::chrono::milliseconds write_timeout{60'000};   // a client that takes nothing of a reply this long is dropped
};

class server {
 public:
  explicit server(server_options o);
  ~server();  // stops
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  result<void> start();                        // binds and runs on its own thread; error if the address is taken
  void stop();                                 // closes the listener and all connections, joins the thread; idempotent
  [[nodiscard]] std::uint16_t port() const;    // 0 before start()
  [[nodiscard]] std::string base_url() const;  // "http://127.0.0.1:PORT" or https:// (clients append /v1/...)
  // The recorded model requests with seq > after, in order: what
  // /_mock/requests returns ({"seq", "route", "body"} each).
  [[nodiscard]] std::vector<boost::json::value> requests(std::size_t after = 0) const;
  // The bytes the kept requests count (at most max_kept_bytes, or one request).
  [[nodiscard]] std::size_t kept_bytes() const;
  // Connections open now (tests); any thread.
  [[nodiscard]] std::size_t connections() const;

 private:
  class impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace tether::mock
