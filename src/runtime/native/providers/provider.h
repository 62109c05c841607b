// A model provider: one streaming request to an LLM wire API.
//
//   auto p = make_provider(options);          // openai-chat | openai-responses | anthropic
//   auto r = co_await p->stream(request, sink, stop);
//   if (!r) { auto& e = r.error(); ... classify(e) ... }
//
// stream() sends one HTTP request and calls `sink` for every stream_event in
// wire order (on the calling coroutine's executor, never concurrently). It
// returns a stream_outcome: the completion when the response ended well, or
// a failure_info saying what happened (provider_errc) with the details the
// retry policy needs (HTTP status, retry-after, whether the request was sent
// and whether any output was streamed before the failure).
//
// Cancellation: when `stop` is requested the request is abandoned (the socket
// is closed from the stream's own executor) and stream() returns
// provider_errc::cancelled promptly.
//
// A provider does not retry: retries, backoff and compaction belong to the
// agent loop (see retry.h), which records a step.retry_scheduled event per
// wait.
//
// What a failure says (failure_info):
//   - kind: non-2xx answers and error events inside a stream are classified
//     by status, error type/code and message words (classify.h); transport
//     failures by where they happened (http_client.h); a stream that ends
//     without its end marker ([DONE], response.completed/incomplete,
//     message_stop) is incomplete_stream; a tool call whose arguments are not
//     JSON is bad_response.
//   - output_seen: a text or tool delta reached the sink before the failure
//     (reasoning alone does not count).
//   - message / provider_message never contain the API key (it is redacted
//     even when a server echoes it back).
//
// The wire formats and what each sends and reads are described at the top
// of openai_chat.cpp, openai_responses.cpp and anthropic.cpp and in wire.h;
// HTTP, TLS, deadlines and proxies in http/client.h and http/proxy.h; prices in
// pricing.h.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>

#include <boost/asio/awaitable.hpp>

#include "http/client.h"
#include "runtime/native/providers/errors.h"
#include "runtime/native/providers/types.h"
#include "runtime/native/providers/wire_api.h"
#include "util/result.h"

namespace tether::runtime::native {

template <class T>
using task = boost::asio::awaitable<T>;

struct provider_options {
  wire_api api = wire_api::openai_chat;
  std::string base_url;  // e.g. "https://api.openai.com/v1", "http://127.0.0.1:9000/v1"; empty: the vendor's
  std::string api_key;   // sent as Bearer (OpenAI) or x-api-key (Anthropic); never logged
  std::string model;     // used when a model_request names no model
  http::http_deadlines deadlines;
  // Proxies: empty means "read HTTP_PROXY / HTTPS_PROXY / NO_PROXY (and the
  // lower-case forms) from the environment"; a value (even "") replaces the
  // environment's. Rules in proxy.h (curl's; loopback is not exempt).
  std::optional<std::string> http_proxy;
  std::optional<std::string> https_proxy;
  std::optional<std::string> no_proxy;
  // A PEM file of certificates to trust for https, besides the system's CA
  // store (a local model with a self-signed certificate); empty: the system's
  // only (which also honours SSL_CERT_FILE / SSL_CERT_DIR).
  std::string ca_file;
  http::connection_pool_options pool;
  std::string anthropic_version = "2023-06-01";
  std::size_t max_response_bytes = 64U << 20U;  // a response larger than this is an error
  // Sees every HTTP exchange (recording cassettes); null in production.
  std::shared_ptr<http::http_tap> tap;
};

// Details of a failed request: everything the retry policy and the
// step.failed message need.
struct failure_info {
  provider_errc kind = provider_errc::transport;
  int http_status = 0;  // 0 when no response head arrived
  std::optional<std::chrono::milliseconds> retry_after;
  bool request_sent = false;     // false: failed before the request left
  bool output_seen = false;      // some text/tool output was streamed
  std::string provider_message;  // the provider's own error text, if any
  std::string message;           // one line for logs and step.failed (no secrets)
};

struct stream_outcome {
  std::optional<completion> done;  // set when the response ended well
  failure_info failure;            // meaningful when !done
  explicit operator bool() const { return done.has_value(); }
};

using stream_sink = std::function<void(const stream_event&)>;

class provider {
 public:
  virtual ~provider() = default;
  [[nodiscard]] virtual wire_api api() const = 0;
  virtual task<stream_outcome> stream(model_request request, stream_sink sink, std::stop_token stop) = 0;
};

// The executor the provider runs its I/O on is the awaiting coroutine's.
std::unique_ptr<provider> make_provider(provider_options options);

}  // namespace tether::runtime::native
