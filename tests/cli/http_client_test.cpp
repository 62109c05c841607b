#include "cli/client.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>

#include <boost/json.hpp>

namespace tether::cli {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

// A one-shot HTTP server on loopback: accepts one connection, reads the
// request head, writes `response` in pieces of `piece` bytes, closes.
class fake_server {
 public:
  fake_server(std::string response, std::size_t piece) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(::listen(fd_, 1), 0);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this, response = std::move(response), piece] {
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      const int one = 1;
      ::setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      char buf[4096];
      while (request_.find("\r\n\r\n") == std::string::npos) {
        const auto n = ::recv(c, buf, sizeof buf, 0);
        if (n <= 0) break;
        request_.append(buf, static_cast<std::size_t>(n));
      }
      for (std::size_t i = 0; i < response.size(); i += piece) {
        ::send(c, response.data() + i, std::min(piece, response.size() - i), MSG_NOSIGNAL);
        if (piece < response.size()) std::this_thread::sleep_for(1ms);
      }
      ::close(c);
    });
  }
  ~fake_server() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  [[nodiscard]] std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // Valid after the client is done.
  [[nodiscard]] const std::string& request() const { return request_; }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::string request_;
  std::thread thread_;
};

TEST(Client, AServerThatClosesWithoutAnsweringIsAnErrorNotASuccess) {
  fake_server server("", 1);
  client_options o;
  o.server = server.url();
  client c(o);
  auto r = c.post("/v1/sessions", json::object{});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), client_errc::bad_response);
}

std::string chunked(const std::string& body) {
  std::string out;
  for (std::size_t i = 0; i < body.size(); i += 7) {
    const auto part = body.substr(i, 7);
    char size[16];
    std::snprintf(size, sizeof size, "%zx\r\n", part.size());
    out += size + part + "\r\n";
  }
  return out + "0\r\n\r\n";
}

client_options options_for(const fake_server& s, std::string token = "secret") {
  client_options o;
  o.server = s.url();
  o.token = std::move(token);
  o.token_source = "--token";
  o.connect_timeout = 2s;
  o.response_timeout = 5s;
  return o;
}

TEST(Client, ChunkedJsonSplitAtEveryByteIsParsed) {
  const std::string body = R"({"sessions":[{"id":"ses_a"}]})";
  fake_server s(
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(body), 1);
  client c(options_for(s));
  auto r = c.get("/v1/sessions");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(json::serialize(*r), body);
  EXPECT_NE(s.request().find("Authorization: Bearer secret\r\n"), std::string::npos) << s.request();
  EXPECT_EQ(s.request().rfind("GET /v1/sessions HTTP/1.1\r\n", 0), 0U) << s.request();
}

TEST(Client, TheServersErrorBecomesCodeAndMessage) {
  const std::string body = R"({"error":{"code":"conflict","message":"already answered"}})";
  fake_server s("HTTP/1.1 409 Conflict\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body, 1000);
  client c(options_for(s));
  auto r = c.post("/v1/interactions/int_x/answer", json::object{});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), client_errc::refused);
  EXPECT_EQ(r.error().message, "conflict: already answered");
  EXPECT_EQ(c.http_status(), 409);
  EXPECT_EQ(exit_code_for(r.error()), 1);
}

TEST(Client, UnauthorizedSaysWhereTheTokenCameFrom) {
  const std::string body = R"({"error":{"code":"unauthorized","message":"bad token"}})";
  fake_server s("HTTP/1.1 401 Unauthorized\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body,
                1000);
  auto o = options_for(s);
  o.token_source = "the file /d/token";
  client c(o);
  auto r = c.get("/v1/sessions");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), client_errc::unauthorized);
  EXPECT_NE(r.error().message.find("the file /d/token"), std::string::npos) << r.error().message;
}

TEST(Client, ARefusedConnectionIsUnreachableAndNamesTheServer) {
  // A port that was bound and released: nothing listens on it.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  const int port = ntohs(a.sin_port);
  ::close(fd);
  client_options o;
  o.server = "http://127.0.0.1:" + std::to_string(port);
  client c(o);
  auto r = c.get("/v1/health");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), client_errc::unreachable);
  EXPECT_EQ(r.error().message,
            "cannot reach the server at " + o.server + " (connection refused) — is `tether serve` running?");
  EXPECT_EQ(exit_code_for(r.error()), 4);
}

TEST(Client, AnEventStreamSplitAtEveryByteYieldsEveryEvent) {
  const std::string sse =
      ": heartbeat\n\n"
      "id: 3\nevent: text.ended\ndata: {\"seq\":3}\n\n"
      "event: text.delta\ndata: {\"seq\":3,\"d\":1}\n\n"
      "id: 4\nevent: execution.finished\ndata: {\"seq\":4}\n\n";
  fake_server s(
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(sse), 1);
  client c(options_for(s));
  auto stream = c.open_events("/v1/sessions/ses_a/events?after=2", 2);
  ASSERT_TRUE(stream) << stream.error().message;
  std::vector<http::sse_event> events;
  for (int i = 0; i < 500 && events.size() < 3; ++i) {
    auto got = (*stream)->next(20ms);
    ASSERT_TRUE(got) << got.error().message;
    for (auto& e : *got) events.push_back(std::move(e));
  }
  ASSERT_EQ(events.size(), 3U);
  EXPECT_EQ(events[0].event, "text.ended");
  EXPECT_EQ(events[0].id, "3");
  EXPECT_EQ(events[1].event, "text.delta");
  EXPECT_EQ(events[2].data, "{\"seq\":4}");
  EXPECT_NE(s.request().find("Accept: text/event-stream\r\n"), std::string::npos);
  EXPECT_NE(s.request().find("Last-Event-ID: 2\r\n"), std::string::npos);
  // Then the server closes: the stream says so.
  result<std::vector<http::sse_event>> end = std::vector<http::sse_event>{};
  for (int i = 0; i < 100 && end && end->empty(); ++i) end = (*stream)->next(20ms);
  ASSERT_FALSE(end);
  EXPECT_EQ(end.error(), client_errc::bad_response);
}

TEST(Client, ServerUrlsAreHttpWithAnOptionalPortAndPath) {
  auto a = parse_server_url("http://127.0.0.1:7420");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, "7420");
  EXPECT_EQ(a->base_path, "");
  auto b = parse_server_url("http://[::1]/tether/");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->host, "::1");
  EXPECT_EQ(b->port, "80");
  EXPECT_EQ(b->base_path, "/tether");
  EXPECT_FALSE(parse_server_url("https://example.com"));
  EXPECT_FALSE(parse_server_url("127.0.0.1:7420"));
  EXPECT_FALSE(parse_server_url("http://host:port"));
}

}  // namespace
}  // namespace tether::cli
