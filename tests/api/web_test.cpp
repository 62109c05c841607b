// The web interface's routes over a real server: its files, sign-in by
// cookie, CSRF, profiles and the qualification results.
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include <gtest/gtest.h>
#include <boost/asio/ssl.hpp>

#include "api/errors.h"
#include "api/server_fixture.h"
#include "api/web_auth.h"
#include "http/server_tls.h"
#include "web/assets.h"

namespace tether::api {
namespace {

using namespace testing_support;

// A request with these header lines ("Name: value\r\n" each), on its own connection.
reply request(std::uint16_t port, const std::string& method, const std::string& target, const std::string& headers,
              const std::string& body = "") {
  raw_connection c(port);
  c.write(raw_request(method, target, body,
                      headers + (body.empty() ? std::string() : std::string("Content-Type: application/json\r\n"))));
  return c.read();
}

std::string cookie_of(const reply& r) {
  const auto set = r.header("Set-Cookie");
  return set.substr(0, set.find(';'));  // "tether_session=…"
}

class web_test : public api_server_test {
 protected:
  std::uint16_t port() { return server_->port(); }
  // Signs in: the Cookie header line and the CSRF token.
  std::pair<std::string, std::string> sign_in() {
    auto r = request(port(), "POST", "/v1/auth/login", "", R"({"token":"s3cret-token"})");
    EXPECT_EQ(r.status, 200U) << r.raw;
    return {"Cookie: " + cookie_of(r) + "\r\n", std::string(r.body.at("csrf").as_string())};
  }
};

TEST_F(web_test, the_interface_is_served_from_the_binary_with_an_etag_and_a_strict_policy) {
  auto root = request(port(), "GET", "/", "");
  EXPECT_EQ(root.status, 302U);
  EXPECT_EQ(root.header("Location"), "/ui/");
  // Without the slash (the page's relative links need it): moved for good,
  // with the query kept, and a text body, not an empty "JSON" one.
  for (const auto& [target, location] : {std::pair{"/ui", "/ui/"}, std::pair{"/ui?", "/ui/?"},
                                         std::pair{"/ui?session=s1", "/ui/?session=s1"}}) {
    auto moved = request(port(), "GET", target, "");
    EXPECT_EQ(moved.status, 301U) << target;
    EXPECT_EQ(moved.header("Location"), location) << target;
    EXPECT_EQ(moved.header("Content-Type"), "text/plain; charset=utf-8") << target;
    EXPECT_EQ(moved.raw, "the interface is at /ui/\n") << target;
  }
  auto page = request(port(), "GET", "/ui/", "");
  ASSERT_EQ(page.status, 200U);
  const auto* index = web::find_asset("index.html");
  ASSERT_NE(index, nullptr) << "src/web/assets/index.html is compiled in";
  EXPECT_EQ(page.raw, index->body);
  EXPECT_EQ(page.header("Content-Type"), "text/html; charset=utf-8");
  EXPECT_EQ(page.header("ETag"), index->etag);
  EXPECT_EQ(page.header("Cache-Control"), "no-cache");
  const auto csp = page.header("Content-Security-Policy");
  EXPECT_NE(csp.find("default-src 'none'"), std::string::npos) << csp;
  EXPECT_NE(csp.find("script-src 'self'"), std::string::npos) << csp;
  EXPECT_EQ(csp.find("unsafe-inline"), std::string::npos) << csp;
  EXPECT_NE(csp.find("frame-ancestors 'none'"), std::string::npos) << csp;
  EXPECT_EQ(page.header("X-Content-Type-Options"), "nosniff");
  // Revalidation: the same ETag is 304 with no body.
  auto again = request(port(), "GET", "/ui/", "If-None-Match: " + std::string(index->etag) + "\r\n");
  EXPECT_EQ(again.status, 304U);
  EXPECT_TRUE(again.raw.empty());
  // Every asset by name, with its own type; nothing else, and no path out of the set.
  for (const auto& a : web::assets()) {
    auto r = request(port(), "GET", "/ui/" + std::string(a.name), "");
    EXPECT_EQ(r.status, 200U) << a.name;
    EXPECT_EQ(r.raw, a.body) << a.name;
    EXPECT_EQ(r.header("Content-Type"), a.content_type) << a.name;
  }
  for (const char* bad : {"/ui/nothing.js", "/ui/../token", "/ui/%2e%2e/token", "/ui/a/b.js", "/ui/..%2ftoken"})
    EXPECT_EQ(request(port(), "GET", bad, "").status, 404U) << bad;
  EXPECT_EQ(request(port(), "POST", "/ui/", "").status, 405U);
}

TEST_F(web_test, the_page_has_no_inline_script_or_style_and_no_external_url) {
  for (const auto& a : web::assets()) {
    const std::string body(a.body);
    if (a.name.ends_with(".html")) {
      EXPECT_EQ(body.find("<script>"), std::string::npos) << a.name;
      EXPECT_EQ(body.find("<style"), std::string::npos) << a.name;
      EXPECT_EQ(body.find(" style="), std::string::npos) << a.name;
      EXPECT_FALSE(std::regex_search(body, std::regex(R"(<[^>]*\son[a-z]+\s*=)", std::regex::icase)))
          << a.name << ": an inline event handler";
    }
    if (a.name.ends_with(".js")) {
      EXPECT_EQ(body.find("eval("), std::string::npos) << a.name;
      EXPECT_EQ(body.find("new Function"), std::string::npos) << a.name;
      EXPECT_EQ(body.find("innerHTML"), std::string::npos) << a.name << ": text goes in as text";
    }
    for (const char* external : {"http://", "https://", "//cdn", "@import"}) {
      if (a.name.ends_with(".svg") && std::string_view(external) == "http://") continue;  // the SVG namespace URI
      if (a.name.ends_with(".js") && std::string_view(external) != "@import") continue;  // link schemes it checks
      EXPECT_EQ(body.find(external), std::string::npos) << a.name << " names " << external;
    }
  }
}

TEST_F(web_test, signing_in_exchanges_the_token_for_an_httponly_strict_cookie) {
  auto wrong = request(port(), "POST", "/v1/auth/login", "", R"({"token":"guess"})");
  EXPECT_EQ(wrong.status, 401U);
  EXPECT_TRUE(wrong.header("Set-Cookie").empty());
  EXPECT_EQ(request(port(), "POST", "/v1/auth/login", "", R"({"token":"s3cret-token","x":1})").status, 400U);
  EXPECT_EQ(request(port(), "POST", "/v1/auth/login", "", R"({"token":7})").status, 400U);
  EXPECT_EQ(request(port(), "POST", "/v1/auth/login", "", "{").status, 400U);
  EXPECT_EQ(request(port(), "GET", "/v1/auth/login", "").status, 405U);

  auto ok = request(port(), "POST", "/v1/auth/login", "", R"({"token":"s3cret-token"})");
  ASSERT_EQ(ok.status, 200U) << ok.raw;
  const auto set = ok.header("Set-Cookie");
  EXPECT_TRUE(set.starts_with("tether_session=v1.")) << set;
  for (const char* attribute : {"; Path=/", "; HttpOnly", "; SameSite=Strict", "; Max-Age=43200"})
    EXPECT_NE(set.find(attribute), std::string::npos) << set << " lacks " << attribute;
  EXPECT_EQ(set.find("Secure"), std::string::npos) << "plain HTTP: a Secure cookie would never come back";
  EXPECT_EQ(set.find("s3cret-token"), std::string::npos);
  EXPECT_EQ(ok.raw.find("s3cret-token"), std::string::npos);
  EXPECT_EQ(ok.header("Cache-Control"), "no-store");
  EXPECT_EQ(ok.body.at("csrf").as_string().size(), 32U);

  // The cookie reads; the sign-in check gives the same CSRF token back.
  const std::string cookie = "Cookie: " + cookie_of(ok) + "\r\n";
  EXPECT_EQ(request(port(), "GET", "/v1/sessions", cookie).status, 200U);
  auto check = request(port(), "GET", "/v1/auth/session", cookie);
  ASSERT_EQ(check.status, 200U);
  EXPECT_EQ(check.body.at("csrf"), ok.body.at("csrf"));
  EXPECT_EQ(request(port(), "GET", "/v1/auth/session", "").status, 401U);
  // A cookie changed by one character is nobody's.
  auto forged = cookie_of(ok);
  forged[forged.size() - 1] = forged.back() == '0' ? '1' : '0';
  EXPECT_EQ(request(port(), "GET", "/v1/sessions", "Cookie: " + forged + "\r\n").status, 401U);
  EXPECT_EQ(request(port(), "GET", "/v1/sessions", "Cookie: tether_session=v1.9999999999.00.00\r\n").status, 401U);
}

TEST_F(web_test, a_change_by_cookie_needs_the_csrf_header_and_the_bearer_token_still_works) {
  const auto [cookie, csrf] = sign_in();
  const std::string body = R"({"title":"from the page"})";
  auto refused = request(port(), "POST", "/v1/sessions", cookie, body);
  EXPECT_EQ(refused.status, 403U);
  EXPECT_EQ(refused.error_code(), "forbidden");
  auto wrong = request(port(), "POST", "/v1/sessions", cookie + "X-Tether-CSRF: 0123456789abcdef0123456789abcdef\r\n",
                       body);
  EXPECT_EQ(wrong.status, 403U);
  EXPECT_EQ(connect().get("/v1/sessions").body.at("sessions").as_array().size(), 0U) << "nothing was created";
  auto accepted = request(port(), "POST", "/v1/sessions", cookie + "X-Tether-CSRF: " + csrf + "\r\n", body);
  EXPECT_EQ(accepted.status, 201U) << accepted.raw;
  // The CSRF token of one sign-in is not another's.
  const auto [other_cookie, other_csrf] = sign_in();
  EXPECT_NE(other_csrf, csrf);
  EXPECT_EQ(request(port(), "POST", "/v1/sessions", other_cookie + "X-Tether-CSRF: " + csrf + "\r\n", body).status,
            403U);
  EXPECT_EQ(connect().post("/v1/sessions", R"({"title":"by token"})").status, 201U);
}

TEST_F(web_test, signing_out_clears_the_cookie_and_refuses_it_from_then_on) {
  const auto [cookie, csrf] = sign_in();
  EXPECT_EQ(request(port(), "POST", "/v1/auth/logout", cookie).status, 403U) << "sign-out is a change too";
  auto out = request(port(), "POST", "/v1/auth/logout", cookie + "X-Tether-CSRF: " + csrf + "\r\n");
  ASSERT_EQ(out.status, 200U) << out.raw;
  EXPECT_NE(out.header("Set-Cookie").find("Max-Age=0"), std::string::npos);
  EXPECT_EQ(request(port(), "GET", "/v1/sessions", cookie).status, 401U);
  EXPECT_EQ(request(port(), "GET", "/v1/auth/session", cookie).status, 401U);
}

TEST_F(web_test, a_cookie_made_under_another_token_or_expired_is_refused) {
  web_auth other("another-token");
  const auto foreign = other.issue(unix_now());
  EXPECT_EQ(request(port(), "GET", "/v1/sessions", "Cookie: tether_session=" + foreign.cookie + "\r\n").status, 401U);
  web_auth same(token);
  const auto old = same.issue(unix_now() - 2 * web_auth::default_lifetime_s);
  EXPECT_EQ(request(port(), "GET", "/v1/sessions", "Cookie: tether_session=" + old.cookie + "\r\n").status, 401U);
  const auto fresh = same.issue(unix_now());
  EXPECT_EQ(request(port(), "GET", "/v1/sessions", "Cookie: a=b; tether_session=" + fresh.cookie + "\r\n").status,
            200U)
      << "a cookie made under the same token is valid after a restart";
}

TEST_F(web_test, profiles_are_listed_with_why_one_is_unavailable) {
  server_options o;
  o.profiles = {{"default", "native", "scripted", ""}, {"claude", "claude", "the agent's default model", "not set"}};
  restart_server(o);
  auto r = connect().get("/v1/profiles");
  ASSERT_EQ(r.status, 200U);
  const auto& list = r.body.at("profiles").as_array();
  ASSERT_EQ(list.size(), 2U);
  EXPECT_EQ(list[0].at("name"), "default");
  EXPECT_EQ(list[0].at("available"), true);
  EXPECT_EQ(list[1].at("available"), false);
  EXPECT_EQ(list[1].at("problem"), "not set");
  EXPECT_EQ(request(port(), "GET", "/v1/profiles", "").status, 401U);
}

TEST_F(web_test, qualification_results_are_shown_from_the_configured_folder_only) {
  EXPECT_EQ(connect().get("/v1/qualification").body.at("configured"), false);
  EXPECT_EQ(connect().get("/v1/qualification/dashboard").status, 404U);

  const auto out = dir_ / "results";
  std::filesystem::create_directories(out / "campaigns" / "c1" / "cells");
  std::ofstream(out / "history.json") << R"({"schema":"tether.e2e.history/v1","campaigns":[]})";
  std::ofstream(out / "campaigns" / "c1" / "cells" / "server.log") << "a log line\n";
  std::ofstream(dir_ / "secret.txt") << "outside\n";
  std::filesystem::create_symlink(dir_ / "secret.txt", out / "campaigns" / "c1" / "link.txt");
  std::string asked;
  server_options o;
  o.qualification = server_options::qualification_source{out, [&asked](const std::string& c) -> result<std::string> {
                                                           asked = c;
                                                           if (c == "gone") return make_error(api_errc::not_found, "no campaign gone");
                                                           return std::string("<html>page of ") + c + "</html>";
                                                         }};
  restart_server(o);
  auto h = connect().get("/v1/qualification");
  EXPECT_EQ(h.body.at("configured"), true);
  EXPECT_EQ(h.body.at("history").at("schema"), "tether.e2e.history/v1");

  auto page = request(port(), "GET", "/v1/qualification/dashboard", auth_header);
  EXPECT_EQ(page.status, 200U);
  EXPECT_EQ(page.raw, "<html>page of </html>");
  const auto csp = page.header("Content-Security-Policy");
  EXPECT_NE(csp.find("frame-ancestors 'self'"), std::string::npos) << csp;
  EXPECT_EQ(csp.find("script-src"), std::string::npos) << csp;
  EXPECT_EQ(request(port(), "GET", "/v1/qualification/dashboard-c1.html", auth_header).raw, "<html>page of c1</html>");
  EXPECT_EQ(request(port(), "GET", "/v1/qualification/dashboard?campaign=c1", auth_header).raw,
            "<html>page of c1</html>");
  EXPECT_EQ(request(port(), "GET", "/v1/qualification/dashboard?campaign=gone", auth_header).status, 404U);
  asked = "untouched";
  EXPECT_EQ(request(port(), "GET", "/v1/qualification/dashboard?campaign=..%2fx", auth_header).status, 404U);
  EXPECT_EQ(asked, "untouched") << "a hostile id never reaches the loader";

  auto log = request(port(), "GET", "/v1/qualification/campaigns/c1/cells/server.log", auth_header);
  EXPECT_EQ(log.status, 200U);
  EXPECT_EQ(log.raw, "a log line\n");
  EXPECT_NE(log.header("Content-Security-Policy").find("sandbox"), std::string::npos);
  for (const char* bad : {"/v1/qualification/campaigns/c1/link.txt", "/v1/qualification/campaigns/c1/%2e%2e/%2e%2e/secret.txt",
                          "/v1/qualification/campaigns/../secret.txt", "/v1/qualification/campaigns/c1/cells",
                          "/v1/qualification/campaigns/c1/nothing.log", "/v1/qualification/campaigns/c1/a%00b"})
    EXPECT_EQ(request(port(), "GET", bad, auth_header).status, 404U) << bad;
  EXPECT_EQ(request(port(), "GET", "/v1/qualification/campaigns/c1/cells/server.log", "").status, 401U);
}

TEST_F(web_test, over_tls_the_cookie_is_secure) {
  auto identity = tether::http::make_self_signed_identity();
  ASSERT_TRUE(identity) << identity.error().describe();
  auto tls = tether::http::make_server_tls_context(*identity);
  ASSERT_TRUE(tls);
  server_options o;
  o.tls = *tls;
  restart_server(o);
  asio::io_context io;
  asio::ssl::context client_tls(asio::ssl::context::tls_client);
  client_tls.add_certificate_authority(asio::buffer(identity->certificate_pem));
  client_tls.set_verify_mode(asio::ssl::verify_peer);
  asio::ssl::stream<tcp::socket> stream(io, client_tls);
  stream.next_layer().connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port()));
  stream.handshake(asio::ssl::stream_base::client);
  const std::string body = R"({"token":"s3cret-token"})";
  asio::write(stream, asio::buffer(raw_request("POST", "/v1/auth/login", body, "Content-Type: application/json\r\n")));
  beast::flat_buffer buffer;
  http::response<http::string_body> res;
  http::read(stream, buffer, res);
  EXPECT_EQ(res.result_int(), 200U) << res.body();
  const std::string set(res[http::field::set_cookie]);
  EXPECT_NE(set.find("; Secure"), std::string::npos) << set;
  EXPECT_NE(set.find("; HttpOnly"), std::string::npos) << set;
}

TEST(web_auth, cookies_are_read_from_any_place_in_the_header_and_revocation_is_bounded) {
  EXPECT_EQ(cookie_value("a=1; tether_session=xyz; b=2", "tether_session"), "xyz");
  EXPECT_EQ(cookie_value("tether_session_x=1", "tether_session"), std::nullopt);
  EXPECT_EQ(cookie_value("", "tether_session"), std::nullopt);
  web_auth auth("t");
  const auto now = unix_now();
  const auto first = auth.issue(now);
  const std::string header = "tether_session=" + first.cookie;
  ASSERT_TRUE(auth.check(header, now));
  EXPECT_TRUE(web_auth::csrf_matches(*auth.check(header, now), first.csrf));
  EXPECT_FALSE(web_auth::csrf_matches(*auth.check(header, now), ""));
  auth.revoke(header, now);
  EXPECT_FALSE(auth.check(header, now));
  // Past the bound, the revocation closest to its expiry goes first: the
  // newest ones stay refused.
  std::string last;
  for (std::size_t i = 0; i < web_auth::max_revoked + 5; ++i) {
    last = "tether_session=" + auth.issue(now + static_cast<std::int64_t>(i)).cookie;
    auth.revoke(last, now);
  }
  EXPECT_FALSE(auth.check(last, now));
  EXPECT_TRUE(auth.check(header, now)) << "the oldest revocation was forgotten (documented)";
  web_auth none("");
  EXPECT_FALSE(none.check("tether_session=" + none.issue(now).cookie, now)) << "no token, nobody signs in";
}

}  // namespace
}  // namespace tether::api
