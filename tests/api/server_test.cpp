#include "api/server_fixture.h"

#include <sys/socket.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace tether::api {
namespace {

using namespace testing_support;

TEST_F(api_server_test, health_needs_no_token_and_names_the_node) {
  auto c = connect();
  auto r = c.send(http::verb::get, "/v1/health", std::nullopt, std::nullopt);
  EXPECT_EQ(r.status, 200U);
  EXPECT_EQ(r.body.at("status").as_string(), "ok");
  EXPECT_EQ(r.body.at("node").as_string(), "api-node");
  EXPECT_TRUE(r.body.at("version").is_string());
}

TEST_F(api_server_test, routes_other_than_health_refuse_a_missing_or_wrong_token) {
  auto c = connect();
  auto missing = c.send(http::verb::get, "/v1/sessions", std::nullopt, std::nullopt);
  EXPECT_EQ(missing.status, 401U);
  EXPECT_EQ(missing.error_code(), "unauthorized");
  auto wrong = c.send(http::verb::get, "/v1/sessions", std::nullopt, std::string("Bearer s3cret-tokeX"));
  EXPECT_EQ(wrong.status, 401U);
  auto prefix = c.send(http::verb::get, "/v1/sessions", std::nullopt, std::string("Bearer s3cret"));
  EXPECT_EQ(prefix.status, 401U);
  auto scheme = c.send(http::verb::get, "/v1/sessions", std::nullopt, std::string(token));
  EXPECT_EQ(scheme.status, 401U);
  EXPECT_EQ(c.get("/v1/sessions").status, 200U);  // the connection is still usable
}

TEST_F(api_server_test, created_session_can_be_read_back_and_listed) {
  auto c = connect();
  const std::string workspace = (dir_ / "roots" / "w").string();
  auto created =
      c.post("/v1/sessions", R"({"title":"fix the build","workspace":")" + workspace + R"(","profile":"default"})");
  ASSERT_EQ(created.status, 201U) << created.raw;
  const auto& s = created.body.at("session");
  const std::string id(s.at("id").as_string());
  EXPECT_EQ(id.rfind("ses_", 0), 0U);
  EXPECT_EQ(s.at("title").as_string(), "fix the build");
  EXPECT_EQ(s.at("status").as_string(), "idle");
  EXPECT_EQ(s.at("generation").as_int64(), 0);
  EXPECT_GE(s.at("last_seq").as_int64(), 1);
  EXPECT_EQ(s.at("pending_inputs").to_number<std::int64_t>(), 0);

  auto got = c.get("/v1/sessions/" + id);
  ASSERT_EQ(got.status, 200U) << got.raw;
  EXPECT_EQ(got.body.at("session").at("title").as_string(), "fix the build");
  EXPECT_EQ(got.body.at("session").at("workspace").as_string(), workspace);

  auto listed = c.get("/v1/sessions");
  ASSERT_EQ(listed.status, 200U);
  const auto& all = listed.body.at("sessions").as_array();
  ASSERT_EQ(all.size(), 1U);
  EXPECT_EQ(all[0].at("id").as_string(), id);
}

TEST_F(api_server_test, create_with_same_id_and_attributes_returns_the_session_and_other_attributes_conflict) {
  auto c = connect();
  const std::string body = R"({"id":"ses_api1","title":"t"})";
  EXPECT_EQ(c.post("/v1/sessions", body).status, 201U);
  auto again = c.post("/v1/sessions", body);
  EXPECT_EQ(again.status, 200U) << again.raw;
  EXPECT_EQ(again.body.at("session").at("id").as_string(), "ses_api1");
  auto other = c.post("/v1/sessions", R"({"id":"ses_api1","title":"other"})");
  EXPECT_EQ(other.status, 409U) << other.raw;
  EXPECT_EQ(other.error_code(), "conflict");
}

TEST_F(api_server_test, input_is_admitted_an_exact_retry_returns_the_original_and_a_reuse_conflicts) {
  auto c = connect();
  ASSERT_EQ(c.post("/v1/sessions", R"({"id":"ses_in"})").status, 201U);
  const std::string body = R"({"id":"msg_one","text":"hello","delivery":"queue","resume":false})";
  auto first = c.post("/v1/sessions/ses_in/inputs", body);
  ASSERT_EQ(first.status, 202U) << first.raw;
  EXPECT_EQ(first.body.at("input").at("id").as_string(), "msg_one");
  EXPECT_EQ(first.body.at("input").at("status").as_string(), "pending");
  EXPECT_EQ(first.body.at("input").at("delivery").as_string(), "queue");

  auto retry = c.post("/v1/sessions/ses_in/inputs", body);
  EXPECT_EQ(retry.status, 200U) << retry.raw;
  EXPECT_EQ(retry.body.at("input").at("id").as_string(), "msg_one");

  auto conflict = c.post("/v1/sessions/ses_in/inputs", R"({"id":"msg_one","text":"something else","resume":false})");
  EXPECT_EQ(conflict.status, 409U) << conflict.raw;
  EXPECT_EQ(conflict.error_code(), "conflict");

  auto s = c.get("/v1/sessions/ses_in");
  EXPECT_EQ(s.body.at("session").at("pending_inputs").to_number<std::int64_t>(), 1);
}

TEST_F(api_server_test, malformed_json_and_wrong_field_types_are_400_naming_the_problem) {
  auto c = connect();
  auto broken = c.post("/v1/sessions", R"({"title": )");
  EXPECT_EQ(broken.status, 400U);
  EXPECT_EQ(broken.error_code(), "bad_request");
  EXPECT_NE(broken.error_message().find("JSON"), std::string::npos) << broken.error_message();

  auto not_object = c.post("/v1/sessions", "[1,2]");
  EXPECT_EQ(not_object.status, 400U);

  auto wrong_type = c.post("/v1/sessions", R"({"title": 5})");
  EXPECT_EQ(wrong_type.status, 400U);
  EXPECT_NE(wrong_type.error_message().find("title"), std::string::npos) << wrong_type.error_message();

  ASSERT_EQ(c.post("/v1/sessions", R"({"id":"ses_types"})").status, 201U);
  auto resume = c.post("/v1/sessions/ses_types/inputs", R"({"text":"hi","resume":"yes"})");
  EXPECT_EQ(resume.status, 400U);
  EXPECT_NE(resume.error_message().find("resume"), std::string::npos) << resume.error_message();
  auto no_text = c.post("/v1/sessions/ses_types/inputs", R"({"resume":false})");
  EXPECT_EQ(no_text.status, 400U);
  EXPECT_NE(no_text.error_message().find("text"), std::string::npos) << no_text.error_message();
  auto delivery = c.post("/v1/sessions/ses_types/inputs", R"({"text":"hi","delivery":"later"})");
  EXPECT_EQ(delivery.status, 400U);
  EXPECT_NE(delivery.error_message().find("delivery"), std::string::npos) << delivery.error_message();
}

TEST_F(api_server_test, invalid_utf8_in_the_body_is_400) {
  auto c = connect();
  auto r = c.post("/v1/sessions", std::string("{\"title\":\"bad \xC3\x28 byte\"}"));
  EXPECT_EQ(r.status, 400U) << r.raw;
  EXPECT_NE(r.error_message().find("UTF-8"), std::string::npos) << r.error_message();
}

TEST_F(api_server_test, a_body_over_the_limit_is_413) {
  auto c = connect();
  const std::string big = R"({"title":")" + std::string(100UL * 1024UL, 'x') + R"("})";
  auto r = c.post("/v1/sessions", big);
  EXPECT_EQ(r.status, 413U);
  EXPECT_EQ(r.error_code(), "payload_too_large");
}

TEST_F(api_server_test, a_chunked_body_growing_over_the_limit_is_413) {
  auto c = connect();
  const std::string big = R"({"title":")" + std::string(100UL * 1024UL, 'x') + R"("})";
  auto r = c.send(http::verb::post, "/v1/sessions", big, std::string("Bearer ") + std::string(token),
                  client::framing::chunked);
  EXPECT_EQ(r.status, 413U);
}

TEST_F(api_server_test, an_input_that_asks_to_resume_is_run_and_leaves_the_session_idle) {
  auto c = connect();
  ASSERT_EQ(c.post("/v1/sessions", R"({"id":"ses_run"})").status, 201U);
  auto admitted = c.post("/v1/sessions/ses_run/inputs", R"({"text":"do it"})");
  ASSERT_EQ(admitted.status, 202U) << admitted.raw;
  bool drained = false;
  for (int i = 0; i < 5000 && !drained; ++i) {
    auto s = c.get("/v1/sessions/ses_run");
    const auto& row = s.body.at("session");
    drained = row.at("pending_inputs").to_number<std::int64_t>() == 0 && row.at("status").as_string() == "idle";
    if (!drained) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_TRUE(drained);
}

TEST_F(api_server_test, one_connection_serves_many_requests) {
  auto c = connect();
  for (int i = 0; i < 50; ++i) ASSERT_EQ(c.get("/v1/health").status, 200U);
}

TEST_F(api_server_test, an_unknown_route_is_404_and_a_wrong_method_is_405) {
  auto c = connect();
  auto unknown = c.get("/v1/nothing-here");
  EXPECT_EQ(unknown.status, 404U);
  EXPECT_EQ(unknown.error_code(), "not_found");
  auto method = c.send(http::verb::delete_, "/v1/sessions");
  EXPECT_EQ(method.status, 405U);
  EXPECT_EQ(method.error_code(), "method_not_allowed");
  EXPECT_EQ(method.error_message(), "use GET or POST");  // the route table's methods of that path
  auto health = c.send(http::verb::post, "/v1/health", std::string("{}"), std::nullopt);
  EXPECT_EQ(health.status, 405U);
  // A path no route has is 401 before the token, so nobody learns which paths exist.
  EXPECT_EQ(c.send(http::verb::get, "/v1/nothing-here", std::nullopt, std::nullopt).status, 401U);
}

// A HEAD is answered as its GET, with the GET's Content-Length and no body:
// the connection stays in step (a body would be read as the next reply).
TEST_F(api_server_test, a_head_is_its_get_without_the_body_and_the_connection_goes_on) {
  auto c = connect();
  const auto get = c.get("/v1/sessions");
  ASSERT_EQ(get.status, 200U);
  const auto head = c.send(http::verb::head, "/v1/sessions");
  EXPECT_EQ(head.status, 200U);
  EXPECT_TRUE(head.raw.empty());
  EXPECT_EQ(head.header("Content-Length"), std::to_string(get.raw.size()));
  const auto after = c.get("/v1/health");
  EXPECT_EQ(after.status, 200U) << after.raw;
  EXPECT_EQ(after.body.at("status"), "ok");
}

TEST_F(api_server_test, an_unknown_session_is_404_for_reads_and_inputs) {
  auto c = connect();
  EXPECT_EQ(c.get("/v1/sessions/ses_nobody").status, 404U);
  EXPECT_EQ(c.get("/v1/sessions/not-an-id").status, 404U);
  auto input = c.post("/v1/sessions/ses_nobody/inputs", R"({"text":"hi"})");
  EXPECT_EQ(input.status, 404U) << input.raw;
  EXPECT_EQ(input.error_code(), "not_found");
}

TEST_F(api_server_test, stop_closes_open_keep_alive_connections) {
  auto c = connect();
  EXPECT_EQ(c.get("/v1/health").status, 200U);
  run(server_->stop());
  EXPECT_ANY_THROW(c.get("/v1/health"));
}

// ---- request bodies: the contract of docs/openapi.json ----

TEST_F(api_server_test, an_unknown_field_is_400_naming_it) {
  auto c = connect();
  auto create = c.post("/v1/sessions", R"({"titel":"typo"})");
  EXPECT_EQ(create.status, 400U) << create.raw;
  EXPECT_NE(create.error_message().find("'titel'"), std::string::npos) << create.error_message();
  ASSERT_EQ(c.post("/v1/sessions", R"({"id":"ses_fields"})").status, 201U);
  auto input = c.post("/v1/sessions/ses_fields/inputs", R"({"text":"hi","delivry":"queue"})");
  EXPECT_EQ(input.status, 400U) << input.raw;
  EXPECT_NE(input.error_message().find("'delivry'"), std::string::npos) << input.error_message();
  auto answer = c.post("/v1/interactions/int_nobody/answer", R"({"answers":[],"extra":1})");
  EXPECT_EQ(answer.status, 400U) << answer.raw;
  EXPECT_NE(answer.error_message().find("'extra'"), std::string::npos) << answer.error_message();
  auto s = c.get("/v1/sessions/ses_fields");
  EXPECT_EQ(s.body.at("session").at("pending_inputs").to_number<std::int64_t>(), 0) << "nothing was admitted";
}

TEST_F(api_server_test, a_key_given_twice_is_400_naming_it_at_any_depth) {
  auto c = connect();
  auto top = c.post("/v1/sessions", R"({"title":"a","title":"b"})");
  EXPECT_EQ(top.status, 400U) << top.raw;
  EXPECT_NE(top.error_message().find("'title'"), std::string::npos) << top.error_message();
  auto nested = c.post("/v1/sessions", R"({"metadata":{"k":1,"other":{},"k":2}})");
  EXPECT_EQ(nested.status, 400U) << nested.raw;
  EXPECT_NE(nested.error_message().find("'metadata.k'"), std::string::npos) << nested.error_message();
  ASSERT_EQ(c.post("/v1/sessions", R"({"id":"ses_twice","metadata":{"k":{"k":1}}})").status, 201U)
      << "the same key in different objects is fine";
  auto input = c.post("/v1/sessions/ses_twice/inputs", R"({"text":"one","resume":false,"text":"two"})");
  EXPECT_EQ(input.status, 400U) << input.raw;
  EXPECT_EQ(c.get("/v1/sessions/ses_twice").body.at("session").at("pending_inputs").to_number<std::int64_t>(), 0);
}

TEST_F(api_server_test, a_nul_character_in_a_string_is_400_naming_the_field) {
  auto c = connect();
  auto title = c.post("/v1/sessions", R"({"title":"a\u0000b"})");
  EXPECT_EQ(title.status, 400U) << title.raw;
  EXPECT_NE(title.error_message().find("'title'"), std::string::npos) << title.error_message();
  ASSERT_EQ(c.post("/v1/sessions", R"({"id":"ses_nul"})").status, 201U);
  auto text = c.post("/v1/sessions/ses_nul/inputs", R"({"text":"rm -rf x\u0000.txt"})");
  EXPECT_EQ(text.status, 400U) << text.raw;
  EXPECT_NE(text.error_message().find("'text'"), std::string::npos) << text.error_message();
  EXPECT_EQ(c.get("/v1/sessions/ses_nul").body.at("session").at("pending_inputs").to_number<std::int64_t>(), 0);
}

// 1e400 reads as infinity, which would be stored as `Infinity` (not JSON):
// the body is refused naming the field, and nothing is created.
TEST_F(api_server_test, a_number_out_of_the_range_of_a_double_is_400_naming_the_field) {
  auto c = connect();
  auto r = c.post("/v1/sessions", R"({"id":"ses_huge","metadata":{"a":[1, -1e400]}})");
  EXPECT_EQ(r.status, 400U) << r.raw;
  EXPECT_EQ(r.error_code(), "bad_request") << r.raw;
  EXPECT_EQ(r.error_message(), "field 'metadata.a' holds a number out of range") << r.raw;
  EXPECT_EQ(c.get("/v1/sessions/ses_huge").status, 404U);
  auto fine = c.post("/v1/sessions", R"({"id":"ses_huge","metadata":{"a":1.7e308,"b":-4e-400}})");
  ASSERT_EQ(fine.status, 201U) << fine.raw;
  EXPECT_EQ(c.get("/v1/sessions/ses_huge").body.at("session").at("metadata").at("a").as_double(), 1.7e308);
}

TEST_F(api_server_test, the_bearer_scheme_is_matched_in_any_case) {
  auto c = connect();
  for (const std::string scheme : {"bearer ", "BEARER ", "bEaReR ", "Bearer  "})
    EXPECT_EQ(c.send(http::verb::get, "/v1/sessions", std::nullopt, scheme + std::string(token)).status, 200U)
        << scheme;
  EXPECT_EQ(c.send(http::verb::get, "/v1/sessions", std::nullopt, "Bearer" + std::string(token)).status, 401U);
  EXPECT_EQ(c.send(http::verb::get, "/v1/sessions", std::nullopt, "Basic " + std::string(token)).status, 401U);
}

TEST_F(api_server_test, a_body_that_is_not_json_is_415_and_a_bodiless_post_needs_no_content_type) {
  raw_connection c(server_->port());
  c.write(raw_request("POST", "/v1/sessions", "{}", auth_header + "Content-Type: text/plain\r\n"));
  auto plain = c.read();
  EXPECT_EQ(plain.status, 415U) << plain.raw;
  EXPECT_EQ(plain.error_code(), "unsupported_media_type");
  c.write(raw_request("POST", "/v1/sessions", "{}", auth_header));
  EXPECT_EQ(c.read().status, 415U) << "a body without a Content-Type";
  c.write(raw_request("POST", "/v1/sessions", "title=x",
                      auth_header + "Content-Type: application/x-www-form-urlencoded\r\n"));
  EXPECT_EQ(c.read().status, 415U);
  c.write(raw_request("POST", "/v1/sessions", R"({"id":"ses_media"})",
                      auth_header + "Content-Type: Application/JSON; charset=utf-8\r\n"));
  EXPECT_EQ(c.read().status, 201U);
  for (const char* leaf : {"interrupt", "reset", "resume"}) {
    c.write(raw_request("POST", std::string("/v1/sessions/ses_media/") + leaf, "", auth_header));
    EXPECT_EQ(c.read().status, 200U) << leaf;
  }
  auto listed = connect().get("/v1/sessions");
  EXPECT_EQ(listed.body.at("sessions").as_array().size(), 1U) << "nothing refused was created";
}

// ---- workspaces ----

TEST_F(api_server_test, a_workspace_outside_the_roots_is_400_and_nothing_is_created) {
  auto c = connect();
  const auto root = dir_ / "roots";
  std::filesystem::create_directory_symlink("/", root / "to-root");
  for (const std::string& bad : {std::string("/"), std::string("/nonexistent-tether/x"), std::string("/proc/self"),
                                 (root / ".." / "outside" / "x").string(), (root / "to-root" / "tmp").string(),
                                 (root / "a" / ".." / ".." / "escape").string()}) {
    auto r = c.post("/v1/sessions", R"({"workspace":")" + bad + R"("})");
    EXPECT_EQ(r.status, 400U) << bad << ": " << r.raw;
    EXPECT_NE(r.error_message().find("'workspace'"), std::string::npos) << r.error_message();
  }
  EXPECT_FALSE(std::filesystem::exists("/nonexistent-tether"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "outside"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "escape"));
  EXPECT_EQ(c.get("/v1/sessions").body.at("sessions").as_array().size(), 0U);
}

TEST_F(api_server_test, a_workspace_under_a_root_is_stored_resolved) {
  auto c = connect();
  const auto root = std::filesystem::weakly_canonical(dir_ / "roots");
  auto r = c.post("/v1/sessions",
                  R"({"id":"ses_ws","workspace":")" + (dir_ / "roots" / "a" / ".." / "b").string() + R"("})");
  ASSERT_EQ(r.status, 201U) << r.raw;
  EXPECT_EQ(r.body.at("session").at("workspace").as_string(), (root / "b").string());
  auto again = c.post("/v1/sessions", R"({"id":"ses_ws","workspace":")" + (root / "b").string() + R"("})");
  EXPECT_EQ(again.status, 200U) << "the same place, spelled resolved, is an exact retry: " << again.raw;
  auto root_itself = c.post("/v1/sessions", R"({"workspace":")" + root.string() + R"("})");
  EXPECT_EQ(root_itself.status, 201U) << root_itself.raw;
}

// ---- connections ----

std::int64_t metric(const std::string& name) {
  std::istringstream in(metrics::global().render());
  for (std::string line; std::getline(in, line);)
    if (line.starts_with(name + " ")) return std::stoll(line.substr(name.size() + 1));
  return -1;
}

// An event stream whose response head was read: the server counts it busy.
std::unique_ptr<raw_connection> open_stream(std::uint16_t port, const std::string& session,
                                            const std::string& source = "") {
  auto c = std::make_unique<raw_connection>(port, source);
  c->write(
      raw_request("GET", "/v1/sessions/" + session + "/events", "", auth_header + "Accept: text/event-stream\r\n"));
  beast::flat_buffer buffer;
  http::response_parser<http::empty_body> parser;
  parser.skip(true);
  http::read_header(c->socket(), buffer, parser);
  EXPECT_EQ(parser.get().result_int(), 200U);
  return c;
}

TEST_F(api_server_test, over_the_connection_limit_the_oldest_idle_connection_gets_503_and_a_busy_server_refuses) {
  server_options o;
  o.max_connections = 4;
  o.max_connections_per_peer = 4;
  restart_server(o);
  ASSERT_EQ(connect().post("/v1/sessions", R"({"id":"ses_flood"})").status, 201U);
  const auto refused_before = metric("tether_http_connections_refused_total");
  std::vector<std::unique_ptr<raw_connection>> idle;
  for (int i = 0; i < 6; ++i) idle.push_back(std::make_unique<raw_connection>(server_->port()));
  for (int i = 0; i < 2; ++i) {  // the two oldest made room for the two newest
    auto r = idle[i]->read();
    EXPECT_EQ(r.status, 503U) << i;
    EXPECT_EQ(r.error_code(), "unavailable") << r.raw;
  }
  auto health = connect().get("/v1/health");  // an idle one makes room for it too
  EXPECT_EQ(health.status, 200U);
  EXPECT_EQ(idle[2]->read().status, 503U);

  // Four event streams are busy: none of them is closed for a newcomer.
  std::vector<std::unique_ptr<raw_connection>> streams;
  for (int i = 0; i < 4; ++i) streams.push_back(open_stream(server_->port(), "ses_flood"));
  raw_connection extra(server_->port());
  EXPECT_EQ(extra.read().status, 503U) << "no idle connection to close: the newcomer is refused";
  EXPECT_GE(metric("tether_http_connections_refused_total") - refused_before, 1);
  streams.pop_back();  // a stream ends: room again
  bool served = false;
  for (int i = 0; i < 200 && !served; ++i) {
    raw_connection again(server_->port());
    again.write(raw_request("GET", "/v1/health", "", ""));
    served = again.read().status == 200U;
    if (!served) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(served);
}

TEST_F(api_server_test, one_peer_over_its_limit_gets_503_while_another_is_served) {
  server_options o;
  o.max_connections = 16;
  o.max_connections_per_peer = 2;
  restart_server(o);
  ASSERT_EQ(connect().post("/v1/sessions", R"({"id":"ses_peer"})").status, 201U);
  auto a = open_stream(server_->port(), "ses_peer", "127.0.0.2");
  auto b = open_stream(server_->port(), "ses_peer", "127.0.0.2");
  raw_connection third(server_->port(), "127.0.0.2");
  EXPECT_EQ(third.read().status, 503U);
  auto c = connect();
  EXPECT_EQ(c.get("/v1/health").status, 200U);
  EXPECT_EQ(c.post("/v1/sessions/ses_peer/inputs", R"({"text":"still served","resume":false})").status, 202U);
}

TEST_F(api_server_test, a_new_connection_that_sends_no_request_is_closed_after_the_request_timeout) {
  server_options o;
  o.request_timeout = std::chrono::milliseconds(200);
  restart_server(o);
  raw_connection silent(server_->port());
  EXPECT_EQ(silent.read().status, 0U) << "the server closed it without an answer";
}

// ---- the HTTP shell's rules, as the API applies them ----

TEST_F(api_server_test, expect_100_continue_is_answered_before_the_body_is_sent) {
  const std::string body = R"({"id":"ses_continue"})";
  raw_connection c(server_->port());
  c.write("POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n" + auth_header +
          "Content-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: " + std::to_string(body.size()) +
          "\r\n\r\n");
  EXPECT_EQ(c.read().status, 100U) << "the server asks for the body";
  c.write(body);
  auto created = c.read();
  EXPECT_EQ(created.status, 201U) << created.raw;
}

TEST_F(api_server_test, a_request_head_over_the_limit_is_431_naming_the_problem) {
  raw_connection c(server_->port());
  c.write(raw_request("GET", "/v1/sessions", "", auth_header + "X-Padding: " + std::string(20U * 1024U, 'a') + "\r\n"));
  auto r = c.read();
  EXPECT_EQ(r.status, 431U);
  EXPECT_EQ(r.error_code(), "headers_too_large") << r.raw;
  EXPECT_EQ(connect().get("/v1/health").status, 200U) << "the server still serves";
}

TEST_F(api_server_test, a_client_that_reads_nothing_of_a_large_reply_is_dropped_after_the_write_timeout) {
  server_options o;
  o.write_timeout = std::chrono::milliseconds(300);
  restart_server(o);
  ASSERT_EQ(connect().post("/v1/sessions", R"({"id":"ses_big"})").status, 201U);
  // 200 inputs of 60 kB: a listing of 12 MB, more than any socket buffers hold.
  for (int i = 0; i < 200; ++i) {
    auto r = run(service_->admit(
        session_id::trusted("ses_big"),
        {std::nullopt, std::string(60'000, 'x'), model::delivery::queue, session::start_mode::record_only}));
    ASSERT_TRUE(r) << r.error().describe();
  }
  raw_connection reader(server_->port(), "", 4096);
  reader.write(raw_request("GET", "/v1/sessions/ses_big/inputs", "", auth_header));
  std::array<char, 64> start{};
  timeval tv{};
  tv.tv_sec = 20;  // a server bug fails the test instead of hanging it
  ::setsockopt(reader.socket().native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  const auto n = reader.socket().read_some(asio::buffer(start));  // the reply has begun
  ASSERT_EQ(std::string_view(start.data(), n).substr(0, 12), "HTTP/1.1 200");
  // The reader reads no more: the server gives up on the reply and closes the connection.
  bool dropped = false;
  for (int i = 0; i < 3000 && !dropped; ++i) {
    dropped = server_->connections() == 0;
    if (!dropped) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(dropped) << "the stalled connection is still open";
  EXPECT_EQ(connect().get("/v1/health").status, 200U);
}

TEST_F(api_server_test, stop_waits_for_an_event_stream_and_ends_it) {
  ASSERT_EQ(connect().post("/v1/sessions", R"({"id":"ses_stop"})").status, 201U);
  auto stream = open_stream(server_->port(), "ses_stop");
  run(server_->stop());
  EXPECT_EQ(server_->connections(), 0U) << "stop() returned after the stream's connection ended";
  std::array<char, 256> rest{};
  boost::system::error_code ec;
  while (!ec) stream->socket().read_some(asio::buffer(rest), ec);
  EXPECT_EQ(ec, asio::error::eof) << "the stream was closed, not left open";
}

// ---- slow event-stream readers ----

TEST_F(api_server_test, stalled_event_stream_readers_hold_a_bounded_number_of_bytes_and_still_get_every_event) {
  constexpr std::size_t cap = 256U * 1024U;
  constexpr int readers = 5;
  constexpr int inputs = 80;
  server_options o;
  o.sse_max_buffered = cap;
  o.sse_stall_timeout = std::chrono::minutes(10);
  restart_server(o);
  auto c = connect();
  ASSERT_EQ(c.post("/v1/sessions", R"({"id":"ses_slow"})").status, 201U);
  std::vector<std::unique_ptr<raw_connection>> stalled;
  for (int i = 0; i < readers; ++i) {
    auto r = std::make_unique<raw_connection>(server_->port(), "", 4096);
    r->write(raw_request("GET", "/v1/sessions/ses_slow/events", "", auth_header + "Accept: text/event-stream\r\n"));
    stalled.push_back(std::move(r));
  }
  const std::string text(50'000, 'x');
  std::int64_t most_queued = 0;
  std::int64_t most_buffered = 0;
  for (int i = 0; i < inputs; ++i) {
    ASSERT_EQ(c.post("/v1/sessions/ses_slow/inputs", R"({"text":")" + text + R"(","resume":false})").status, 202U);
    most_queued = std::max(most_queued, metric("tether_sse_queued_bytes"));
    most_buffered = std::max(most_buffered, metric("tether_tail_buffered_bytes"));
  }
  // 80 events of 50 KB: 4 MB for each reader, 20 MB in all, if nothing bounded them.
  std::cout << "peak bytes queued for the readers: " << most_queued << ", held in their tails: " << most_buffered
            << "\n";
  const std::int64_t frame = 52'000;
  EXPECT_LE(most_queued, readers * static_cast<std::int64_t>(cap + frame));
  EXPECT_LE(most_buffered, readers * static_cast<std::int64_t>((1U << 20U) + frame));
  EXPECT_GT(most_queued + most_buffered, 0) << "the readers did fall behind";

  // A reader that starts reading gets every durable event, in order, once.
  const auto last = c.get("/v1/sessions/ses_slow").body.at("session").at("last_seq").to_number<std::int64_t>();
  std::string seen;
  std::array<char, 65536> chunk{};
  std::int64_t expected = 1;
  std::size_t scanned = 0;
  while (expected <= last) {
    boost::system::error_code ec;
    const auto n = stalled[0]->socket().read_some(asio::buffer(chunk), ec);
    ASSERT_FALSE(ec) << ec.message() << " before seq " << expected;
    seen.append(chunk.data(), n);
    for (auto at = seen.find("\nid: ", scanned); at != std::string::npos; at = seen.find("\nid: ", at + 1)) {
      const auto end = seen.find('\n', at + 1);
      if (end == std::string::npos) break;
      ASSERT_EQ(std::stoll(seen.substr(at + 5, end - at - 5)), expected);
      ++expected;
      scanned = end;
    }
    if (seen.size() > 1'000'000) {  // keep what may hold a partial line only
      seen.erase(0, scanned);
      scanned = 0;
    }
  }
  stalled.clear();
  bool released = false;
  for (int i = 0; i < 500 && !released; ++i) {
    released = metric("tether_sse_queued_bytes") == 0 && metric("tether_tail_buffered_bytes") == 0;
    if (!released) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(released) << "queued " << metric("tether_sse_queued_bytes") << ", buffered "
                        << metric("tether_tail_buffered_bytes");
}

}  // namespace
}  // namespace tether::api
