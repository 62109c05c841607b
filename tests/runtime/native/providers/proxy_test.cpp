#include "http/proxy.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "runtime/native/providers/cassette.h"
#include "runtime/native/providers/loopback.h"

namespace tether::runtime::native {
namespace {

using testing::load_cassette;
using testing::loopback_server;
using testing::response_head;
using testing::response_plan;
using testing::run_stream;
using testing::test_proxy;

TEST(no_proxy, curl_rules) {
  EXPECT_TRUE(http::no_proxy_matches("*", "api.openai.com", 443));
  EXPECT_TRUE(http::no_proxy_matches("example.com", "example.com", 443));
  EXPECT_TRUE(http::no_proxy_matches("example.com", "api.EXAMPLE.com", 443));
  EXPECT_FALSE(http::no_proxy_matches("example.com", "notexample.com", 443));
  EXPECT_TRUE(http::no_proxy_matches(".example.com", "example.com", 80));
  EXPECT_TRUE(http::no_proxy_matches(".example.com", "a.b.example.com", 80));
  EXPECT_TRUE(http::no_proxy_matches("foo, example.com:8443", "example.com", 8443));
  EXPECT_FALSE(http::no_proxy_matches("example.com:8443", "example.com", 443));
  EXPECT_TRUE(http::no_proxy_matches("localhost,127.0.0.1", "127.0.0.1", 9000));
  EXPECT_TRUE(http::no_proxy_matches("[::1]", "::1", 9000));
  EXPECT_TRUE(http::no_proxy_matches("::1", "::1", 9000));
  EXPECT_TRUE(http::no_proxy_matches("[::1]:9000", "::1", 9000));
  EXPECT_FALSE(http::no_proxy_matches("", "127.0.0.1", 80));
  EXPECT_FALSE(http::no_proxy_matches(" , ", "127.0.0.1", 80));
  EXPECT_FALSE(http::no_proxy_matches("*.example.com", "example.org", 80));
}

TEST(select_proxy, the_scheme_picks_the_variable_and_options_replace_the_environment) {
  http::proxy_config c;
  c.http_proxy = "http://proxy.local:3128";
  c.https_proxy = "secure.local:8080";
  c.no_proxy = "internal.example";
  auto http = http::select_proxy(*http::parse_http_url("http://api.example.com/v1"), c);
  ASSERT_TRUE(http && *http);
  EXPECT_EQ((*http)->host, "proxy.local");
  EXPECT_EQ((*http)->port, 3128);
  auto https = http::select_proxy(*http::parse_http_url("https://api.example.com/v1"), c);
  ASSERT_TRUE(https && *https);
  EXPECT_EQ((*https)->host, "secure.local");
  auto direct = http::select_proxy(*http::parse_http_url("https://internal.example/v1"), c);
  ASSERT_TRUE(direct);
  EXPECT_FALSE(*direct);
  c.https_proxy = "socks5://proxy.local:1080";
  EXPECT_FALSE(http::select_proxy(*http::parse_http_url("https://api.example.com"), c));
  c.https_proxy = "";
  auto none = http::select_proxy(*http::parse_http_url("https://api.example.com"), c);
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none);
}

TEST(select_proxy, loopback_is_proxied_unless_no_proxy_says_otherwise) {
  ::setenv("http_proxy", "http://127.0.0.1:1", 1);
  ::unsetenv("no_proxy");
  ::unsetenv("NO_PROXY");
  auto p = http::select_proxy(*http::parse_http_url("http://127.0.0.1:9000/v1"), http::proxy_config{});
  ASSERT_TRUE(p);
  EXPECT_TRUE(*p);
  ::setenv("NO_PROXY", "localhost,127.0.0.1", 1);
  auto q = http::select_proxy(*http::parse_http_url("http://127.0.0.1:9000/v1"), http::proxy_config{});
  ASSERT_TRUE(q);
  EXPECT_FALSE(*q);
  ::unsetenv("http_proxy");
  ::unsetenv("NO_PROXY");
}

TEST(parse_http_url, targets_and_authorities) {
  auto u = http::parse_http_url("https://api.openai.com/v1/responses?x=1");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->port, 443);
  EXPECT_EQ(u->target, "/v1/responses?x=1");
  EXPECT_EQ(u->authority(), "api.openai.com");
  EXPECT_EQ(u->host_port(), "api.openai.com:443");
  auto v = http::parse_http_url("http://[::1]:8080");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->host, "::1");
  EXPECT_EQ(v->authority(), "[::1]:8080");
  EXPECT_EQ(v->target, "/");
  EXPECT_FALSE(http::parse_http_url("ftp://example.com"));
  EXPECT_FALSE(http::parse_http_url("not a url"));
}

provider_options chat_options(const std::string& base) {
  provider_options o;
  o.api = wire_api::openai_chat;
  o.base_url = base;
  o.api_key = "sk-test-proxy";
  o.model = "gpt-4o-mini";
  o.deadlines.connect = std::chrono::milliseconds(5000);
  return o;
}

model_request hello() {
  model_request r;
  r.model = "gpt-4o-mini";
  r.messages.push_back(chat_message{.role = chat_role::user, .text = "Say hello."});
  return r;
}

response_plan chat_text_plan() {
  const auto c = load_cassette("openai_chat_text");
  response_plan p;
  p.head = response_head(c);
  p.body = c.body;
  return p;
}

TEST(proxy, plain_http_goes_through_the_proxy_in_absolute_form) {
  loopback_server server(chat_text_plan());
  test_proxy proxy;
  auto o = chat_options(server.url("/v1"));
  o.http_proxy = proxy.url();
  o.no_proxy = "";
  const auto run = run_stream(o, hello());
  ASSERT_TRUE(run.outcome) << run.outcome.failure.message;
  EXPECT_EQ(run.outcome.done->text, "Hello! How can I help?");
  const auto lines = proxy.request_lines();
  ASSERT_EQ(lines.size(), 1U);
  EXPECT_EQ(lines[0], "POST " + server.url("/v1/chat/completions") + " HTTP/1.1");
  ASSERT_EQ(server.requests().size(), 1U);
  EXPECT_EQ(server.requests()[0].header("authorization"), "Bearer sk-test-proxy");
}

TEST(proxy, the_environment_proxy_is_used_and_no_proxy_bypasses_it) {
  loopback_server server(chat_text_plan());
  test_proxy proxy;
  ::setenv("HTTP_PROXY", proxy.url().c_str(), 1);
  ::unsetenv("http_proxy");
  ::unsetenv("no_proxy");
  ::unsetenv("NO_PROXY");
  const auto via_proxy = run_stream(chat_options(server.url("/v1")), hello());
  EXPECT_TRUE(via_proxy.outcome) << via_proxy.outcome.failure.message;
  EXPECT_EQ(proxy.request_lines().size(), 1U);

  ::setenv("NO_PROXY", "example.com, 127.0.0.1", 1);
  const auto direct = run_stream(chat_options(server.url("/v1")), hello());
  EXPECT_TRUE(direct.outcome) << direct.outcome.failure.message;
  EXPECT_EQ(proxy.request_lines().size(), 1U);  // not used again
  EXPECT_EQ(server.requests().size(), 2U);
  ::unsetenv("HTTP_PROXY");
  ::unsetenv("NO_PROXY");
}

TEST(proxy, https_opens_a_connect_tunnel_before_tls) {
  // The tunnel reaches a plain HTTP server, so the TLS handshake inside it
  // fails: the CONNECT line proves the route, the error that nothing was sent.
  auto plan = chat_text_plan();
  plan.answer_at_once = true;  // a plain HTTP answer to the ClientHello
  loopback_server server(plan);
  test_proxy proxy;
  auto o = chat_options("https://127.0.0.1:" + std::to_string(server.port()) + "/v1");
  o.https_proxy = proxy.url();
  o.no_proxy = "";
  const auto run = run_stream(o, hello());
  ASSERT_FALSE(run.outcome);
  EXPECT_EQ(run.outcome.failure.kind, provider_errc::transport) << run.outcome.failure.message;
  EXPECT_FALSE(run.outcome.failure.request_sent);
  const auto lines = proxy.request_lines();
  ASSERT_EQ(lines.size(), 1U);
  EXPECT_EQ(lines[0], "CONNECT 127.0.0.1:" + std::to_string(server.port()) + " HTTP/1.1");
}

TEST(proxy, a_refused_connect_is_a_transport_failure_before_sending) {
  test_proxy proxy(/*refuse_connect=*/true);
  auto o = chat_options("https://api.example.com/v1");
  o.https_proxy = proxy.url();
  o.no_proxy = "";
  const auto run = run_stream(o, hello());
  ASSERT_FALSE(run.outcome);
  EXPECT_EQ(run.outcome.failure.kind, provider_errc::transport);
  EXPECT_FALSE(run.outcome.failure.request_sent);
  EXPECT_NE(run.outcome.failure.message.find("407"), std::string::npos) << run.outcome.failure.message;
}

}  // namespace
}  // namespace tether::runtime::native
