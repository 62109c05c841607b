// The route table's matching (api/routes.h): literal, {name}, prefix{name}suffix
// and {name*} segments, the methods a 405 names, and who may call a path.
#include "api/routes.h"

#include <gtest/gtest.h>

namespace tether::api {
namespace {

TEST(api_routes, a_request_finds_its_route_and_what_the_pattern_matched) {
  auto m = match_route("DELETE", "/v1/sessions/ses_1/inputs/inp_2?x=1");
  ASSERT_NE(m.found, nullptr);
  EXPECT_EQ(m.found->pattern, "/v1/sessions/{id}/inputs/{iid}");
  EXPECT_EQ(m.params, (std::vector<std::string>{"ses_1", "inp_2"}));
  EXPECT_EQ(m.path_who, access::token);

  m = match_route("GET", "/v1/qualification/dashboard-c42.html");
  ASSERT_NE(m.found, nullptr);
  EXPECT_EQ(m.found->pattern, "/v1/qualification/dashboard-{campaign}.html");
  EXPECT_EQ(m.params, (std::vector<std::string>{"c42"}));

  m = match_route("GET", "/v1/qualification/dashboard.html");  // the alias, not a campaign called ""
  ASSERT_NE(m.found, nullptr);
  EXPECT_EQ(m.found->pattern, "/v1/qualification/dashboard.html");

  m = match_route("GET", "/v1/qualification/campaigns/c1/cells/a%2Eb/log.txt");
  ASSERT_NE(m.found, nullptr);
  EXPECT_EQ(m.params, (std::vector<std::string>{"c1", "cells", "a%2Eb", "log.txt"}));
  EXPECT_EQ(match_route("GET", "/v1/qualification/campaigns").path_who, std::nullopt);  // {path*} needs one
}

TEST(api_routes, a_path_in_another_method_names_the_methods_it_has) {
  auto m = match_route("DELETE", "/v1/sessions");
  EXPECT_EQ(m.found, nullptr);
  EXPECT_EQ(m.path_who, access::token);
  EXPECT_EQ(m.allowed, "GET or POST");
  EXPECT_EQ(match_route("POST", "/v1/tasks/tsk_1").allowed, "GET or PATCH");
  EXPECT_EQ(match_route("GET", "/v1/auth/login").allowed, "POST");
  EXPECT_EQ(match_route("GET", "/v1/auth/login").path_who, access::sign_in);
}

TEST(api_routes, only_health_sign_in_and_the_interface_are_served_without_the_token) {
  EXPECT_EQ(match_route("GET", "/v1/health").path_who, access::open);
  EXPECT_EQ(match_route("GET", "/").path_who, access::open);
  EXPECT_EQ(match_route("GET", "/ui").path_who, access::open);
  EXPECT_EQ(match_route("GET", "/ui/app.js").path_who, access::open);
  EXPECT_EQ(match_route("GET", "/v1/auth/session").path_who, access::sign_in);
  EXPECT_EQ(match_route("POST", "/v1/auth/logout").path_who, access::token);
  EXPECT_EQ(match_route("GET", "/metrics").path_who, access::token);
  // No route: the caller learns nothing of which paths exist before the token.
  EXPECT_EQ(match_route("GET", "/ui/a/b").path_who, access::open);  // the interface's: its 404 needs no token
  EXPECT_EQ(match_route("GET", "/v1/sessions/ses_1/nope").path_who, std::nullopt);
  EXPECT_EQ(match_route("GET", "/v1").path_who, std::nullopt);
}

}  // namespace
}  // namespace tether::api
