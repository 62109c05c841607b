// The model relay (model_relay.h): a run's token in, the real key out, the
// response streamed back piece by piece, its usage read on the way, and
// nothing forwarded for a wrong token or a path that is not a model's.
#include "runtime/agent/relay/model_relay.h"

#include <sys/stat.h>

#include <future>
#include <mutex>

#include <gtest/gtest.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include "http/client.h"
#include "http/server_shell.h"
#include "mock/server.h"
#include "runtime/agent/agent_test_support.h"

namespace tether::runtime::agent {
namespace {

using namespace test;  // NOLINT(google-build-using-namespace)

// A model server of the test's own: it keeps each request's head and
// streams its answer in two pieces, the second only once the test lets it.
class held_upstream final : public http::routes {
 public:
  explicit held_upstream(asio::any_io_executor ex) : release_(ex) {
    release_.expires_at(asio::steady_timer::time_point::max());
  }
  asio::awaitable<http::reply> handle(http::request req, http::request_info) override {
    {
      std::lock_guard lock(mu_);
      heads_.push_back(req);
      heads_.back().body().clear();
      bodies_.push_back(req.body());
    }
    http::reply r;
    r.streamer = [this](std::shared_ptr<http::stream> out) -> asio::awaitable<http::after_stream> {
      std::string head =
          "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nX-Upstream: yes\r\nTransfer-Encoding: chunked\r\n\r\n";
      (void)co_await out->write(head + chunk(first), 5s);
      if (!released_) (void)co_await release_.async_wait(asio::as_tuple(asio::use_awaitable));
      (void)co_await out->write(chunk(second) + "0\r\n\r\n", 5s);
      co_return http::after_stream::keep_alive;
    };
    co_return r;
  }
  http::response too_large(const http::request&, std::size_t) override { return {}; }
  http::response malformed(unsigned, std::string) override { return {}; }

  void release() {
    asio::post(release_.get_executor(), [this] {
      released_ = true;
      release_.cancel();
    });
  }
  http::request head(std::size_t i) {
    std::lock_guard lock(mu_);
    return heads_.at(i);
  }
  std::string body(std::size_t i) {
    std::lock_guard lock(mu_);
    return bodies_.at(i);
  }
  std::size_t count() {
    std::lock_guard lock(mu_);
    return heads_.size();
  }

  static constexpr std::string_view first =
      "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":11,"
      "\"cache_read_input_tokens\":4,\"output_tokens\":1}}}\n\n";
  static constexpr std::string_view second =
      "event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":7}}\n\n"
      "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";

 private:
  static std::string chunk(std::string_view s) {
    char size[20];
    std::snprintf(size, sizeof size, "%zx\r\n", s.size());
    return std::string(size) + std::string(s) + "\r\n";
  }
  asio::steady_timer release_;
  bool released_ = false;  // on the upstream's one thread, as the streamer
  std::mutex mu_;
  std::vector<http::request> heads_;
  std::vector<std::string> bodies_;
};

struct exchange {
  int status = 0;
  std::vector<http::http_header> headers;
  std::string body;
  std::error_code error;
  std::string header(std::string_view name) const {
    for (const auto& h : headers)
      if (boost::beast::iequals(h.name, name)) return h.value;
    return {};
  }
};

class model_relay_test : public ::testing::Test {
 protected:
  void SetUp() override {
    relay_ = std::make_unique<model_relay>(ctx_.executor(), relay_options{dir_.path() / "run" / "relay.sock"});
    ASSERT_TRUE(relay_->start());
  }
  void TearDown() override { asio::co_spawn(ctx_.executor(), relay_->stop(), asio::use_future).get(); }

  std::shared_ptr<http::http_client> client() {
    http::http_options o;
    o.proxies.no_proxy = "*";
    return std::make_shared<http::http_client>(o);
  }

  // One request to the relay; `on_piece` sees each piece of the body as it comes.
  exchange send(const std::string& target, std::vector<http::http_header> headers, std::string body,
                std::function<void(std::string_view)> on_piece = {}, std::string method = "POST") {
    auto c = client();
    auto out = std::make_shared<exchange>();
    http::http_request req;
    req.method = std::move(method);
    req.url = "http://127.0.0.1:" + std::to_string(relay_->port()) + target;
    req.headers = std::move(headers);
    req.body = std::move(body);
    http::http_handler h;
    h.on_head = [out](const http::http_response_head& head) {
      out->status = head.status;
      out->headers = head.headers;
    };
    h.on_body = [out, on_piece](std::string_view piece) {
      out->body.append(piece);
      if (on_piece) on_piece(piece);
      return http::body_action::more;
    };
    auto r = asio::co_spawn(ctx_.executor(), c->send(std::move(req), std::move(h), {}), asio::use_future).get();
    out->error = r.error;
    return *out;
  }

  temp_dir dir_;
  running_context ctx_;
  std::unique_ptr<model_relay> relay_;
};

TEST_F(model_relay_test, a_run_token_is_replaced_by_the_real_key_and_the_answer_streams_piece_by_piece) {
  running_context upstream_ctx;
  auto routes = std::make_shared<held_upstream>(upstream_ctx.executor());
  http::server_shell upstream(upstream_ctx.executor(), {}, routes);
  ASSERT_TRUE(upstream.start());
  const std::string base = "http://127.0.0.1:" + std::to_string(upstream.port()) + "/api";
  auto grant = relay_->open({base, "sk-real-provider-key", client()});
  EXPECT_EQ(grant.token().size(), 64U);
  EXPECT_EQ(relay_->local_url(base), "http://127.0.0.1:" + std::to_string(relay_->port()) + "/api");

  // The second piece is held until the agent's side has the first: a relay
  // that buffered the response would never deliver it.
  std::promise<void> first_seen;
  bool once = false;
  auto got = send("/api/messages?beta=true",
                  {{"x-api-key", grant.token()},
                   {"anthropic-version", "2023-06-01"},
                   {"Accept-Encoding", "gzip"},
                   {"User-Agent", "claude-cli/2.0"}},
                  R"({"model":"m","stream":true})", [&](std::string_view) {
                    if (!std::exchange(once, true)) {
                      first_seen.set_value();
                      routes->release();
                    }
                  });
  ASSERT_FALSE(got.error) << got.error.message();
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(got.header("X-Upstream"), "yes");
  EXPECT_EQ(got.body, std::string(held_upstream::first) + std::string(held_upstream::second));

  ASSERT_EQ(routes->count(), 1U);
  const auto head = routes->head(0);
  EXPECT_EQ(head.target(), "/api/messages?beta=true");
  EXPECT_EQ(head["x-api-key"], "sk-real-provider-key");
  EXPECT_EQ(head.count("Authorization"), 0U);
  EXPECT_EQ(head["anthropic-version"], "2023-06-01");
  EXPECT_EQ(head.count("Accept-Encoding"), 0U);
  EXPECT_EQ(head["User-Agent"], "claude-cli/2.0");
  EXPECT_EQ(routes->body(0), R"({"model":"m","stream":true})");

  // Anthropic's usage: input = input + cache reads, output from message_delta.
  const auto m = grant.take_usage();
  EXPECT_EQ(m.responses, 1U);
  EXPECT_EQ(m.usage.input_tokens, 15);
  EXPECT_EQ(m.usage.cached_input_tokens, 4);
  EXPECT_EQ(m.usage.output_tokens, 7);
  EXPECT_EQ(grant.take_usage().responses, 0U);  // taken
  EXPECT_EQ(grant.requests(), 1U);
  asio::co_spawn(upstream_ctx.executor(), upstream.stop(), asio::use_future).get();
}

TEST_F(model_relay_test, a_bearer_token_is_replaced_by_a_bearer_key) {
  running_context upstream_ctx;
  auto routes = std::make_shared<held_upstream>(upstream_ctx.executor());
  routes->release();
  http::server_shell upstream(upstream_ctx.executor(), {}, routes);
  ASSERT_TRUE(upstream.start());
  auto grant = relay_->open({"http://127.0.0.1:" + std::to_string(upstream.port()) + "/v1", "sk-real", client()});
  auto got = send("/v1/responses", {{"Authorization", "Bearer " + grant.token()}}, "{}");
  EXPECT_EQ(got.status, 200);
  ASSERT_EQ(routes->count(), 1U);
  EXPECT_EQ(routes->head(0)["Authorization"], "Bearer sk-real");
  EXPECT_EQ(routes->head(0).count("x-api-key"), 0U);
  asio::co_spawn(upstream_ctx.executor(), upstream.stop(), asio::use_future).get();
}

TEST_F(model_relay_test, nothing_is_forwarded_without_a_live_run_token) {
  running_context upstream_ctx;
  auto routes = std::make_shared<held_upstream>(upstream_ctx.executor());
  routes->release();
  http::server_shell upstream(upstream_ctx.executor(), {}, routes);
  ASSERT_TRUE(upstream.start());
  const std::string base = "http://127.0.0.1:" + std::to_string(upstream.port()) + "/v1";
  auto grant = relay_->open({base, "sk-real", client()});
  const std::string token = grant.token();

  auto none = send("/v1/chat/completions", {}, "{}");
  EXPECT_EQ(none.status, 401);
  EXPECT_NE(none.body.find("no run's token"), std::string::npos);
  auto made_up = send("/v1/chat/completions", {{"Authorization", "Bearer " + std::string(64, 'a')}}, "{}");
  EXPECT_EQ(made_up.status, 401);
  auto real_key = send("/v1/chat/completions", {{"Authorization", "Bearer sk-real"}}, "{}");
  EXPECT_EQ(real_key.status, 401);
  grant.close();  // the run ended: its token dies with it
  auto closed = send("/v1/chat/completions", {{"Authorization", "Bearer " + token}}, "{}");
  EXPECT_EQ(closed.status, 401);
  EXPECT_EQ(routes->count(), 0U);
  asio::co_spawn(upstream_ctx.executor(), upstream.stop(), asio::use_future).get();
}

TEST_F(model_relay_test, only_model_endpoints_under_the_base_path_are_forwarded) {
  running_context upstream_ctx;
  auto routes = std::make_shared<held_upstream>(upstream_ctx.executor());
  routes->release();
  http::server_shell upstream(upstream_ctx.executor(), {}, routes);
  ASSERT_TRUE(upstream.start());
  auto grant = relay_->open({"http://127.0.0.1:" + std::to_string(upstream.port()) + "/v1", "sk-real", client()});
  const http::http_header auth{"Authorization", "Bearer " + grant.token()};
  for (const std::string target :
       {"/v1/files", "/v1/organization/api_keys", "/v2/responses", "/responses", "/v1/../admin/responses",
        "/v1/%2e%2e/keys", "/v1//responses", "/v1/chat/x", "/v1"}) {
    auto got = send(target, {auth}, "{}");
    EXPECT_EQ(got.status, 403) << target;
  }
  EXPECT_EQ(routes->count(), 0U);
  for (const std::string target : {"/v1/responses", "/v1/chat/completions", "/v1/messages/count_tokens"})
    EXPECT_EQ(send(target, {auth}, "{}").status, 200) << target;
  EXPECT_EQ(send("/v1/models", {auth}, "", {}, "GET").status, 200);
  EXPECT_EQ(routes->count(), 4U);
  // Under a root base URL (Anthropic's), the SDK's own /v1 is allowed too.
  auto root = relay_->open({"http://127.0.0.1:" + std::to_string(upstream.port()), "sk-real", client()});
  const http::http_header root_auth{"x-api-key", root.token()};
  EXPECT_EQ(send("/v1/messages?beta=true", {root_auth}, "{}").status, 200);
  EXPECT_EQ(send("/messages", {root_auth}, "{}").status, 200);
  EXPECT_EQ(send("/v1/files", {root_auth}, "{}").status, 403);
  EXPECT_EQ(send("/v2/messages", {root_auth}, "{}").status, 403);
  EXPECT_EQ(routes->count(), 6U);
  asio::co_spawn(upstream_ctx.executor(), upstream.stop(), asio::use_future).get();
}

TEST_F(model_relay_test, an_unreachable_model_server_is_a_502_that_names_no_secret) {
  // A port nothing listens on: bind one, then close it.
  asio::io_context io;
  asio::ip::tcp::acceptor a(io, {asio::ip::address_v4::loopback(), 0});
  const auto port = a.local_endpoint().port();
  a.close();
  auto grant = relay_->open({"http://127.0.0.1:" + std::to_string(port) + "/v1", "sk-secret-key", client()});
  auto got = send("/v1/responses", {{"Authorization", "Bearer " + grant.token()}}, "{}");
  EXPECT_EQ(got.status, 502);
  EXPECT_NE(got.body.find("tether relay: the model server"), std::string::npos) << got.body;
  EXPECT_EQ(got.body.find("sk-secret-key"), std::string::npos);
  EXPECT_EQ(got.body.find(grant.token()), std::string::npos);
}

// Usage from each wire format of the scripted model, streamed and whole.
TEST_F(model_relay_test, usage_is_read_from_every_wire_format_of_the_scripted_model) {
  mock::server model({.listen = "127.0.0.1:0"});
  ASSERT_TRUE(model.start());
  auto grant = relay_->open({model.base_url() + "/v1", "", client()});
  const http::http_header bearer{"Authorization", "Bearer " + grant.token()};
  const http::http_header xkey{"x-api-key", grant.token()};
  const std::string say = "Reply with exactly: relayed words here";
  struct call {
    std::string target;
    http::http_header auth;
    std::string body;
  };
  const std::vector<call> calls = {
      {"/v1/responses", bearer, R"({"model":"m","stream":true,"input":")" + say + "\"}"},
      {"/v1/responses", bearer, R"({"model":"m","input":")" + say + "\"}"},
      {"/v1/chat/completions", bearer,
       R"({"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":")" +
           say + "\"}]}"},
      {"/v1/chat/completions", bearer, R"({"model":"m","messages":[{"role":"user","content":")" + say + "\"}]}"},
      {"/v1/messages", xkey,
       R"({"model":"m","max_tokens":100,"stream":true,"messages":[{"role":"user","content":")" + say + "\"}]}"},
      {"/v1/messages", xkey, R"({"model":"m","max_tokens":100,"messages":[{"role":"user","content":")" + say + "\"}]}"},
  };
  for (const auto& c : calls) {
    auto got = send(c.target, {c.auth, {"Content-Type", "application/json"}}, c.body);
    ASSERT_EQ(got.status, 200) << c.target << " " << got.body;
    EXPECT_NE(got.body.find("relayed words here"), std::string::npos) << got.body;
    const auto m = grant.take_usage();
    EXPECT_EQ(m.responses, 1U) << c.target << " " << c.body;
    EXPECT_GT(m.usage.input_tokens, 0) << c.target;
    EXPECT_GT(m.usage.output_tokens, 0) << c.target;
  }
  // Without include_usage a chat stream reports none, and none is counted.
  auto bare = send("/v1/chat/completions", {bearer},
                   R"({"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(bare.status, 200);
  EXPECT_EQ(grant.take_usage().responses, 0U);
  model.stop();
}

TEST_F(model_relay_test, its_unix_socket_leads_to_the_same_relay) {
  mock::server model({.listen = "127.0.0.1:0"});
  ASSERT_TRUE(model.start());
  auto grant = relay_->open({model.base_url() + "/v1", "", client()});
  struct stat st {};
  ASSERT_EQ(::stat(relay_->socket_path().c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600);
  line_client c(relay_->socket_path());
  const std::string body = R"({"model":"m","input":"Reply with exactly: over the socket"})";
  ASSERT_TRUE(c.send("POST /v1/responses HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + grant.token() +
                     "\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " +
                     std::to_string(body.size()) + "\r\n\r\n" + body));
  std::string all;
  while (auto line = c.read_line()) all += *line + "\n";
  EXPECT_TRUE(all.starts_with("HTTP/1.1 200")) << all;
  EXPECT_NE(all.find("over the socket"), std::string::npos) << all;
  EXPECT_EQ(grant.take_usage().responses, 1U);
  model.stop();
}

}  // namespace
}  // namespace tether::runtime::agent
