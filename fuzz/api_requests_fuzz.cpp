// The HTTP API from bytes to handler: the bytes of one connection are parsed
// by Beast's request_parser exactly as api/server.cpp configures it (header
// and body limits), fed in chunks cut at pseudo-random places, and every
// request it yields runs through the real route handler (api/handler.h) on a
// real session service over a real SQLite store in a private temporary
// directory (on /dev/shm when there is one, so commits cost no disk flush).
// Only the socket is missing.
//
// Input: one byte seeds the cuts, the rest is what a client sends (several
// pipelined requests, as on a keep-alive connection). Invariants: no
// exception escapes; every reply has a status from 200 to 599; a JSON reply
// is valid UTF-8 and parses as JSON.
//
// TETHER_FUZZ_VERBOSE set: each request line and its reply go to stderr.
//
// The store keeps what earlier inputs created (as a server does); it is
// replaced by a fresh one every `generation_runs` inputs so it stays small.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <boost/asio/buffer.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <openssl/crypto.h>

#include "api/errors.h"
#include "api/handler.h"
#include "api/web_auth.h"
#include "fuzz_support.h"
#include "session/runtime.h"
#include "session/service.h"
#include "store/sqlite/sqlite_store.h"

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
namespace api = tether::api;
namespace session = tether::session;
namespace store = tether::store;

constexpr std::string_view token = "fuzz-token";
constexpr std::uint32_t header_limit = 16U * 1024U;  // as api/server.cpp
constexpr std::size_t max_body_bytes = 64U * 1024U;
constexpr int generation_runs = 2000;

// Ends every turn at once: the fuzzer drives the API, not the agent.
class idle_runtime final : public session::runtime {
 public:
  [[nodiscard]] std::string name(std::string_view) const override { return "idle"; }
  session::task<session::turn_result> run_turn(session::turn_context, std::shared_ptr<session::turn_host>) override {
    co_return session::turn_result{};
  }
};

std::filesystem::path scratch_root() {
  std::error_code ec;
  if (std::filesystem::is_directory("/dev/shm", ec)) return "/dev/shm";
  return std::filesystem::temp_directory_path();
}

// A server's parts without its sockets.
class world {
 public:
  world() {
    dir_ = scratch_root() / ("tether-fuzz-api-" + std::to_string(::getpid()) + "-" + std::to_string(++count_));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    store::sqlite_options so;
    so.path = (dir_ / "tether.db").string();
    auto st = store::open_sqlite_store(std::move(so));
    FUZZ_CHECK(st.has_value());
    store_ = std::move(st).value();
    work_.emplace(io_.get_executor());
    thread_ = std::thread([this] { io_.run(); });
    session::session_options opts;
    opts.recovery_interval_ms = 0;
    service_ = std::make_unique<session::session_service>(io_.get_executor(), *store_, runtime_,
                                                          tether::real_clock(),
                                                          session::make_node_identity("fuzz-node"), opts);
    FUZZ_CHECK(run(service_->start()).has_value());
    ctx_.service = service_.get();
    ctx_.store = store_.get();
    ctx_.options.token = std::string(token);
    ctx_.options.max_body_bytes = max_body_bytes;
    ctx_.auth = std::make_shared<api::web_auth>(token);
  }
  ~world() {
    run(service_->stop());
    service_.reset();
    store_->stop();
    work_.reset();
    thread_.join();
    store_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  world(const world&) = delete;
  world& operator=(const world&) = delete;

  template <class T>
  T run(asio::awaitable<T> a) {
    return asio::co_spawn(io_, std::move(a), asio::use_future).get();
  }
  void run(asio::awaitable<void> a) { asio::co_spawn(io_, std::move(a), asio::use_future).get(); }

  api::http_reply handle(api::http_request req) { return run(api::handle(&ctx_, std::move(req))); }

 private:
  static inline int count_ = 0;
  std::filesystem::path dir_;
  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  std::thread thread_;
  idle_runtime runtime_;
  std::unique_ptr<store::event_store> store_;
  std::unique_ptr<session::session_service> service_;
  api::handler_context ctx_;
};

std::unique_ptr<world> the_world;

void check_reply(const api::http_reply& r) {
  FUZZ_CHECK(r.status >= 200 && r.status <= 599);
  if (r.stream || r.content_type != "application/json") return;
  FUZZ_CHECK(tether::fuzz::valid_utf8(r.body));
  boost::system::error_code ec;
  (void)json::parse(r.body, ec);
  FUZZ_CHECK(!ec);
}

// The Content-Type header, where the handler's request carries it.
template <class Request>
void set_content_type(Request& hr, std::string_view value) {
  if constexpr (requires { hr.content_type; }) hr.content_type = std::string(value);
}

// What api/server.cpp takes from a parsed request.
api::http_request to_handler_request(http::request<http::string_body>& req) {
  api::http_request hr;
  hr.method = std::string(req.method_string());
  hr.target = std::string(req.target());
  hr.authorization = std::string(req[http::field::authorization]);
  hr.accept = std::string(req[http::field::accept]);
  hr.last_event_id = std::string(req["Last-Event-ID"]);
  hr.cookie = std::string(req[http::field::cookie]);
  hr.csrf = std::string(req["X-Tether-CSRF"]);
  hr.if_none_match = std::string(req[http::field::if_none_match]);
  set_content_type(hr, req[http::field::content_type]);
  hr.body = std::move(req.body());
  return hr;
}

}  // namespace

// TETHER_FUZZ_VERBOSE=1: print each request line and its reply (to check
// what a corpus input reaches).
const bool verbose = std::getenv("TETHER_FUZZ_VERBOSE") != nullptr;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // OpenSSL (the sign-in's HMAC, called on the world's io thread) frees a
  // thread's state when the thread ends, unless its own exit handler has
  // already run, and that handler ran before ours: the last world's thread
  // then ended with nobody to free its error state (904 bytes LeakSanitizer
  // reported at exit). Without the handler, OpenSSL's globals stay
  // reachable and every thread's state is freed when the thread ends.
  FUZZ_CHECK(OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, nullptr) == 1);
  std::atexit([] { the_world.reset(); });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static int runs = 0;
  if (!the_world || ++runs % generation_runs == 0) {
    the_world.reset();
    the_world = std::make_unique<world>();
  }
  tether::fuzz::input_reader in(data, size);
  tether::fuzz::splitter cuts(in.byte());
  std::string_view rest = in.rest();

  while (!rest.empty()) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(header_limit);
    parser.body_limit(max_body_bytes);
    parser.eager(true);
    boost::system::error_code ec;
    std::size_t window = std::min(cuts.next(512), rest.size());
    while (!parser.is_done()) {
      const std::size_t used = parser.put(asio::buffer(rest.data(), window), ec);
      rest.remove_prefix(used);
      window -= used;
      if (ec == http::error::need_more || (!ec && used == 0)) {  // the window is used up
        ec = {};
        if (window == rest.size()) {  // the client sent nothing more
          parser.put_eof(ec);
          if (!ec && !parser.is_done()) ec = http::error::partial_message;
          break;
        }
        window = std::min(window + cuts.next(512), rest.size());
        continue;
      }
      if (ec) break;
    }
    if (ec) {
      if (ec == http::error::body_limit) {  // the server answers 413, then closes
        check_reply(api::error_reply(tether::make_error(api::api_errc::too_large, "the body is too large")));
      }
      return 0;  // the server answers 400 and closes the connection
    }
    auto req = parser.release();
    const bool keep_alive = req.keep_alive();
    auto hr = to_handler_request(req);
    const std::string line = hr.method + " " + hr.target;
    const auto reply = the_world->handle(std::move(hr));
    if (verbose) std::fprintf(stderr, "%s -> %u %.200s\n", line.c_str(), reply.status, reply.body.c_str());
    check_reply(reply);
    if (!keep_alive) return 0;
  }
  return 0;
}
