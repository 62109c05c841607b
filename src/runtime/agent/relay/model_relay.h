// model_relay — agents never hold a provider key: an agent program's model
// endpoint is Tether, which forwards each request to the real provider with
// the real key.
//
//   model_relay relay(io.get_executor(), {.socket = data / "run" / "relay.sock"});
//   TETHER_TRY(relay.start());                      // 127.0.0.1:PORT and the Unix socket
//   auto t = relay.open({upstream_base_url, real_key, client});   // relay_ticket, per run
//   agent env: KEY_VARIABLE=t.token(), base URL relay.local_url(upstream_base_url)
//   ... the agent's requests stream through ...
//   t.take_usage();                                 // what the responses reported
//   // the ticket's destruction ends the run: its token is refused from then on
//   co_await relay.stop();
//
// Where it listens: an HTTP/1.1 server (http/server_shell.h) on
// 127.0.0.1 at a port of its own, and a Unix socket (mode 0600, 0700
// directory) whose connections are spliced to that port. An agent in a
// sandbox without a network (`network = "relay-only"`) reaches the socket,
// bind-mounted into its sandbox, through `tether relay-forward`, which
// listens on 127.0.0.1 at the same port inside the sandbox's own network
// namespace: the agent's base URL is the same either way.
//
// A request: the per-run token is its credential, as the agent's SDK sends
// a key (`Authorization: Bearer T`, `x-api-key: T` or `api-key: T`). An
// unknown or closed run's token is 401, and nothing is forwarded. The
// target must be a model endpoint under the upstream's base path (BASE/
// [v1/] responses…, chat/completions…, completions, messages…, models…;
// no "..", "%" or "//"): anything else is 403, so a run's token
// cannot use the provider key for anything but models. The request goes to
// the upstream's origin with the same method, target and body and the same
// headers but these: Host, Content-Length, Connection and the other
// hop-by-hop headers are the relay's own; the credential header the agent
// used carries the real key instead (the scripted model's placeholder when
// there is none); Accept-Encoding is dropped (identity), so that usage can
// be read from the response.
//
// The response streams back as it arrives (nothing is buffered: each piece
// the upstream sends is written at once, chunked) with the upstream's
// status and headers but the hop-by-hop ones. Its usage (relay_meter.h) is
// added to the run's. An upstream that cannot be reached is a 502 whose
// JSON names the reason without secrets; one that breaks mid-body ends the
// agent's connection mid-body too (the agent sees the break, not a
// truncated success).
//
// Limits: a request body of max_request_bytes (413), the shell's
// connection limits; a run's token is trusted in the shell's eviction order.
//
// Threads: start()/stop() on the owner's side; open(), a ticket's members
// and local_url() from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "model/events.h"
#include "util/result.h"

namespace tether::http {
class http_client;
}

namespace tether::runtime::agent {

// Where a run's requests go.
struct relay_upstream {
  std::string base_url;  // the provider's, e.g. https://api.openai.com/v1 or the scripted model's
  std::string key;       // the real key ("" for the scripted model)
  std::shared_ptr<http::http_client> client;
};

// One run's grant: its token, and the usage its responses reported.
class relay_ticket {
 public:
  relay_ticket() = default;
  relay_ticket(relay_ticket&&) noexcept = default;
  relay_ticket& operator=(relay_ticket&& o) noexcept;  // closes the run this ticket held
  ~relay_ticket();
  [[nodiscard]] const std::string& token() const { return token_; }
  [[nodiscard]] bool open() const { return shared_ != nullptr; }
  // What the responses reported since the last take_usage(), and how many
  // of them reported it; resets both.
  struct metered {
    model::usage usage;
    std::size_t responses = 0;
  };
  metered take_usage();
  // Requests forwarded so far (all, whether they reported usage).
  [[nodiscard]] std::size_t requests() const;
  void close();

  struct shared;  // the relay's

 private:
  friend class model_relay;
  std::shared_ptr<shared> shared_;
  std::string token_;
};

struct relay_options {
  std::filesystem::path socket;  // the Unix socket (bind-mounted into relay-only sandboxes)
  std::size_t max_request_bytes = 32U << 20U;
  std::size_t max_socket_connections = 1024;
};

class model_relay {
 public:
  model_relay(boost::asio::any_io_executor executor, relay_options options);
  ~model_relay();
  model_relay(const model_relay&) = delete;
  model_relay& operator=(const model_relay&) = delete;

  // Listens on 127.0.0.1 (a free port) and binds the socket. On the calling thread.
  result<void> start();
  boost::asio::awaitable<void> stop();

  [[nodiscard]] std::uint16_t port() const;
  [[nodiscard]] const std::filesystem::path& socket_path() const;
  // The base URL an agent uses for `upstream_base_url`: http://127.0.0.1:PORT
  // and the upstream's path ("https://api.anthropic.com" → ".../", "…/v1" → ".../v1").
  [[nodiscard]] std::string local_url(const std::string& upstream_base_url) const;

  // A new run with a fresh token (32 random bytes, hex).
  relay_ticket open(relay_upstream upstream);

  struct impl;

 private:
  std::shared_ptr<impl> impl_;
};

}  // namespace tether::runtime::agent
