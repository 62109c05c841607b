// make_provider: one HTTP exchange (http/client.h) read as an event stream
// (sse_parser) and mapped by the wire format (wire.h).
#include "runtime/native/providers/provider.h"

#include <algorithm>

#include <boost/asio/awaitable.hpp>

#include "http/client.h"
#include "http/sse_parser.h"
#include "runtime/native/providers/classify.h"
#include "runtime/native/providers/wire.h"

namespace tether::runtime::native {

namespace {

// Error bodies are read up to this much: enough for any provider's JSON error
// and the useful head of an HTML page.
constexpr std::size_t error_body_cap = 256 * 1024;

bool is_success(int status) { return status >= 200 && status <= 299; }

class http_provider final : public provider {
 public:
  explicit http_provider(provider_options options) : options_(std::move(options)), client_(http_options_of(options_)) {}

  [[nodiscard]] wire_api api() const override { return options_.api; }

  task<stream_outcome> stream(model_request request, stream_sink sink, std::stop_token stop) override {
    auto mapper = make_wire_mapper(options_, std::move(sink));
    http::http_request req = mapper->build(request);

    sse_parser sse;
    http::http_response_head head;
    std::string error_body;
    bool json_body = false;  // a 2xx that is not an event stream
    std::optional<failure_info> stream_failure;
    http::http_handler handler;
    handler.on_head = [&](const http::http_response_head& h) {
      head = h;
      json_body = is_success(h.status) && h.header("content-type").starts_with("application/json");
    };
    handler.on_body = [&](std::string_view piece) {
      if (!is_success(head.status) || json_body) {
        error_body.append(piece.substr(0, std::min(piece.size(), error_body_cap - error_body.size())));
        return error_body.size() >= error_body_cap ? http::body_action::stop : http::body_action::more;
      }
      for (const auto& ev : sse.feed(piece)) {
        stream_failure = mapper->on_event(ev);
        if (stream_failure || mapper->ended()) return http::body_action::stop;
      }
      return http::body_action::more;
    };
    const http::http_result r = co_await client_.send(std::move(req), std::move(handler), stop);

    stream_outcome out;
    failure_info& f = out.failure;
    if (r.error == http::client_errc::cancelled || stop.stop_requested()) {
      f.kind = provider_errc::cancelled;
      f.message = "the request was cancelled";
    } else if (stream_failure) {
      f = std::move(*stream_failure);
    } else if (r.head_received && !is_success(head.status)) {
      f = classify_http_error(head, error_body);
    } else if (r.error) {
      f.kind = provider_errc_of(r.error);
      f.message = r.message;
    } else if (json_body) {
      f.kind = provider_errc::bad_response;
      f.message = "expected an event stream, got a JSON body";
      f.provider_message = error_body.substr(0, 500);
    } else if (!mapper->ended()) {
      sse.finish();
      f.kind = provider_errc::incomplete_stream;
      f.message = "the response stream ended before its end marker";
    } else {
      out.done = mapper->take();
      co_return out;
    }
    f.http_status = r.head_received ? head.status : 0;
    f.request_sent = r.request_sent;
    f.output_seen = mapper->output_seen();
    redact(f.message, options_.api_key);
    redact(f.provider_message, options_.api_key);
    co_return out;
  }

 private:
  static http::http_options http_options_of(const provider_options& o) {
    http::http_options h;
    h.deadlines = o.deadlines;
    h.proxies = http::proxy_config{o.http_proxy, o.https_proxy, o.no_proxy};
    h.max_response_bytes = o.max_response_bytes;
    h.tap = o.tap;
    h.ca_file = o.ca_file;
    h.pool = o.pool;
    return h;
  }

  provider_options options_;
  http::http_client client_;
};

}  // namespace

std::unique_ptr<provider> make_provider(provider_options options) {
  return std::make_unique<http_provider>(std::move(options));
}

}  // namespace tether::runtime::native
