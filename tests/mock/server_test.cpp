#include "mock/server.h"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "http_client.h"
#include "wire_client.h"

namespace tether::mock {
namespace {

namespace json = boost::json;
using test::http_call;

std::string chat_body(const std::string& user_text, bool stream = false) {
  const std::vector<test::turn> history = {test::turn{role::user, user_text}};
  return json::serialize(test::build_request(wire_format::chat, history, {test::bash_tool()}, stream));
}

class mock_server : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(server_.start()); }
  std::uint16_t port() const { return server_.port(); }
  server server_{server_options{}};
};

TEST_F(mock_server, base_url_names_the_loopback_port) {
  EXPECT_NE(port(), 0);
  EXPECT_EQ(server_.base_url(), "http://127.0.0.1:" + std::to_string(port()));
}

TEST_F(mock_server, health_answers_ok_and_head_root_answers_empty_200) {
  auto r = http_call(port(), "GET", "/_mock/health");
  EXPECT_EQ(r.status, 200U);
  EXPECT_EQ(json::parse(r.body).at("status"), "ok");
  r = http_call(port(), "HEAD", "/");
  EXPECT_EQ(r.status, 200U);
  EXPECT_TRUE(r.body.empty());
}

TEST_F(mock_server, models_lists_a_model_in_openai_and_anthropic_shape) {
  const auto r = http_call(port(), "GET", "/v1/models");
  ASSERT_EQ(r.status, 200U);
  const auto j = json::parse(r.body);
  EXPECT_EQ(j.at("object"), "list");
  EXPECT_EQ(j.at("data").at(0).at("id"), "mock");
  EXPECT_EQ(j.at("data").at(0).at("type"), "model");
}

TEST_F(mock_server, unknown_routes_are_404_and_wrong_methods_405) {
  auto r = http_call(port(), "GET", "/v2/nothing");
  EXPECT_EQ(r.status, 404U);
  EXPECT_TRUE(json::parse(r.body).at("error").at("message").is_string());
  r = http_call(port(), "GET", "/v1/messages");
  EXPECT_EQ(r.status, 405U);
  EXPECT_EQ(r.headers["allow"], "POST");
  EXPECT_EQ(json::parse(r.body).at("type"), "error");
  EXPECT_EQ(http_call(port(), "POST", "/_mock/health", "{}").status, 405U);
}

TEST_F(mock_server, malformed_json_is_400_in_the_routes_error_shape_and_not_recorded) {
  auto r = http_call(port(), "POST", "/v1/chat/completions", "{\"messages\": [");
  EXPECT_EQ(r.status, 400U);
  EXPECT_EQ(json::parse(r.body).at("error").at("type"), "invalid_request_error");
  r = http_call(port(), "POST", "/v1/messages", "not json");
  EXPECT_EQ(r.status, 400U);
  EXPECT_EQ(json::parse(r.body).at("error").at("type"), "invalid_request_error");
  r = http_call(port(), "POST", "/v1/responses", R"({"input": 7})");
  EXPECT_EQ(r.status, 400U);
  EXPECT_NE(json::parse(r.body).at("error").at("message").as_string().find("input"), std::string::npos);
  EXPECT_TRUE(server_.requests().empty());
}

TEST_F(mock_server, deeply_nested_tool_schemas_are_accepted) {
  std::string schema = R"({"type":"string"})";
  for (int i = 0; i < 60; ++i) schema = R"({"type":"object","properties":{"x":)" + schema + "}}";
  const std::string body = R"({"model":"m","messages":[{"role":"user","content":"Reply with exactly: deep"}],)"
                           R"("tools":[{"type":"function","function":{"name":"t","parameters":)" +
                           schema + "}}]}";
  const auto r = http_call(port(), "POST", "/v1/chat/completions", body);
  EXPECT_EQ(r.status, 200U) << r.body;
  EXPECT_NE(r.body.find("deep"), std::string::npos);
}

TEST_F(mock_server, anthropic_token_counting_answers_the_input_tokens) {
  const auto r = http_call(port(), "POST", "/v1/messages/count_tokens?beta=true",
                           R"({"model":"m","messages":[{"role":"user","content":"hello there"}]})");
  ASSERT_EQ(r.status, 200U);
  EXPECT_GT(json::parse(r.body).at("input_tokens").as_int64(), 0);
  EXPECT_TRUE(server_.requests().empty());
}

TEST_F(mock_server, invalid_utf8_is_400) {
  const auto r = http_call(port(), "POST", "/v1/chat/completions",
                           "{\"messages\":[{\"role\":\"user\",\"content\":\"\xC3\x28\"}]}");
  EXPECT_EQ(r.status, 400U);
  EXPECT_NE(r.body.find("UTF-8"), std::string::npos);
}

TEST(mock_server_limits, a_body_over_the_limit_is_413) {
  server_options o;
  o.max_body_bytes = 1024;
  server s(o);
  ASSERT_TRUE(s.start());
  const auto r = http_call(s.port(), "POST", "/v1/messages", std::string(4096, ' '));
  EXPECT_EQ(r.status, 413U);
  EXPECT_EQ(json::parse(r.body).at("error").at("type"), "request_too_large");
  // The server still serves.
  EXPECT_EQ(http_call(s.port(), "GET", "/_mock/health").status, 200U);
}

TEST(mock_server_limits, a_client_still_sending_a_large_body_reads_the_413) {
  server_options o;
  o.max_body_bytes = 1024;
  server s(o);
  ASSERT_TRUE(s.start());
  const auto r = http_call(s.port(), "POST", "/v1/chat/completions", std::string(8U << 20U, ' '));
  EXPECT_EQ(r.status, 413U);
}

TEST_F(mock_server, malformed_http_gets_400_and_the_server_keeps_serving) {
  const auto got = test::raw_exchange(port(), "THIS IS NOT HTTP\r\n\r\n");
  EXPECT_NE(got.find("400"), std::string::npos) << got;
  EXPECT_EQ(http_call(port(), "GET", "/_mock/health").status, 200U);
}

TEST_F(mock_server, expect_100_continue_is_honoured) {
  const std::string body = chat_body("Reply with exactly: ok");
  const auto got = test::raw_exchange(port(),
                                      "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                                      "Connection: close\r\nContent-Length: " +
                                          std::to_string(body.size()) + "\r\n\r\n" + body);
  EXPECT_EQ(got.rfind("HTTP/1.1 100 Continue\r\n", 0), 0U) << got;
  EXPECT_NE(got.find("HTTP/1.1 200 OK"), std::string::npos);
  EXPECT_NE(got.find("\"ok\""), std::string::npos);
}

TEST_F(mock_server, a_request_head_over_the_limit_is_431_and_the_server_keeps_serving) {
  const auto got = test::raw_exchange(
      port(), "GET /_mock/health HTTP/1.1\r\nHost: x\r\nX-Padding: " + std::string(70U * 1024U, 'a') + "\r\n\r\n");
  EXPECT_EQ(got.rfind("HTTP/1.1 431 ", 0), 0U) << got.substr(0, 200);
  EXPECT_EQ(http_call(port(), "GET", "/_mock/health").status, 200U);
}

TEST(mock_server_write_timeout, a_client_that_reads_nothing_of_a_large_reply_is_dropped) {
  server_options o;
  o.write_timeout = std::chrono::milliseconds(300);
  server s(o);
  ASSERT_TRUE(s.start());
  // A recorded request of 12 MB makes the request listing larger than any socket buffers.
  ASSERT_EQ(http_call(s.port(), "POST", "/v1/chat/completions", chat_body(std::string(12U << 20U, 'x'))).status, 200U);
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket reader(io);
  reader.open(boost::asio::ip::tcp::v4());
  reader.set_option(boost::asio::socket_base::receive_buffer_size(4096));
  reader.connect({boost::asio::ip::make_address("127.0.0.1"), s.port()});
  timeval tv{};
  tv.tv_sec = 20;  // a server bug fails the test instead of hanging it
  ::setsockopt(reader.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  const std::string request = "GET /_mock/requests HTTP/1.1\r\nHost: x\r\n\r\n";
  boost::asio::write(reader, boost::asio::buffer(request));
  std::array<char, 64> start{};
  const auto n = reader.read_some(boost::asio::buffer(start));  // the reply has begun
  ASSERT_EQ(std::string_view(start.data(), n).substr(0, 12), "HTTP/1.1 200");
  // The reader reads no more: the server gives up on the reply and closes the connection.
  bool dropped = false;
  for (int i = 0; i < 3000 && !dropped; ++i) {
    dropped = s.connections() == 0;
    if (!dropped) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(dropped) << "the stalled connection is still open";
  EXPECT_EQ(http_call(s.port(), "GET", "/_mock/health").status, 200U) << "the server still serves";
}

TEST_F(mock_server, requests_are_recorded_in_order_and_listed_after_a_seq) {
  ASSERT_EQ(http_call(port(), "POST", "/v1/chat/completions", chat_body("Reply with exactly: one")).status, 200U);
  ASSERT_EQ(http_call(port(), "POST", "/v1/messages?beta=true",
                      R"({"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]})")
                .status,
            200U);
  auto r = http_call(port(), "GET", "/_mock/requests");
  ASSERT_EQ(r.status, 200U);
  const auto all = json::parse(r.body).at("requests").as_array();
  ASSERT_EQ(all.size(), 2U);
  EXPECT_EQ(all[0].at("seq"), 1);
  EXPECT_EQ(all[0].at("route"), "/v1/chat/completions");
  EXPECT_EQ(all[0].at("body").at("messages").at(0).at("content"), "Reply with exactly: one");
  EXPECT_EQ(all[1].at("route"), "/v1/messages");
  r = http_call(port(), "GET", "/_mock/requests?after=1");
  const auto later = json::parse(r.body).at("requests").as_array();
  ASSERT_EQ(later.size(), 1U);
  EXPECT_EQ(later[0].at("seq"), 2);
  EXPECT_EQ(server_.requests(1).size(), 1U);
  EXPECT_EQ(server_.requests(0), std::vector<json::value>(all.begin(), all.end()));
  EXPECT_EQ(http_call(port(), "GET", "/_mock/requests?after=x").status, 400U);
}

TEST(mock_server_record, each_request_is_appended_to_the_record_file_as_one_json_line) {
  const auto file =
      std::filesystem::temp_directory_path() / ("tether-mock-record-" + std::to_string(::getpid()) + ".jsonl");
  std::filesystem::remove(file);
  {
    server_options o;
    o.record_file = file;
    server s(o);
    ASSERT_TRUE(s.start());
    http_call(s.port(), "POST", "/v1/chat/completions", chat_body("Reply with exactly: a"));
    http_call(s.port(), "POST", "/v1/chat/completions", chat_body("Reply with exactly: b"));
  }
  std::ifstream in(file);
  std::string line;
  std::vector<json::value> lines;
  while (std::getline(in, line)) lines.push_back(json::parse(line));
  ASSERT_EQ(lines.size(), 2U);
  EXPECT_EQ(lines[1].at("seq"), 2);
  EXPECT_EQ(lines[1].at("body").at("messages").at(0).at("content"), "Reply with exactly: b");
  std::filesystem::remove(file);
}

TEST_F(mock_server, one_keep_alive_connection_serves_many_requests) {
  test::http_client c(port());
  for (int i = 0; i < 3; ++i) {
    const auto r = c.send("POST", "/v1/chat/completions", chat_body("Reply with exactly: again", i == 1));
    EXPECT_EQ(r.status, 200U);
    EXPECT_TRUE(r.complete);
    EXPECT_EQ(r.chunked, i == 1);
    EXPECT_NE(r.body.find("again"), std::string::npos);
  }
}

TEST_F(mock_server, a_client_leaving_mid_stream_leaves_the_server_serving) {
  {
    test::http_client c(port());
    const auto some =
        c.send_and_read_some("POST", "/v1/chat/completions",
                             chat_body("Stream slowly: 20\nReply with exactly: " + std::string(400, 'x'), true), 300);
    EXPECT_NE(some.find("text/event-stream"), std::string::npos);
  }  // closes the socket while the server is sleeping between deltas
  const auto r = http_call(port(), "POST", "/v1/chat/completions", chat_body("Reply with exactly: still here", true));
  EXPECT_EQ(r.status, 200U);
  EXPECT_TRUE(r.complete);
  EXPECT_NE(r.body.find("still here"), std::string::npos);
}

TEST_F(mock_server, stop_ends_streams_in_progress) {
  test::http_client c(port());
  c.send_and_read_some("POST", "/v1/chat/completions",
                       chat_body("Stream slowly: 1000\nReply with exactly: " + std::string(200, 'y'), true), 200);
  server_.stop();  // must not wait for the stream to finish
  server_.stop();  // idempotent
  bool eof = false;
  const auto rest = c.read_rest(eof);
  EXPECT_TRUE(eof);
  EXPECT_EQ(rest.find("[DONE]"), std::string::npos);
}

TEST_F(mock_server, a_second_server_on_the_same_address_reports_it_in_use) {
  server_options o;
  o.listen = "127.0.0.1:" + std::to_string(port());
  server other(o);
  const auto r = other.start();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, mock_errc::address_in_use);
}

TEST(mock_server_start, malformed_addresses_and_a_second_start_are_errors) {
  for (const auto* bad : {"127.0.0.1", "nohost:80", "127.0.0.1:99999", "127.0.0.1:", ":80"}) {
    server_options o;
    o.listen = bad;
    server s(o);
    const auto r = s.start();
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, mock_errc::invalid_listen_address) << bad;
  }
  server s(server_options{});
  ASSERT_TRUE(s.start());
  EXPECT_EQ(s.start().error().code, mock_errc::already_started);
}

TEST(mock_server_start, a_record_file_that_cannot_be_opened_fails_start) {
  server_options o;
  o.record_file = "/nonexistent-dir/for/sure/rec.jsonl";
  server s(o);
  const auto r = s.start();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, mock_errc::record_failed);
}

}  // namespace
}  // namespace tether::mock
