// Inputs the fuzz targets (fuzz/) found crashing, kept as tests of the g++
// build; the crashing inputs themselves are in fuzz/regressions/.
#include "api/handler.h"

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json.hpp>

#include "api/errors.h"
#include "api/web_routes.h"
#include "session/errors.h"
#include "util/text.h"

namespace tether::api {
namespace {

// One route handler run to its reply.
http_reply run(const handler_context* ctx, web_routes::reply (*route)(route_call), const http_request& req) {
  boost::asio::io_context io;
  route_call call{ctx, req, {}};
  auto f = boost::asio::co_spawn(io, route(std::move(call)), boost::asio::use_future);
  io.run();
  return f.get();
}

// fuzz/regressions/api_requests/path-not-utf8: a 404 quoted the request's
// path segment, bytes and all, so the reply was not valid JSON text.
TEST(api_error_replies, are_utf8_json_even_when_the_message_quotes_bytes_that_are_not) {
  const auto r = error_reply(make_error(session::session_errc::unknown_session, "no session ses_a\x90" "b\xC3"));
  EXPECT_EQ(r.status, 404U);
  EXPECT_TRUE(is_valid_utf8(r.body)) << r.body;
  boost::system::error_code ec;
  const auto v = boost::json::parse(r.body, ec);
  ASSERT_FALSE(ec) << r.body;
  EXPECT_EQ(v.at("error").at("message").as_string(), "no session ses_a\xEF\xBF\xBD" "b\xEF\xBF\xBD");

  const auto ok = error_reply(make_error(session::session_errc::unknown_session, "no session ses_caf\xC3\xA9"));
  EXPECT_NE(ok.body.find("ses_caf\xC3\xA9"), std::string::npos);  // valid text is kept as it is
}

// fuzz/regressions/api_requests/cookie-without-bearer: a route context
// without the web sign-in (the fuzz target's, or any embedding's but the
// server's) dereferenced its null web_auth on the first request with no
// bearer token. Without it the cookie is simply never a credential.
TEST(api_web_routes, without_a_web_sign_in_refuse_cookies_and_sign_ins_instead_of_crashing) {
  handler_context ctx;
  ctx.options.token = "right-token";
  http_request req;
  req.method = "GET";
  req.target = "/v1/sessions";
  req.cookie = "tether_session=v1.9999999999.nonce.mac";
  auto a = authenticate(&ctx, req);
  ASSERT_FALSE(a.has_value());
  EXPECT_EQ(a.error().code, make_error_code(api_errc::unauthorized));

  req.authorization = "Bearer right-token";
  EXPECT_TRUE(authenticate(&ctx, req).has_value());  // the bearer header still works

  http_request login;
  login.method = "POST";
  login.target = "/v1/auth/login";
  login.content_type = "application/json";
  login.body = R"({"token":"right-token"})";
  auto r = run(&ctx, &web_routes::login, login);
  EXPECT_EQ(r.status, 404U) << r.body;
  for (const auto& [name, value] : r.headers) EXPECT_NE(name, "Set-Cookie");

  http_request check;
  check.method = "GET";
  check.target = "/v1/auth/session";
  check.cookie = req.cookie;
  r = run(&ctx, &web_routes::signed_in, check);
  EXPECT_EQ(r.status, 401U);

  http_request logout;
  logout.method = "POST";
  logout.target = "/v1/auth/logout";
  logout.cookie = req.cookie;
  r = run(&ctx, &web_routes::logout, logout);
  EXPECT_EQ(r.status, 200U);  // nothing to revoke; the cookie is cleared all the same
}

}  // namespace
}  // namespace tether::api
