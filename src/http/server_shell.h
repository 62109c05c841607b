// http::server_shell — the HTTP/1.1 server under Tether's API and the
// scripted model: it listens, accepts, reads requests, writes replies and
// enforces the limits; what a request means is the `routes` it is given.
//
//   auto r = std::make_shared<my_routes>();         // implements http::routes
//   http::server_shell shell(executor, {.listen = "127.0.0.1:0"}, r);
//   if (auto e = shell.start(); !e) fail(e.error());
//   ... shell.port() ...
//   co_await shell.stop();
//
// A connection's life (each connection runs on its own strand, so a slow
// reader or a long route on one never delays another):
//   [tls handshake, within handshake_timeout]
//   loop:
//     read the request head: a new connection's within request_timeout, a
//     kept-alive one's next within idle_timeout; head over header_limit ->
//     431; a head that does not parse -> 400 (routes::malformed), close;
//     a Content-Length over max_body_bytes -> 413 (routes::too_large), then
//     the rest of what the client sends is read and dropped for a moment (so
//     it sees the answer, not a reset), close;
//     `Expect: 100-continue` -> "100 Continue" is sent before the body;
//     read the body within request_timeout; one that grows over
//     max_body_bytes (chunked) -> 413 as above;
//     routes::handle(request) -> reply: a whole response is written (the
//     peer must take it within write_timeout); its keep_alive() decides
//     whether the loop goes on. A streaming reply gets the connection
//     instead (see `stream`); a reply with neither closes the connection.
//   [tls close_notify, unless the shell is stopping]
//
// Connections: at most max_connections at once (default 4096) and
// max_connections_per_peer from one address (default half of the total),
// and never more than the descriptor limit leaves after descriptor_reserve
// (default a quarter of the limit, at least 256). At a limit, the oldest
// connection not being served is sent `refusal` and closed to make room
// (of that peer, for the per-peer limit): first among connections that never
// sent a trusted head (routes::inspect), then among the others; in each
// group one that never sent a complete head first, then one still sending
// its body (a slow body does not make a connection busy), then one idle
// between requests. When there is none (all being served or streaming) the
// new connection is. routes::refused() and
// routes::connections_changed() let the owner count them.
//
// Threads: the shell runs on the executor it is given; each connection on a
// strand of its own (on the executor itself with options.one_thread), the
// accept loop on another. routes::handle() and a streaming reply run on
// their connection's strand, concurrently with other connections'. The connection table (for the limits) is the only state
// connections share; a mutex guards it. start() binds on the calling
// thread.
//
// stop() closes the listener and every connection (streams included, and a
// stream's pause() returns false), then returns once every connection
// coroutine and the accept loop have finished (it awaits a gate, no
// polling). A stopped shell cannot be started again; the destructor of a
// started shell that was not stopped closes the listener and connections
// but cannot wait.
//
// Errors of start(): server_errc::invalid_listen_address (not HOST:PORT
// with a numeric address or "localhost"), address_in_use, listen_failed,
// already_started.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/system/error_code.hpp>

#include "http/server_errors.h"
#include "util/result.h"

namespace boost::asio::ssl {
class context;
}

namespace tether::http {

using request = boost::beast::http::request<boost::beast::http::string_body>;
using response = boost::beast::http::response<boost::beast::http::string_body>;

// The connection as a streaming reply sees it. Call it on the connection's
// strand (where the streaming reply runs); one write() and one
// discard_input() may be outstanding at once.
class stream {
 public:
  virtual ~stream() = default;
  // Writes all of `bytes`. Fails with boost::beast::error::timeout when the
  // peer takes nothing for `timeout` (the connection is then closed), or
  // with the socket's error.
  virtual boost::asio::awaitable<boost::system::error_code> write(std::string bytes,
                                                                  std::chrono::milliseconds timeout) = 0;
  // Reads and drops what the peer sends, until it closes the connection, an
  // error, cancel() or stop; returns why it ended.
  virtual boost::asio::awaitable<boost::system::error_code> discard_input() = 0;
  // Waits `d`; false when the connection is closing (stop, close()) instead.
  virtual boost::asio::awaitable<bool> pause(std::chrono::milliseconds d) = 0;
  // Ends the outstanding write() and discard_input() (operation_aborted).
  virtual void cancel() = 0;
  // Closes the connection now (a reply that means to cut it short).
  virtual void close() = 0;
  // The kernel's send buffer for this connection, in bytes.
  virtual void set_send_buffer(int bytes) = 0;
  // The shell is stopping or close() was called.
  [[nodiscard]] virtual bool closing() const = 0;
};

// How a connection goes on after a streaming reply.
enum class after_stream { keep_alive, close };

struct reply {
  // A whole response: written as it is; its keep_alive() decides whether
  // the connection serves another request.
  std::optional<response> message;
  // A streaming reply: the shell hands the connection over and this writes
  // the response (head included) itself. Set: `message` is ignored.
  std::function<boost::asio::awaitable<after_stream>(std::shared_ptr<stream>)> streamer;
  // Called once `message` was written (or failed to be).
  std::function<void()> written;
};
// With neither message nor streamer, the connection is closed unanswered.

// What the shell knows of a request besides its bytes.
struct request_info {
  std::string peer;  // the client's address ("127.0.0.1", "::1"), "" when unknown
};

// What the owner decides about a request once its head is read, before its
// body is: the body's limit (0: options.max_body_bytes) and whether the head
// carries valid credentials. A connection that ever sent a trusted head is
// evicted last (see "Connections" above).
struct head_policy {
  std::size_t body_limit = 0;
  bool trusted = false;
};

// What the owner of a shell decides.
class routes {
 public:
  virtual ~routes() = default;
  // One request (owned by the call) in, its reply out. Runs on the
  // connection's strand; must not throw (an exception closes the connection
  // and is logged).
  virtual boost::asio::awaitable<reply> handle(request req, request_info info) = 0;
  // A request's head, before its body is read (on the connection's strand).
  virtual head_policy inspect(const request& head, const request_info& info) {
    (void)head;
    (void)info;
    return {};
  }
  // The reply to a request whose body is over `limit` (`head`: its start
  // line and headers); the connection is closed after it.
  virtual response too_large(const request& head, std::size_t limit) = 0;
  // The reply to a request that does not parse (400), or whose head is over
  // header_limit (431); the connection is closed after it.
  virtual response malformed(unsigned status, std::string message) = 0;
  // A connection was answered `refusal` (over a limit). Any thread.
  virtual void refused() {}
  // Open connections went up or down by `delta`. Any thread.
  virtual void connections_changed(int delta) { (void)delta; }
};

struct shell_options {
  std::string listen = "127.0.0.1:0";  // HOST:PORT (numeric address or localhost); port 0 = pick a free one
  std::string name = "http";           // in log lines
  std::uint32_t header_limit = 16U * 1024U;
  std::size_t max_body_bytes = 1U << 20U;
  std::chrono::milliseconds request_timeout{10'000};  // a new connection's request; any request's body
  std::chrono::milliseconds idle_timeout{60'000};     // a kept-alive connection's next request head
  std::chrono::milliseconds write_timeout{60'000};    // a whole reply, or 100 Continue, must be taken within it
  std::chrono::milliseconds handshake_timeout{10'000};
  // 0 = automatic (see "Connections" above).
  std::size_t max_connections = 0;
  std::size_t max_connections_per_peer = 0;
  std::size_t descriptor_reserve = 0;
  // The complete HTTP response sent to a connection over the limits (a
  // short 503 with Connection: close when empty).
  std::string refusal;
  // Set: every connection starts with a TLS handshake with this context.
  std::shared_ptr<boost::asio::ssl::context> tls;
  // The executor runs on one thread only (the scripted model's): connections
  // run on it directly, since a strand there only costs a lock and a queue
  // per completion.
  bool one_thread = false;
};

class server_shell {
 public:
  // The shell and its connections share `r`: a connection still ending
  // after the shell is gone (destroyed without stop()) keeps it alive.
  server_shell(boost::asio::any_io_executor executor, shell_options options, std::shared_ptr<routes> r);
  ~server_shell();
  server_shell(const server_shell&) = delete;
  server_shell& operator=(const server_shell&) = delete;

  result<void> start();
  boost::asio::awaitable<void> stop();
  // The bound port (after start()); any thread.
  [[nodiscard]] std::uint16_t port() const;
  // The bound address (after start()).
  [[nodiscard]] boost::asio::ip::tcp::endpoint local_endpoint() const;
  // Connections open now, and those idle between requests (tests); any thread.
  [[nodiscard]] std::size_t connections() const;
  [[nodiscard]] std::size_t idle_connections() const;

  struct impl;

 private:
  std::shared_ptr<impl> impl_;
};

// The endpoint of a listen address (HOST:PORT, IPv6 in brackets, "localhost"
// meaning 127.0.0.1), or server_errc::invalid_listen_address.
result<boost::asio::ip::tcp::endpoint> parse_listen(const std::string& listen);

// This process's soft limit on open descriptors (RLIMIT_NOFILE).
std::size_t descriptor_limit();
// Raises the soft limit to the hard one; returns the soft limit now in force.
std::size_t raise_descriptor_limit();

}  // namespace tether::http
