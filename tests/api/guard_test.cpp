#include "api/guard.h"

#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "server_fixture.h"

namespace tether::api {
namespace {

using namespace std::chrono_literals;
using namespace testing_support;

TEST(host_allowed, ip_literals_localhost_and_named_hosts_pass_and_other_names_do_not) {
  const std::vector<std::string> named{"tether.internal"};
  for (const char* ok : {"", "127.0.0.1", "127.0.0.1:7420", "10.1.2.3:80", "[::1]", "[::1]:7420", "localhost",
                         "LOCALHOST:7420", "localhost.:1", "tether.internal", "Tether.Internal:8080"})
    EXPECT_TRUE(host_allowed(ok, named)) << ok;
  for (const char* bad : {"evil.example", "evil.example:7420", "localhost.evil.example", "127.0.0.1.evil.example",
                          "[not-v6]:1", "tether.internal.evil", "x"})
    EXPECT_FALSE(host_allowed(bad, named)) << bad;
}

TEST(credential_throttle, an_address_that_used_its_failures_waits_and_others_do_not) {
  credential_throttle t({.burst = 3, .per_second = 1, .max_addresses = 2});
  const auto t0 = credential_throttle::clock::now();
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(t.wait_s("a", t0), 0) << i;
    t.failed("a", t0);
  }
  EXPECT_EQ(t.wait_s("a", t0), 1);
  EXPECT_EQ(t.wait_s("b", t0), 0) << "another address is not held back";
  EXPECT_EQ(t.wait_s("a", t0 + 1s), 0) << "a second gives one try back";
  t.failed("a", t0 + 1s);
  EXPECT_EQ(t.wait_s("a", t0 + 1s), 1);
  // At most two addresses are remembered: a third makes the throttle forget the oldest.
  t.failed("b", t0 + 1s);
  t.failed("c", t0 + 1s);
  EXPECT_EQ(t.wait_s("a", t0 + 1s), 0);
}

class guard_test : public api_server_test {
 protected:
  std::uint16_t port() { return server_->port(); }
  reply with_host(const std::string& host, const std::string& target, const std::string& headers = auth_header) {
    raw_connection c(port());
    c.write("GET " + target + " HTTP/1.1\r\nHost: " + host + "\r\n" + headers + "\r\n");
    return c.read();
  }
  reply attempt(const std::string& target, const std::string& headers, const std::string& body = "",
                const std::string& method = "GET") {
    raw_connection c(port());
    c.write(raw_request(method, target, body,
                        headers + (body.empty() ? std::string() : std::string("Content-Type: application/json\r\n"))));
    return c.read();
  }
};

// DNS rebinding: a page on evil.example resolved to 127.0.0.1 reaches the
// server with its own name as Host; nothing answers it, health and sign-in
// included.
TEST_F(guard_test, a_request_for_a_host_name_the_server_does_not_answer_to_is_refused_everywhere) {
  for (const std::string target : {"/v1/health", "/v1/sessions", "/v1/auth/session", "/ui/"}) {
    auto r = with_host("evil.example:7420", target);
    EXPECT_EQ(r.status, 421U) << target << ": " << r.raw;
    EXPECT_NE(r.raw.find("evil.example"), std::string::npos) << r.raw;
  }
  raw_connection c(port());
  c.write(
      "POST /v1/auth/login HTTP/1.1\r\nHost: rebound.example\r\nContent-Type: application/json\r\nContent-Length: "
      "24\r\n\r\n{\"token\":\"s3cret-token\"}");
  auto login = c.read();
  EXPECT_EQ(login.status, 421U);
  EXPECT_TRUE(login.header("Set-Cookie").empty());
  EXPECT_EQ(with_host("127.0.0.1:1", "/v1/sessions").status, 200U);
  EXPECT_EQ(with_host("localhost", "/v1/sessions").status, 200U);

  server_options o;
  o.allowed_hosts = {"tether.internal"};
  restart_server(o);
  EXPECT_EQ(with_host("tether.internal:7420", "/v1/sessions").status, 200U);
  EXPECT_EQ(with_host("evil.example", "/v1/sessions").status, 421U);
}

// Brute force: wrong tokens from one address are throttled (429 with
// Retry-After) before they are even compared, the right one included, and
// sign-in counts the same as the bearer header.
TEST_F(guard_test, wrong_tokens_from_one_address_are_throttled_and_the_right_one_waits_too) {
  int refused = 0;
  int throttled = 0;
  std::string retry_after;
  for (int i = 0; i < 40; ++i) {
    auto r = i % 2 == 0 ? attempt("/v1/sessions", "Authorization: Bearer guess-" + std::to_string(i) + "\r\n")
                        : attempt("/v1/auth/login", "", R"({"token":"guess"})", "POST");
    if (r.status == 401U) ++refused;
    if (r.status == 429U) {
      ++throttled;
      retry_after = r.header("Retry-After");
    }
  }
  EXPECT_LE(refused, 21) << "no more than the burst (and what refills meanwhile) is compared";
  EXPECT_GE(throttled, 19);
  EXPECT_FALSE(retry_after.empty());
  auto right = attempt("/v1/sessions", auth_header);
  EXPECT_EQ(right.status, 429U) << "while throttled, the right token is not checked either";
  EXPECT_EQ(attempt("/v1/health", "").status, 200U) << "health needs no credential and is never throttled";
  // Another address is not held back.
  raw_connection other(port(), "127.0.0.2");
  other.write(raw_request("GET", "/v1/sessions", "", auth_header));
  EXPECT_EQ(other.read().status, 200U);
}

TEST_F(guard_test, a_sign_in_body_over_four_kib_is_refused_before_it_is_read) {
  raw_connection c(port());
  c.write("POST /v1/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: "
          "60000\r\n\r\n");
  EXPECT_EQ(c.read().status, 413U);
}

}  // namespace
}  // namespace tether::api
