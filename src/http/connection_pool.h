// Idle keep-alive connections to HTTP servers (model providers, mostly), per
// endpoint, and the TLS sessions to resume with (client.h borrows and returns
// them).
//
//   connection_pool pool(options);
//   if (auto idle = pool.acquire(key)) { ...wrap it on this coroutine's executor... }
//   ...
//   pool.release(key, std::move(idle));   // after a response read to its end
//
// What an idle connection is: the connected socket's descriptor and, for
// https, the OpenSSL connection (SSL*) that runs over it — no Asio object.
// A borrower builds its socket (and TLS stream) around them on its own
// executor, and takes them apart again when it returns the connection.
// Why not keep Asio sockets: an I/O object is bound to the executor it was
// made on, and every session's drain runs on a strand of its own, made anew
// for each drain. A pooled socket made on an earlier drain's strand would
// run its deadlines' handlers and the stop callback's close there, racing
// the new drain's reads on the same socket. A raw descriptor has no
// executor, so a connection is always driven by exactly one strand: its
// borrower's. A per-endpoint strand would serialize every stream to one
// provider on one strand instead.
//
// Ownership: a borrowed connection belongs to its exchange alone; an
// interrupt closes it (http_client's stop callback) and it never comes back.
// Only a connection whose response was read to its end, with nothing left
// over and keep-alive on both sides, is returned.
//
// Bounds (pool_options): at most max_idle_per_endpoint idle connections per
// endpoint and max_idle_total in all (returning one past a bound closes the
// oldest idle one); a connection idle longer than idle_timeout is closed
// instead of lent. There is no timer: expiry is checked on every acquire
// and release, so the pool holds at most the bounds' worth of descriptors.
//
// A server may close an idle keep-alive connection at any time. acquire()
// drops one that is already readable (EOF, or bytes nobody asked for); the
// rest of the race — the server closing while the request is on its way —
// is http_client's: it retries once on a fresh connection when a reused one
// fails before any response byte.
//
// TLS resumption: the last resumable session per endpoint is kept
// (remember_session) and set on the next new connection to that endpoint,
// which then skips the full handshake when the server accepts it.
//
// Thread-safe: sessions on different threads share one pool (a mutex).
#pragma once

#include <chrono>
#include <compare>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <openssl/ssl.h>

#include "http/client.h"

namespace tether::http {

// Where a connection goes: the URL's scheme, host and port, and the proxy it
// passes through ("" when direct).
struct pool_key {
  std::string scheme;
  std::string host;
  std::uint16_t port = 0;
  std::string via;
  auto operator<=>(const pool_key&) const = default;
};

struct ssl_free_deleter {
  void operator()(SSL* s) const;
};
struct ssl_session_free_deleter {
  void operator()(SSL_SESSION* s) const;
};
using ssl_ptr = std::unique_ptr<SSL, ssl_free_deleter>;
using ssl_session_ptr = std::unique_ptr<SSL_SESSION, ssl_session_free_deleter>;

enum class ip_family { v4, v6 };

// A connected socket (closed on destruction) and, for https, its TLS state.
class idle_connection {
 public:
  idle_connection() = default;
  idle_connection(int fd, ip_family family, ssl_ptr tls);
  ~idle_connection();
  idle_connection(idle_connection&& other) noexcept;
  idle_connection& operator=(idle_connection&& other) noexcept;
  idle_connection(const idle_connection&) = delete;
  idle_connection& operator=(const idle_connection&) = delete;

  [[nodiscard]] int fd() const { return fd_; }
  [[nodiscard]] ip_family family() const { return family_; }
  // Gives up the descriptor and the TLS state to the caller.
  int release_fd();
  ssl_ptr release_tls() { return std::move(tls_); }

 private:
  friend class connection_pool;
  int fd_ = -1;
  ip_family family_ = ip_family::v4;
  ssl_ptr tls_;
  std::chrono::steady_clock::time_point since_{};
};

class connection_pool {
 public:
  explicit connection_pool(connection_pool_options options);
  connection_pool(const connection_pool&) = delete;
  connection_pool& operator=(const connection_pool&) = delete;

  // The most recently returned live connection to `key`, or nullopt.
  std::optional<idle_connection> acquire(const pool_key& key);
  // Keeps `c` for the next exchange to `key` (closing the oldest idle one
  // past a bound). With max_idle_total 0 it is closed at once.
  void release(const pool_key& key, idle_connection c);

  // Keeps a copy of a resumable session of `key`.
  void remember_session(const pool_key& key, SSL_SESSION* session);
  // A copy of the session to offer on a new connection to `key`, or null.
  ssl_session_ptr session(const pool_key& key);

  [[nodiscard]] std::size_t idle_count() const;

 private:
  void expire_locked(std::chrono::steady_clock::time_point now);

  connection_pool_options options_;
  mutable std::mutex mu_;
  std::map<pool_key, std::deque<idle_connection>> idle_;  // oldest first
  std::map<pool_key, ssl_session_ptr> sessions_;
  std::size_t total_ = 0;
};

}  // namespace tether::http
