// Inputs the fuzz targets (fuzz/) found crashing, kept as tests of the g++
// build; the crashing inputs themselves are in fuzz/regressions/.
#include "api/handler.h"

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "session/errors.h"
#include "util/text.h"

namespace tether::api {
namespace {

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

}  // namespace
}  // namespace tether::api
