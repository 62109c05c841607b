// Keep-alive connections to a provider, against the real scripted model
// (`tether mock-llm`) behind a counting relay: reuse, a connection the
// server closed, an interrupt, the bounds, TLS session resumption.
#include "http/connection_pool.h"

#include <gtest/gtest.h>

#include <sys/socket.h>

#include <cstdlib>
#include <filesystem>
#include <random>
#include <stop_token>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>

#include "e2e/run/process.h"
#include "http/client.h"
#include "runtime/native/providers/provider.h"
#include "runtime/native/providers/relay.h"
#include "support/run.h"

namespace tether::runtime::native {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::relay;

std::string tether_binary() {
  const char* b = std::getenv("TETHER_TEST_BINARY");
  return b != nullptr ? b : TETHER_BINARY;
}

// A `tether mock-llm` on a free loopback port, plain or with --tls.
class scripted_model {
 public:
  enum class transport { plain, tls };
  explicit scripted_model(transport t = transport::plain) {
    std::random_device rd;
    dir_ = fs::temp_directory_path() / ("tether-pool-" + std::to_string(rd()));
    fs::create_directories(dir_);
    std::vector<std::string> argv{tether_binary(), "mock-llm", "--listen", "127.0.0.1:0"};
    if (t == transport::tls) {
      argv.insert(argv.end(), {"--tls", "--tls-cert-out", (dir_ / "cert.pem").string()});
    }
    auto p = e2e::child_process::start(argv, dir_ / "mock.log");
    if (!p) throw std::runtime_error(p.error().message);
    proc_ = std::move(*p);
    auto line = proc_->wait_line("mock-llm listening on ", 20s);
    if (!line) throw std::runtime_error(line.error().message);
    port_ = static_cast<std::uint16_t>(std::stoi(line->substr(line->rfind(':') + 1)));
  }
  ~scripted_model() {
    proc_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  scripted_model(const scripted_model&) = delete;
  scripted_model& operator=(const scripted_model&) = delete;

  [[nodiscard]] std::uint16_t port() const { return port_; }
  [[nodiscard]] std::string certificate() const { return (dir_ / "cert.pem").string(); }

 private:
  fs::path dir_;
  std::unique_ptr<e2e::child_process> proc_;
  std::uint16_t port_ = 0;
};

provider_options options_for(const std::string& scheme, std::uint16_t port) {
  provider_options o;
  o.api = wire_api::openai_chat;
  o.base_url = scheme + "://127.0.0.1:" + std::to_string(port) + "/v1";
  o.model = "scripted";
  o.http_proxy = o.https_proxy = o.no_proxy = std::string();
  return o;
}

model_request ask(const std::string& prompt) {
  model_request r;
  r.model = "scripted";
  r.messages.push_back(chat_message{.role = chat_role::user, .text = prompt});
  return r;
}

std::string text_of(const stream_outcome& o) { return o.done ? o.done->text : "failed: " + o.failure.message; }

http::http_request chat_request(const std::string& base, const std::string& prompt) {
  http::http_request req;
  req.url = base + "/v1/chat/completions";
  req.headers.push_back({"content-type", "application/json"});
  req.body = R"({"model":"scripted","stream":true,"messages":[{"role":"user","content":")" + prompt + R"("}]})";
  return req;
}

stream_outcome stream_once(asio::io_context& io, provider& p, const std::string& prompt) {
  return test::run_sync(io, p.stream(
                                ask(prompt), [](const stream_event&) {}, std::stop_token()));
}

TEST(connection_pool, consecutive_requests_to_one_endpoint_share_one_connection) {
  scripted_model model;
  relay r(model.port());
  auto p = make_provider(options_for("http", r.port()));
  asio::io_context io;
  for (int i = 0; i < 3; ++i) EXPECT_EQ(text_of(stream_once(io, *p, "Reply with exactly: pong")), "pong");
  EXPECT_EQ(r.accepted(), 1);
}

TEST(connection_pool, zero_bounds_open_a_connection_per_request) {
  scripted_model model;
  relay r(model.port());
  auto o = options_for("http", r.port());
  o.pool.max_idle_total = 0;
  auto p = make_provider(o);
  asio::io_context io;
  for (int i = 0; i < 3; ++i) EXPECT_EQ(text_of(stream_once(io, *p, "Reply with exactly: pong")), "pong");
  EXPECT_EQ(r.accepted(), 3);
}

TEST(connection_pool, a_connection_the_server_closed_while_idle_is_dropped_and_the_turn_succeeds) {
  scripted_model model;
  relay r(model.port());
  auto p = make_provider(options_for("http", r.port()));
  asio::io_context io;
  EXPECT_EQ(text_of(stream_once(io, *p, "Reply with exactly: one")), "one");
  r.close_idle();
  EXPECT_EQ(text_of(stream_once(io, *p, "Reply with exactly: two")), "two");
  EXPECT_EQ(r.accepted(), 2);
}

TEST(connection_pool, a_connection_closed_as_the_request_arrives_is_retried_once_on_a_fresh_one) {
  scripted_model model;
  relay r(model.port());
  http::http_options ho;
  ho.proxies = http::proxy_config{std::string(), std::string(), std::string()};
  http::http_client client(ho);
  asio::io_context io;
  const std::string base = "http://127.0.0.1:" + std::to_string(r.port());
  const auto send = [&](const std::string& prompt) {
    return test::run_sync(io, client.send(chat_request(base, prompt), http::http_handler{}, std::stop_token()));
  };
  const auto first = send("Reply with exactly: one");
  ASSERT_FALSE(first.error) << first.message;
  EXPECT_FALSE(first.reused_connection);
  r.close_on_next_request();  // still open while idle: only the request finds out
  const auto second = send("Reply with exactly: two");
  EXPECT_FALSE(second.error) << second.message;
  EXPECT_FALSE(second.reused_connection);  // the answer came on the fresh connection
  EXPECT_EQ(r.accepted(), 2);
}

TEST(connection_pool, an_interrupt_closes_only_the_connection_of_its_own_turn) {
  scripted_model model;
  relay r(model.port());
  auto p = make_provider(options_for("http", r.port()));
  asio::io_context io;
  // Two connections, both idle in the pool afterwards.
  std::optional<stream_outcome> warm_a;
  std::optional<stream_outcome> warm_b;
  asio::co_spawn(asio::make_strand(io), p->stream(ask("Reply with exactly: a"), [](const stream_event&) {}, {}),
                 [&](std::exception_ptr, stream_outcome o) { warm_a = std::move(o); });
  asio::co_spawn(asio::make_strand(io), p->stream(ask("Reply with exactly: b"), [](const stream_event&) {}, {}),
                 [&](std::exception_ptr, stream_outcome o) { warm_b = std::move(o); });
  io.run();
  ASSERT_TRUE(warm_a && warm_a->done && warm_b && warm_b->done);
  ASSERT_EQ(r.accepted(), 2);

  // Two turns on fresh strands borrow them; the first is stopped mid-stream.
  io.restart();
  std::stop_source stop_first;
  std::optional<stream_outcome> first;
  std::optional<stream_outcome> second;
  const std::string slow = "Stream slowly: 20\nReply with exactly: one two three four five six seven eight";
  asio::co_spawn(asio::make_strand(io),
                 p->stream(
                     ask(slow),
                     [&](const stream_event& e) {
                       if (std::holds_alternative<text_delta_event>(e)) stop_first.request_stop();
                     },
                     stop_first.get_token()),
                 [&](std::exception_ptr, stream_outcome o) { first = std::move(o); });
  asio::co_spawn(asio::make_strand(io), p->stream(ask(slow), [](const stream_event&) {}, {}),
                 [&](std::exception_ptr, stream_outcome o) { second = std::move(o); });
  io.run();
  ASSERT_TRUE(first && second);
  EXPECT_FALSE(first->done);
  EXPECT_EQ(first->failure.kind, provider_errc::cancelled);
  EXPECT_EQ(text_of(*second), "one two three four five six seven eight");
  EXPECT_EQ(r.accepted(), 2);  // the second turn kept its borrowed connection

  // The stopped turn's connection is gone; the other one is lent again.
  EXPECT_EQ(text_of(stream_once(io, *p, "Reply with exactly: again")), "again");
  EXPECT_EQ(r.accepted(), 2);
}

TEST(connection_pool, idle_connections_are_bounded_per_endpoint) {
  scripted_model model;
  http::http_options ho;
  ho.proxies = http::proxy_config{std::string(), std::string(), std::string()};
  ho.pool.max_idle_per_endpoint = 2;
  ho.pool.max_idle_total = 3;
  http::http_client client(ho);
  asio::io_context io;
  int done = 0;
  for (int i = 0; i < 5; ++i) {
    auto req = chat_request("http://127.0.0.1:" + std::to_string(model.port()),
                            "Stream slowly: 5\\nReply with exactly: a b c");
    asio::co_spawn(asio::make_strand(io), client.send(std::move(req), http::http_handler{}, std::stop_token()),
                   [&](std::exception_ptr, http::http_result r) {
                     EXPECT_FALSE(r.error) << r.message;
                     ++done;
                   });
  }
  io.run();
  EXPECT_EQ(done, 5);
  EXPECT_EQ(client.idle_connections(), 2u);
}

TEST(connection_pool, over_tls_a_kept_connection_is_reused_without_a_new_handshake) {
  scripted_model model(scripted_model::transport::tls);
  relay r(model.port());
  http::http_options ho;
  ho.proxies = http::proxy_config{std::string(), std::string(), std::string()};
  ho.ca_file = model.certificate();
  http::http_client client(ho);
  asio::io_context io;
  const std::string base = "https://127.0.0.1:" + std::to_string(r.port());
  const auto first = test::run_sync(io, client.send(chat_request(base, "Reply with exactly: one"), {}, {}));
  ASSERT_FALSE(first.error) << first.message;
  const auto second = test::run_sync(io, client.send(chat_request(base, "Reply with exactly: two"), {}, {}));
  ASSERT_FALSE(second.error) << second.message;
  EXPECT_TRUE(second.reused_connection);
  EXPECT_EQ(r.accepted(), 1);
}

TEST(connection_pool, over_tls_a_new_connection_resumes_the_endpoints_session) {
  scripted_model model(scripted_model::transport::tls);
  http::http_options ho;
  ho.proxies = http::proxy_config{std::string(), std::string(), std::string()};
  ho.ca_file = model.certificate();
  ho.pool.max_idle_total = 0;  // every request on a new connection
  http::http_client client(ho);
  asio::io_context io;
  const std::string base = "https://127.0.0.1:" + std::to_string(model.port());
  const auto first = test::run_sync(io, client.send(chat_request(base, "Reply with exactly: one"), {}, {}));
  ASSERT_FALSE(first.error) << first.message;
  EXPECT_FALSE(first.tls_resumed);
  const auto second = test::run_sync(io, client.send(chat_request(base, "Reply with exactly: two"), {}, {}));
  ASSERT_FALSE(second.error) << second.message;
  EXPECT_FALSE(second.reused_connection);
  EXPECT_TRUE(second.tls_resumed);  // SSL_session_reused on the new connection
}

TEST(connection_pool, over_tls_a_connection_the_server_closed_while_idle_is_dropped_and_the_turn_succeeds) {
  scripted_model model(scripted_model::transport::tls);
  relay r(model.port());
  auto o = options_for("https", r.port());
  o.ca_file = model.certificate();
  auto p = make_provider(o);
  asio::io_context io;
  EXPECT_EQ(text_of(stream_once(io, *p, "Reply with exactly: one")), "one");
  r.close_on_next_request();
  EXPECT_EQ(text_of(stream_once(io, *p, "Reply with exactly: two")), "two");
  EXPECT_EQ(r.accepted(), 2);
}

TEST(connection_pool, a_certificate_nobody_trusts_fails_the_handshake) {
  scripted_model model(scripted_model::transport::tls);
  auto p = make_provider(options_for("https", model.port()));  // no ca_file
  asio::io_context io;
  const auto out = stream_once(io, *p, "Reply with exactly: one");
  ASSERT_FALSE(out.done);
  EXPECT_EQ(out.failure.kind, provider_errc::transport);
  EXPECT_FALSE(out.failure.request_sent);
}

TEST(connection_pool, a_certificate_named_by_ssl_cert_file_is_trusted_without_ca_file) {
  scripted_model model(scripted_model::transport::tls);
  const char* before = std::getenv("SSL_CERT_FILE");
  const std::optional<std::string> saved = before != nullptr ? std::optional<std::string>(before) : std::nullopt;
  ::setenv("SSL_CERT_FILE", model.certificate().c_str(), 1);
  auto p = make_provider(options_for("https", model.port()));
  asio::io_context io;
  const auto out = stream_once(io, *p, "Reply with exactly: trusted");
  if (saved)
    ::setenv("SSL_CERT_FILE", saved->c_str(), 1);
  else
    ::unsetenv("SSL_CERT_FILE");
  EXPECT_EQ(text_of(out), "trusted");
}

TEST(connection_pool, idle_connections_are_bounded_in_total) {
  http::connection_pool pool(http::connection_pool_options{.max_idle_per_endpoint = 4, .max_idle_total = 3});
  for (int i = 0; i < 5; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    pool.release(http::pool_key{"http", "host" + std::to_string(i % 2), 80, ""},
                 http::idle_connection(fd, http::ip_family::v4, nullptr));
  }
  EXPECT_EQ(pool.idle_count(), 3u);
}

TEST(connection_pool, an_idle_connection_past_the_idle_timeout_is_not_lent) {
  http::connection_pool pool(http::connection_pool_options{.idle_timeout = std::chrono::milliseconds(0)});
  const http::pool_key key{"http", "h", 80, ""};
  pool.release(key, http::idle_connection(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), http::ip_family::v4, nullptr));
  EXPECT_FALSE(pool.acquire(key));
  EXPECT_EQ(pool.idle_count(), 0u);
}

}  // namespace
}  // namespace tether::runtime::native
