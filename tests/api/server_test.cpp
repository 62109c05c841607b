#include "api/server.h"

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include "session/runtime.h"
#include "session/service.h"
#include "store/sqlite/sqlite_store.h"

namespace tether::api {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using tcp = asio::ip::tcp;

constexpr std::string_view token = "s3cret-token";

// Finishes every turn at once: the API tests only need admission to work.
class idle_runtime final : public session::runtime {
 public:
  session::task<session::turn_result> run_turn(session::turn_context, std::shared_ptr<session::turn_host>) override {
    co_return session::turn_result{};
  }
};

struct reply {
  unsigned status = 0;
  json::value body;
  std::string raw;
  [[nodiscard]] std::string error_code() const {
    if (!body.is_object() || !body.as_object().contains("error")) return {};
    return std::string(body.at("error").at("code").as_string());
  }
  [[nodiscard]] std::string error_message() const {
    if (!body.is_object() || !body.as_object().contains("error")) return {};
    return std::string(body.at("error").at("message").as_string());
  }
};

// A small synchronous HTTP/1.1 client over one keep-alive connection.
class client {
 public:
  explicit client(std::uint16_t port) : socket_(io_) {
    socket_.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  }

  enum class framing { length, chunked };
  reply send(http::verb method, const std::string& target, std::optional<std::string> body = std::nullopt,
             std::optional<std::string> auth = std::string("Bearer ") + std::string(token),
             framing f = framing::length) {
    http::request<http::string_body> req{method, target, 11};
    req.set(http::field::host, "127.0.0.1");
    if (auth) req.set(http::field::authorization, *auth);
    if (body) {
      req.set(http::field::content_type, "application/json");
      req.body() = *body;
    }
    req.keep_alive(true);
    if (f == framing::chunked)
      req.chunked(true);
    else
      req.prepare_payload();
    http::write(socket_, req);
    http::response_parser<http::string_body> parser;
    parser.body_limit(64U << 20U);
    http::read(socket_, buffer_, parser);
    reply r;
    r.status = parser.get().result_int();
    r.raw = parser.get().body();
    boost::system::error_code ec;
    r.body = json::parse(r.raw, ec);
    return r;
  }
  reply get(const std::string& target) { return send(http::verb::get, target); }
  reply post(const std::string& target, std::string body) { return send(http::verb::post, target, std::move(body)); }

 private:
  asio::io_context io_;
  tcp::socket socket_;
  beast::flat_buffer buffer_;
};

class api_server_test : public ::testing::Test {
 protected:
  api_server_test() {
    std::random_device rd;
    dir_ = std::filesystem::temp_directory_path() / ("tether-api-" + std::to_string(rd()));
    std::filesystem::create_directories(dir_);
    store::sqlite_options so;
    so.path = (dir_ / "tether.db").string();
    auto st = store::open_sqlite_store(std::move(so));
    EXPECT_TRUE(st.has_value());
    store_ = std::move(st).value();
    work_.emplace(io_.get_executor());
    for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { io_.run(); });

    session::session_options opts;
    opts.recovery_interval_ms = 0;
    service_ = std::make_unique<session::session_service>(io_.get_executor(), *store_, runtime_, real_clock(),
                                                          session::make_node_identity("api-node"), opts);
    auto started = run(service_->start());
    EXPECT_TRUE(started.has_value());

    server_options o;
    o.listen = "127.0.0.1:0";
    o.token = std::string(token);
    o.max_body_bytes = 64UL * 1024UL;
    server_ = std::make_unique<server>(io_.get_executor(), *service_, *store_, o);
    auto r = server_->start();
    EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().describe());
  }

  ~api_server_test() override {
    run(server_->stop());
    server_.reset();
    run(service_->stop());
    service_.reset();
    store_->stop();
    work_.reset();
    for (auto& t : threads_) t.join();
    store_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  template <class T>
  T run(asio::awaitable<T> a) {
    return asio::co_spawn(io_, std::move(a), asio::use_future).get();
  }
  void run(asio::awaitable<void> a) { asio::co_spawn(io_, std::move(a), asio::use_future).get(); }

  client connect() { return client(server_->port()); }

  std::filesystem::path dir_;
  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  std::vector<std::thread> threads_;
  idle_runtime runtime_;
  std::unique_ptr<store::event_store> store_;
  std::unique_ptr<session::session_service> service_;
  std::unique_ptr<server> server_;
};

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
  auto created = c.post("/v1/sessions", R"({"title":"fix the build","workspace":"/tmp/w","profile":"default"})");
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
  EXPECT_EQ(got.body.at("session").at("workspace").as_string(), "/tmp/w");

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
  auto health = c.send(http::verb::post, "/v1/health", std::string("{}"), std::nullopt);
  EXPECT_EQ(health.status, 405U);
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

}  // namespace
}  // namespace tether::api
