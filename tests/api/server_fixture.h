// The API server tests' fixture: a SQLite store, a session service whose
// turns finish at once, an api::server on a free loopback port, and small
// HTTP/1.1 clients (one keep-alive connection; one raw connection).
#pragma once

#include "api/server.h"

#include <sys/socket.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
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
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include "session/runtime.h"
#include "session/service.h"
#include "store/sqlite/sqlite_store.h"
#include "util/metrics.h"

namespace tether::api::testing_support {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using tcp = asio::ip::tcp;

inline constexpr std::string_view token = "s3cret-token";

// Finishes every turn at once: the API tests only need admission to work.
class idle_runtime final : public session::runtime {
 public:
  [[nodiscard]] std::string name(std::string_view) const override { return "idle"; }
  session::task<session::turn_result> run_turn(session::turn_context, std::shared_ptr<session::turn_host>) override {
    co_return session::turn_result{};
  }
};

struct reply {
  unsigned status = 0;
  json::value body;
  std::string raw;
  std::vector<std::pair<std::string, std::string>> headers;  // as received, in order
  // The first header field of that name (case-insensitive), "" when absent.
  [[nodiscard]] std::string header(std::string_view name) const {
    for (const auto& [k, v] : headers)
      if (boost::beast::iequals(k, name)) return v;
    return {};
  }
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
    parser.skip(method == http::verb::head);  // a reply to HEAD has its Content-Length and no body
    http::read(socket_, buffer_, parser);
    reply r;
    r.status = parser.get().result_int();
    r.raw = parser.get().body();
    for (const auto& f : parser.get()) r.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
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

// One raw connection: connects (from `source` when given: 127.0.0.2 is
// another peer on loopback), writes what it is told, reads one response.
class raw_connection {
 public:
  raw_connection(std::uint16_t port, const std::string& source = "", int receive_buffer = 0) : socket_(io_) {
    socket_.open(tcp::v4());
    if (receive_buffer > 0) socket_.set_option(asio::socket_base::receive_buffer_size(receive_buffer));
    if (!source.empty()) socket_.bind(tcp::endpoint(asio::ip::make_address(source), 0));
    socket_.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  }
  void write(const std::string& bytes) { asio::write(socket_, asio::buffer(bytes)); }
  // The next response; status 0 when the connection ended first.
  reply read() {
    http::response_parser<http::string_body> parser;
    boost::system::error_code ec;
    http::read(socket_, buffer_, parser, ec);
    reply r;
    if (ec) return r;
    r.status = parser.get().result_int();
    r.raw = parser.get().body();
    for (const auto& f : parser.get()) r.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
    r.body = json::parse(r.raw, ec);
    return r;
  }
  tcp::socket& socket() { return socket_; }

 private:
  asio::io_context io_;
  tcp::socket socket_;
  beast::flat_buffer buffer_;
};

inline std::string raw_request(const std::string& method, const std::string& target, const std::string& body,
                        const std::string& headers) {
  std::string out = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  out += headers;
  out += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  return out;
}

inline const std::string auth_header = "Authorization: Bearer " + std::string(token) + "\r\n";

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

    std::filesystem::create_directories(dir_ / "roots" / "a");
    restart_server({});
  }

  // Replaces the server with one made with `o` (listen, token, body limit and
  // workspace roots are filled in when left at their defaults).
  void restart_server(server_options o) {
    if (server_) run(server_->stop());
    server_.reset();
    o.listen = "127.0.0.1:0";
    o.token = std::string(token);
    if (o.max_body_bytes == server_options{}.max_body_bytes) o.max_body_bytes = 64UL * 1024UL;
    if (o.workspace_roots.empty()) o.workspace_roots = {dir_ / "roots"};
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

}  // namespace tether::api::testing_support
