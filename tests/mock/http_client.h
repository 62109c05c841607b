// Test support: a small synchronous HTTP/1.1 client (Beast) for loopback
// tests of mock::server. Every read has a 20 s receive timeout so a server
// bug fails a test instead of hanging it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tether::mock::test {

struct http_response {
  unsigned status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;                            // de-chunked; what arrived when incomplete
  bool complete = false;                       // the whole message arrived
  bool chunked = false;
};

// One keep-alive connection.
class http_client {
 public:
  explicit http_client(std::uint16_t port);
  ~http_client();
  http_client(const http_client&) = delete;
  http_client& operator=(const http_client&) = delete;

  http_response send(const std::string& method, const std::string& target, const std::string& body = {},
                     const std::vector<std::pair<std::string, std::string>>& headers = {});
  // Sends the request and reads only the response head and `bytes` bytes of
  // body (at least), then returns without reading the rest.
  std::string send_and_read_some(const std::string& method, const std::string& target, const std::string& body,
                                 std::size_t bytes);
  // Reads until the server closes the connection (eof = true) or the
  // receive timeout passes (eof = false).
  std::string read_rest(bool& eof);
  void close();

 private:
  struct state;
  std::unique_ptr<state> s_;
};

// One request on a fresh connection.
http_response http_call(std::uint16_t port, const std::string& method, const std::string& target,
                        const std::string& body = {});

// Writes raw bytes on a fresh connection and returns everything read until
// the server closes (or the timeout).
std::string raw_exchange(std::uint16_t port, const std::string& bytes);

struct sse_message {
  std::string event;  // empty when the stream has no event: lines (chat)
  std::string data;
};
std::vector<sse_message> parse_sse(const std::string& body);

}  // namespace tether::mock::test
