// Test servers on 127.0.0.1 for the provider tests: a scripted HTTP server
// that answers every connection with the same recorded bytes, and a small
// HTTP proxy (absolute-form forwarding and CONNECT tunnels).
//
// Both run plain blocking sockets on their own thread, serve connections one
// after the other, and record what they received. Destruction stops them
// (a hanging connection is released first).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace tether::runtime::native::testing {

struct received_request {
  std::string method;
  std::string target;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // The first header of that name (case-insensitive), or "".
  [[nodiscard]] std::string header(std::string_view name) const;
  [[nodiscard]] bool has_header(std::string_view name) const;
};

enum class framing { chunked, content_length, close };

struct response_plan {
  std::string head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n";  // status line + headers, CRLF each
  std::string body;
  framing frame = framing::chunked;
  std::size_t piece = 0;                 // write the body in pieces of this many bytes (0: at once)
  std::chrono::milliseconds delay{0};    // pause between pieces
  std::optional<std::size_t> cut_after;  // close after this many body bytes, without a proper end
  bool hang = false;                     // read the request, then never answer
  bool answer_at_once = false;           // answer on accept, without reading a request
  bool hang_after_body = false;          // send everything but keep the connection open
};

class loopback_server {
 public:
  explicit loopback_server(response_plan plan);
  ~loopback_server();
  loopback_server(const loopback_server&) = delete;
  loopback_server& operator=(const loopback_server&) = delete;

  [[nodiscard]] std::uint16_t port() const { return port_; }
  // "http://127.0.0.1:<port>" + path
  [[nodiscard]] std::string url(std::string_view path = "") const;
  [[nodiscard]] std::vector<received_request> requests() const;

 private:
  void serve();
  void answer(int fd);

  response_plan plan_;
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<received_request> requests_;
  std::thread thread_;
};

class test_proxy {
 public:
  // refuse_connect: answer CONNECT with 407 instead of tunnelling.
  explicit test_proxy(bool refuse_connect = false);
  ~test_proxy();
  test_proxy(const test_proxy&) = delete;
  test_proxy& operator=(const test_proxy&) = delete;

  [[nodiscard]] std::string url() const;  // "http://127.0.0.1:<port>"
  // The request lines received: "CONNECT 127.0.0.1:1234 HTTP/1.1", "POST http://… HTTP/1.1".
  [[nodiscard]] std::vector<std::string> request_lines() const;

 private:
  void serve();
  void handle(int fd);

  bool refuse_connect_;
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
  std::thread thread_;
};

// A socket listening on 127.0.0.1 at a free port (written to `port`); throws
// when it cannot listen.
int listen_loopback(std::uint16_t& port);
// A socket connected to 127.0.0.1:port, or -1.
int connect_loopback(std::uint16_t port);

// Reads one request (head + content-length body) from a socket; nullopt on EOF/error.
std::optional<received_request> read_request(int fd, std::string* raw_head = nullptr);

}  // namespace tether::runtime::native::testing
