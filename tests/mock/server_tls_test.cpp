// `mock-llm --tls`: the scripted model over HTTPS, with a self-signed
// certificate a client verifies by trusting its PEM (host name checks on).
#include "mock/server.h"

#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/time.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "http/server_tls.h"
#include "http_client.h"
#include "wire_client.h"

namespace tether::mock {
namespace {

namespace net = boost::asio;
namespace ssl = net::ssl;
namespace beast = boost::beast;
namespace bhttp = beast::http;
namespace json = boost::json;
using tcp = net::ip::tcp;

struct https_reply {
  boost::system::error_code error;  // handshake or I/O failure
  unsigned status = 0;
  std::string body;
};

// One POST over a fresh TLS connection to 127.0.0.1:port that trusts exactly
// `trusted_pem` and checks that the certificate names `host`.
https_reply https_post(std::uint16_t port, const std::string& trusted_pem, const std::string& host,
                       const std::string& target, const std::string& body) {
  net::io_context io;
  ssl::context ctx(ssl::context::tls_client);
  ctx.add_certificate_authority(net::buffer(trusted_pem));
  ctx.set_verify_mode(ssl::verify_peer);
  ctx.set_verify_callback(ssl::host_name_verification(host));
  beast::ssl_stream<tcp::socket> stream(io, ctx);
  https_reply out;
  stream.next_layer().connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port), out.error);
  if (out.error) return out;
  timeval tv{};
  tv.tv_sec = 20;  // a server bug fails the test instead of hanging it
  ::setsockopt(stream.next_layer().native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  stream.handshake(ssl::stream_base::client, out.error);
  if (out.error) return out;
  bhttp::request<bhttp::string_body> req{bhttp::verb::post, target, 11};
  req.set(bhttp::field::host, host);
  req.set(bhttp::field::content_type, "application/json");
  req.body() = body;
  req.prepare_payload();
  bhttp::write(stream, req, out.error);
  if (out.error) return out;
  beast::flat_buffer buffer;
  bhttp::response<bhttp::string_body> res;
  bhttp::read(stream, buffer, res, out.error);
  out.status = res.result_int();
  out.body = res.body();
  return out;
}

std::string chat_body(const std::string& user_text, bool stream) {
  const std::vector<test::turn> history = {test::turn{role::user, user_text}};
  return json::serialize(test::build_request(wire_format::chat, history, {test::bash_tool()}, stream));
}

class mock_server_tls : public ::testing::Test {
 protected:
  void SetUp() override {
    auto id = http::make_self_signed_identity();
    ASSERT_TRUE(id) << id.error().describe();
    identity_ = *id;
    server_ = std::make_unique<server>(server_options{.tls = identity_});
    ASSERT_TRUE(server_->start());
  }
  std::uint16_t port() const { return server_->port(); }
  http::tls_identity identity_;
  std::unique_ptr<server> server_;
};

TEST_F(mock_server_tls, base_url_says_https) {
  EXPECT_EQ(server_->base_url(), "https://127.0.0.1:" + std::to_string(port()));
}

TEST_F(mock_server_tls, a_client_trusting_the_certificate_completes_a_chat_request) {
  const auto r = https_post(port(), identity_.certificate_pem, "127.0.0.1", "/v1/chat/completions",
                            chat_body("Reply with exactly: over TLS", false));
  ASSERT_FALSE(r.error) << r.error.message();
  ASSERT_EQ(r.status, 200U) << r.body;
  EXPECT_EQ(json::parse(r.body).at("choices").at(0).at("message").at("content"), "over TLS");
  EXPECT_EQ(server_->requests().size(), 1U);
}

TEST_F(mock_server_tls, a_streamed_chat_request_arrives_whole_over_tls) {
  const auto r = https_post(port(), identity_.certificate_pem, "localhost", "/v1/chat/completions",
                            chat_body("Reply with exactly: streamed", true));
  ASSERT_FALSE(r.error) << r.error.message();
  ASSERT_EQ(r.status, 200U);
  std::string text;
  for (const auto& m : test::parse_sse(r.body)) {
    if (m.data == "[DONE]") continue;
    const auto chunk = json::parse(m.data);
    const auto& choices = chunk.at("choices").as_array();
    if (choices.empty()) continue;
    if (const auto* c = choices.at(0).at("delta").as_object().if_contains("content"); c && c->is_string())
      text += c->as_string();
  }
  EXPECT_EQ(text, "streamed");
}

TEST_F(mock_server_tls, a_client_trusting_another_certificate_fails_the_handshake) {
  auto other = http::make_self_signed_identity();
  ASSERT_TRUE(other);
  const auto r = https_post(port(), other->certificate_pem, "127.0.0.1", "/v1/chat/completions",
                            chat_body("Reply with exactly: no", false));
  EXPECT_TRUE(r.error);
  EXPECT_EQ(r.status, 0U);
  EXPECT_TRUE(server_->requests().empty());
}

TEST_F(mock_server_tls, the_certificate_names_only_the_loopback_host) {
  const auto r = https_post(port(), identity_.certificate_pem, "example.com", "/v1/chat/completions",
                            chat_body("Reply with exactly: no", false));
  EXPECT_TRUE(r.error);
  EXPECT_TRUE(server_->requests().empty());
}

TEST_F(mock_server_tls, plain_http_on_the_tls_port_gets_no_answer) {
  const auto r = test::raw_exchange(port(), "GET /_mock/health HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(r.find("HTTP/1.1 200"), std::string::npos);
}

TEST(mock_server_tls_setup, a_key_that_does_not_match_the_certificate_is_refused_at_start) {
  auto a = http::make_self_signed_identity();
  auto b = http::make_self_signed_identity();
  ASSERT_TRUE(a && b);
  server s(server_options{.tls = http::tls_identity{a->certificate_pem, b->private_key_pem}});
  const auto r = s.start();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), http::server_errc::tls_failed);
}

TEST(mock_server_tls_setup, a_pem_that_does_not_parse_is_refused_at_start) {
  server s(server_options{.tls = http::tls_identity{"not a certificate", "not a key"}});
  const auto r = s.start();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), http::server_errc::tls_failed);
}

}  // namespace
}  // namespace tether::mock
