// client::api_client — the synchronous HTTP/1.1 client of a running
// `tether serve` (the contract is docs/openapi.json; the shapes are in
// src/api/server.h): the one client of Tether's API, used by the `tether`
// verbs, `tether e2e`, the benchmarks and the tests. It links the event-stream
// parser (http/sse_parser.h) and nothing of the runtime: no TLS, no providers.
//
//   api_client c(options);
//   result<json::value> s = c.get("/v1/sessions");
//   result<json::value> in = c.post("/v1/sessions/ses_x/inputs", {{"text", "hi"}});
//   auto stream = c.open_events("/v1/sessions/ses_x/events?after=7");
//   while (...) for (auto& e : stream->next(200ms).value()) handle(e);
//
// Every request is one connection (Connection: close): a CLI makes a handful
// of requests, so a keep-alive pool would buy nothing. Beast builds the
// requests and parses the responses; the socket is a plain non-blocking TCP
// socket driven by poll(), so that every operation has a deadline, Ctrl-C
// (see sigint_count) ends a wait at once, and `tether chat` can wait on an
// event stream and the terminal together on one thread.
//
// Errors (tether::error with a client_errc code; message is one line meant
// for the user, without the "tether: " prefix):
//   unreachable   no TCP connection: "cannot reach the server at URL
//                 (connection refused) — is `tether serve` running?"
//   timeout       a deadline passed (connect, response, or the stream's
//                 idle timeout: the server sends a heartbeat every 15 s)
//   unauthorized  401; the message says where the token came from
//   refused       any other 4xx/5xx: "<code>: <message>" from the server's
//                 {"error":{code,message}}; http_status() has the status
//   bad_response  not HTTP, not JSON, or the connection broke mid-response
//   interrupted   Ctrl-C arrived during the request
//
// raw() is the same exchange without the JSON and error mapping (any method,
// body and headers; every status is a result): for tests and benchmarks that
// check what the server answers to malformed or unauthenticated requests.
//
// Threads: a client and its streams belong to one thread.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <boost/json/value.hpp>

#include "http/sse_parser.h"
#include "util/result.h"

namespace tether::client {

enum class client_errc {
  unreachable = 1,
  timeout,
  unauthorized,
  refused,
  bad_response,
  interrupted,
};

const std::error_category& client_category();
inline std::error_code make_error_code(client_errc e) { return {static_cast<int>(e), client_category()}; }

// Ctrl-C: install_sigint_handler() makes SIGINT (and SIGTERM) count instead of
// killing the process, without SA_RESTART, so blocking waits return. Every
// wait in this file ends early, as `interrupted`, when the count rises above
// its value when the request started; a stream's next() returns no events
// instead, and the caller looks at the count.
void install_sigint_handler();
int sigint_count();

struct server_address {
  std::string host;  // without brackets for IPv6
  std::string port;
  std::string base_path;  // "" or "/prefix" (no trailing slash)
  std::string url;        // as given, for messages
};

// "http://HOST[:PORT][/PATH]"; https is refused (util_errc::invalid_argument).
result<server_address> parse_server_url(std::string_view url);

struct client_options {
  std::string server = "http://127.0.0.1:7420";
  std::string token;         // empty: no Authorization header
  std::string token_source;  // where the token came from, for 401 messages
  std::chrono::milliseconds connect_timeout{5'000};
  std::chrono::milliseconds response_timeout{60'000};
  std::chrono::milliseconds stream_idle_timeout{45'000};
};

// An SSE response being read (GET …/events with Accept: text/event-stream).
class event_stream {
 public:
  virtual ~event_stream() = default;
  // Waits at most `wait` for data and returns the events it completed (none
  // when the wait ran out or Ctrl-C arrived). Errors: the stream ended
  // (bad_response, "the server closed the event stream"), idle timeout.
  virtual result<std::vector<http::sse_event>> next(std::chrono::milliseconds wait) = 0;
  // The socket, to poll() it together with other descriptors.
  [[nodiscard]] virtual int fd() const = 0;
};

struct header_field {
  std::string name;
  std::string value;
};

// A whole response as the server sent it (raw()).
struct raw_response {
  int status = 0;
  std::vector<header_field> headers;
  std::string body;
  // The first header of that name (case-insensitive), or "".
  [[nodiscard]] std::string header(std::string_view name) const;
};

class api_client {
 public:
  explicit api_client(client_options options);

  [[nodiscard]] const client_options& options() const { return options_; }

  // A JSON exchange; returns the response body (null when empty). A status
  // of 400 or more is an error (see above).
  result<boost::json::value> get(std::string_view target);
  result<boost::json::value> post(std::string_view target, const boost::json::value& body);

  // Sends the request with `Accept: text/event-stream` and returns once the
  // response head is read. A non-200 head is an error like get()'s.
  result<std::unique_ptr<event_stream>> open_events(std::string_view target,
                                                    std::optional<std::int64_t> last_event_id = std::nullopt);

  // One exchange on its own connection, read to its end; every status is a
  // value. `headers` replace the client's defaults of the same name (the
  // token's Authorization among them). The body, when not empty (or for
  // POST/PUT/PATCH), is sent as application/json unless a Content-Type is given.
  result<raw_response> raw(std::string_view method, std::string_view target, const std::string& body = {},
                           const std::vector<header_field>& headers = {});

  // The last error's HTTP status (0 when there was no response).
  [[nodiscard]] int http_status() const { return last_status_; }

 private:
  result<boost::json::value> exchange(std::string_view method, std::string_view target, const std::string* body);

  client_options options_;
  std::optional<server_address> address_;
  std::string address_error_;
  int last_status_ = 0;
};

}  // namespace tether::client

template <>
struct std::is_error_code_enum<tether::client::client_errc> : std::true_type {};
