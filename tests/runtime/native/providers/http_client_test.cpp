#include "http/client.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "runtime/native/providers/cassette.h"
#include "runtime/native/providers/loopback.h"
#include "runtime/native/providers/provider.h"
#include "support/run.h"

namespace tether::runtime::native {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using testing::framing;
using testing::load_cassette;
using testing::loopback_server;
using testing::response_head;
using testing::response_plan;
using testing::run_stream;

provider_options chat_options(const std::string& base) {
  provider_options o;
  o.api = wire_api::openai_chat;
  o.base_url = base;
  o.api_key = "sk-test-SECRET-4242";
  o.model = "gpt-4o-mini";
  o.http_proxy = o.https_proxy = o.no_proxy = std::string();
  return o;
}

model_request hello() {
  model_request r;
  r.model = "gpt-4o-mini";
  r.messages.push_back(chat_message{.role = chat_role::user, .text = "Say hello."});
  return r;
}

response_plan cassette_plan(const std::string& name) {
  const auto c = load_cassette(name);
  response_plan p;
  p.head = response_head(c);
  p.body = c.body;
  return p;
}

std::uint16_t closed_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);  // nothing listens there now
  return ntohs(addr.sin_port);
}

TEST(http_client, a_server_that_never_answers_times_out_after_the_request_was_sent) {
  response_plan plan;
  plan.hang = true;
  loopback_server server(plan);
  auto o = chat_options(server.url("/v1"));
  o.deadlines.first_byte = 200ms;
  const auto run = run_stream(o, hello());
  ASSERT_FALSE(run.outcome);
  EXPECT_EQ(run.outcome.failure.kind, provider_errc::timeout) << run.outcome.failure.message;
  EXPECT_TRUE(run.outcome.failure.request_sent);
  EXPECT_FALSE(run.outcome.failure.output_seen);
  EXPECT_EQ(run.outcome.failure.http_status, 0);
}

TEST(http_client, a_stream_that_stalls_after_output_times_out_with_output_seen) {
  auto plan = cassette_plan("openai_chat_text");
  plan.body = plan.body.substr(0, plan.body.find("data: [DONE]"));
  plan.frame = framing::close;
  plan.hang_after_body = true;
  loopback_server server(plan);
  auto o = chat_options(server.url("/v1"));
  o.deadlines.idle = 200ms;
  const auto run = run_stream(o, hello());
  ASSERT_FALSE(run.outcome);
  EXPECT_EQ(run.outcome.failure.kind, provider_errc::timeout) << run.outcome.failure.message;
  EXPECT_TRUE(run.outcome.failure.output_seen);
  EXPECT_EQ(run.outcome.failure.http_status, 200);
}

asio::awaitable<void> stop_later(std::shared_ptr<std::stop_source> src) {
  asio::steady_timer t(co_await asio::this_coro::executor, 50ms);
  co_await t.async_wait(asio::use_awaitable);
  src->request_stop();
}

asio::awaitable<stream_outcome> stream_with_stop(std::shared_ptr<provider> p, model_request r, std::stop_token st) {
  auto out = co_await p->stream(std::move(r), stream_sink(), st);
  co_return out;
}

TEST(http_client, stop_abandons_a_waiting_request_and_reports_cancelled) {
  response_plan plan;
  plan.hang = true;
  loopback_server server(plan);
  asio::io_context io;
  std::shared_ptr<provider> p = make_provider(chat_options(server.url("/v1")));
  auto src = std::make_shared<std::stop_source>();
  asio::co_spawn(io, stop_later(src), asio::detached);
  const auto out = tether::test::run_sync(io, stream_with_stop(p, hello(), src->get_token()));
  ASSERT_FALSE(out);
  EXPECT_EQ(out.failure.kind, provider_errc::cancelled);
}

TEST(http_client, a_stop_requested_before_the_call_sends_nothing) {
  response_plan plan;
  loopback_server server(plan);
  asio::io_context io;
  std::shared_ptr<provider> p = make_provider(chat_options(server.url("/v1")));
  std::stop_source src;
  src.request_stop();
  const auto out = tether::test::run_sync(io, stream_with_stop(p, hello(), src.get_token()));
  ASSERT_FALSE(out);
  EXPECT_EQ(out.failure.kind, provider_errc::cancelled);
  EXPECT_FALSE(out.failure.request_sent);
  EXPECT_TRUE(server.requests().empty());
}

TEST(http_client, a_body_over_the_cap_is_a_bad_response) {
  response_plan plan;
  plan.body = std::string(1 << 20, 'x');  // 1 MiB of non-events
  plan.piece = 64 * 1024;
  loopback_server server(plan);
  auto o = chat_options(server.url("/v1"));
  o.max_response_bytes = 64 * 1024;
  const auto run = run_stream(o, hello());
  ASSERT_FALSE(run.outcome);
  EXPECT_EQ(run.outcome.failure.kind, provider_errc::bad_response);
  EXPECT_NE(run.outcome.failure.message.find("exceeds 65536 bytes"), std::string::npos) << run.outcome.failure.message;
}

TEST(http_client, a_huge_error_body_is_read_only_up_to_a_cap) {
  response_plan plan;
  plan.head = "HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/html\r\n";
  plan.body =
      "<html><head><title>Service Unavailable</title></head><body>" + std::string(4 << 20, 'x') + "</body></html>";
  plan.piece = 64 * 1024;
  loopback_server server(plan);
  const auto run = run_stream(chat_options(server.url("/v1")), hello());
  ASSERT_FALSE(run.outcome);
  EXPECT_EQ(run.outcome.failure.kind, provider_errc::overloaded);
  EXPECT_EQ(run.outcome.failure.provider_message, "Service Unavailable");
}

TEST(http_client, nobody_listening_is_a_transport_failure_before_sending) {
  const auto run = run_stream(chat_options("http://127.0.0.1:" + std::to_string(closed_port()) + "/v1"), hello());
  ASSERT_FALSE(run.outcome);
  EXPECT_EQ(run.outcome.failure.kind, provider_errc::transport);
  EXPECT_FALSE(run.outcome.failure.request_sent);
}

TEST(http_client, tls_to_a_plain_server_fails_the_handshake_before_sending) {
  response_plan plan;
  plan.answer_at_once = true;  // a plain HTTP answer to the ClientHello
  loopback_server server(plan);
  auto o = chat_options("https://127.0.0.1:" + std::to_string(server.port()) + "/v1");
  o.deadlines.connect = 5s;
  const auto run = run_stream(o, hello());
  ASSERT_FALSE(run.outcome);
  EXPECT_EQ(run.outcome.failure.kind, provider_errc::transport) << run.outcome.failure.message;
  EXPECT_FALSE(run.outcome.failure.request_sent);
  EXPECT_NE(run.outcome.failure.message.find("TLS handshake"), std::string::npos) << run.outcome.failure.message;
}

TEST(http_client, a_malformed_base_url_is_an_invalid_request) {
  const auto run = run_stream(chat_options("api.openai.com/v1"), hello());
  ASSERT_FALSE(run.outcome);
  EXPECT_EQ(run.outcome.failure.kind, provider_errc::invalid_request);
}

TEST(http_client, the_api_key_never_appears_in_an_error) {
  response_plan plan;
  plan.head = "HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\n";
  plan.body =
      R"({"error":{"message":"Incorrect API key provided: sk-test-SECRET-4242.","type":"invalid_request_error","code":"invalid_api_key"}})";
  loopback_server server(plan);
  const auto run = run_stream(chat_options(server.url("/v1")), hello());
  ASSERT_FALSE(run.outcome);
  EXPECT_EQ(run.outcome.failure.kind, provider_errc::auth);
  EXPECT_EQ(run.outcome.failure.message.find("SECRET"), std::string::npos) << run.outcome.failure.message;
  EXPECT_EQ(run.outcome.failure.provider_message.find("SECRET"), std::string::npos);
  EXPECT_NE(run.outcome.failure.provider_message.find("[redacted]"), std::string::npos);
  EXPECT_EQ(server.requests().at(0).header("authorization"), "Bearer sk-test-SECRET-4242");
}

TEST(http_client, every_body_framing_gives_the_same_completion) {
  for (auto frame : {framing::chunked, framing::content_length, framing::close}) {
    auto plan = cassette_plan("openai_chat_text");
    plan.frame = frame;
    plan.piece = 5;
    loopback_server server(plan);
    const auto run = run_stream(chat_options(server.url("/v1")), hello());
    ASSERT_TRUE(run.outcome) << static_cast<int>(frame) << ": " << run.outcome.failure.message;
    EXPECT_EQ(run.outcome.done->text, "Hello! How can I help?");
  }
}

class counting_tap final : public http::http_tap {
 public:
  void on_request(const http::http_request& r) override { url = r.url; }
  void on_head(const http::http_response_head& h) override { status = h.status; }
  void on_body(std::string_view b) override { body += b; }
  std::string url;
  int status = 0;
  std::string body;
};

TEST(http_client, a_tap_sees_the_exchange_as_it_happens) {
  auto plan = cassette_plan("openai_chat_text");
  loopback_server server(plan);
  auto o = chat_options(server.url("/v1"));
  auto tap = std::make_shared<counting_tap>();
  o.tap = tap;
  const auto run = run_stream(o, hello());
  ASSERT_TRUE(run.outcome);
  EXPECT_EQ(tap->url, server.url("/v1/chat/completions"));
  EXPECT_EQ(tap->status, 200);
  EXPECT_EQ(tap->body, plan.body);
}

asio::awaitable<http::http_result> send_once(std::shared_ptr<http::http_client> c, http::http_request r,
                                             http::http_handler h) {
  auto out = co_await c->send(std::move(r), std::move(h), std::stop_token());
  co_return out;
}

TEST(http_client, the_body_arrives_de_chunked_and_on_body_may_stop_early) {
  response_plan plan;
  plan.head = "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n";
  plan.body = std::string(100'000, 'a');
  plan.piece = 1000;
  plan.hang_after_body = true;  // stopping early must not wait for the server
  loopback_server server(plan);
  http::http_options opts;
  opts.proxies.http_proxy = "";
  auto client = std::make_shared<http::http_client>(opts);
  http::http_request req;
  req.url = server.url("/x");
  req.body = "{}";
  std::string got;
  int status = 0;
  http::http_handler h;
  h.on_head = [&](const http::http_response_head& head) { status = head.status; };
  h.on_body = [&](std::string_view piece) {
    got += piece;
    return got.size() >= 5000 ? http::body_action::stop : http::body_action::more;
  };
  asio::io_context io;
  const auto r = tether::test::run_sync(io, send_once(client, req, h));
  EXPECT_FALSE(r.error) << r.message;
  EXPECT_TRUE(r.request_sent);
  EXPECT_EQ(status, 200);
  EXPECT_GE(got.size(), 5000U);
  EXPECT_EQ(got.find_first_not_of('a'), std::string::npos);
  EXPECT_EQ(server.requests().at(0).header("content-length"), "2");
  EXPECT_EQ(server.requests().at(0).header("host"), "127.0.0.1:" + std::to_string(server.port()));
}

TEST(http_client, a_recorded_exchange_replays_byte_for_byte_without_secrets) {
  const auto original = load_cassette("anthropic_tool_call");
  response_plan plan;
  plan.head = response_head(original);
  plan.body = original.body;
  loopback_server server(plan);
  provider_options o;
  o.api = wire_api::anthropic;
  o.base_url = server.url("/v1");
  o.api_key = "sk-ant-SECRET";
  o.http_proxy = o.https_proxy = o.no_proxy = std::string();
  auto recorder = std::make_shared<testing::cassette_recorder>();
  o.tap = recorder;
  model_request r;
  r.model = "claude-sonnet-4-20250514";
  r.messages.push_back(chat_message{.role = chat_role::user, .text = "Show me src/main.cpp."});
  ASSERT_TRUE(run_stream(o, r).outcome);
  const auto file =
      std::filesystem::temp_directory_path() / ("tether-cassette-" + std::to_string(::getpid()) + ".http");
  recorder->write(file);
  const auto copy = testing::load_cassette_file(file);
  std::ifstream in(file);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(file);
  EXPECT_EQ(copy.body, original.body);
  EXPECT_EQ(copy.status_line, "HTTP/1.1 200 OK");
  EXPECT_EQ(copy.path, "/v1/messages");
  EXPECT_EQ(text.find("SECRET"), std::string::npos);
  EXPECT_NE(text.find("x-api-key: [redacted]"), std::string::npos);
}

}  // namespace
}  // namespace tether::runtime::native
