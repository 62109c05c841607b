#include "api/sse_stream.h"

#include <string>
#include <utility>

#include <spdlog/spdlog.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/error.hpp>

#include "api/server_metrics.h"
#include "api/sse.h"
#include "util/metrics.h"

namespace tether::api {

namespace net = boost::asio;

namespace {

constexpr auto use_tuple = net::as_tuple(net::use_awaitable);
// A fixed kernel send buffer (no autotuning into megabytes): what a
// subscriber has not read is bounded by it plus max_buffered.
constexpr int sse_socket_buffer = 256 * 1024;

// One client's state, on its connection's strand.
struct sse_client {
  sse_client(const net::any_io_executor& ex, std::shared_ptr<http::stream> s, std::unique_ptr<store::event_tail> t)
      : stream(std::move(s)), tail(std::move(t)), wake(ex), drained(ex), beat(ex) {}
  ~sse_client() { server_metrics().sse_queued.sub(static_cast<std::int64_t>(queued.size())); }
  sse_client(const sse_client&) = delete;
  sse_client& operator=(const sse_client&) = delete;

  std::shared_ptr<http::stream> stream;
  std::unique_ptr<store::event_tail> tail;
  net::steady_timer wake;     // the writer waits on it; cancel() means "look again"
  net::steady_timer drained;  // the pump waits on it while the queue is full
  net::steady_timer beat;
  std::string queued;
  std::size_t writing = 0;  // bytes handed to the socket and not yet written
  bool dead = false;
  std::chrono::steady_clock::time_point last_write = std::chrono::steady_clock::now();

  // What this client holds in the server.
  [[nodiscard]] std::size_t pending() const { return queued.size() + writing; }

  void end() {
    if (dead) return;
    dead = true;
    tail->close();
    wake.cancel();
    drained.cancel();
    beat.cancel();
    server_metrics().sse_queued.sub(static_cast<std::int64_t>(queued.size()));
    std::string().swap(queued);
    stream->cancel();
  }
  void enqueue(std::string_view text) {
    if (dead) return;
    queued += text;
    server_metrics().sse_queued.add(static_cast<std::int64_t>(text.size()));
    wake.cancel();
  }
};

net::awaitable<void> sse_writer(std::shared_ptr<sse_client> c, std::chrono::milliseconds stall) {
  while (!c->dead) {
    if (c->queued.empty()) {
      c->wake.expires_at(net::steady_timer::time_point::max());
      co_await c->wake.async_wait(use_tuple);
      continue;
    }
    std::string out;
    out.swap(c->queued);
    const std::size_t size = out.size();
    c->writing = size;
    const auto ec = co_await c->stream->write(std::move(out), stall);  // a client that stops reading is dropped
    server_metrics().sse_queued.sub(static_cast<std::int64_t>(size));
    c->writing = 0;
    c->last_write = std::chrono::steady_clock::now();
    c->drained.cancel();
    if (ec == boost::beast::error::timeout)
      spdlog::warn("api: an event stream client read nothing for {} ms; disconnecting it", stall.count());
    if (ec) c->end();
  }
}

net::awaitable<void> sse_beats(std::shared_ptr<sse_client> c, std::chrono::milliseconds every) {
  while (!c->dead) {
    c->beat.expires_after(every);
    co_await c->beat.async_wait(use_tuple);
    if (c->dead) break;
    if (std::chrono::steady_clock::now() - c->last_write >= every && c->queued.empty()) c->enqueue(sse_heartbeat);
  }
}

// Anything the client sends after its request is ignored; an end of stream
// or an error means it left.
net::awaitable<void> sse_reader(std::shared_ptr<sse_client> c) {
  co_await c->stream->discard_input();
  c->end();
}

// Waits until `bytes` more fit under `cap` (a frame larger than cap waits
// for an empty queue); false once the client is gone.
net::awaitable<bool> room_for(std::shared_ptr<sse_client> c, std::size_t bytes, std::size_t cap) {
  while (!c->dead && c->pending() > 0 && c->pending() + bytes > cap) {  // backpressure: wait for the socket
    c->drained.expires_at(net::steady_timer::time_point::max());
    co_await c->drained.async_wait(use_tuple);
  }
  co_return !c->dead;
}

// Frames go into the queue one at a time as room appears, so what waits for
// a slow socket stays under `cap`; the tail behind holds the rest within its
// own byte budget (it drops deltas, then re-reads durable events or lags).
net::awaitable<void> sse_pump(std::shared_ptr<sse_client> c, bool with_ids, std::size_t cap) {
  while (!c->dead) {
    if (!co_await room_for(c, 1, cap)) break;
    auto items = co_await c->tail->next();
    if (!items) {
      if (items.error() == store::store_errc::lagged)
        c->enqueue("event: error\ndata: {\"code\":\"lagged\",\"message\":\"the stream fell behind; reconnect\"}\n\n");
      break;
    }
    for (auto& item : *items) {
      std::string frame = sse_frame(item, with_ids);
      { [[maybe_unused]] const auto gone = std::move(item); }  // the event's memory goes as soon as its frame exists
      if (!co_await room_for(c, frame.size(), cap)) break;
      c->enqueue(frame);
    }
  }
  // Let the writer flush what is queued (it signals `drained` after each write), then stop everything.
  while (!c->dead && !c->queued.empty()) {
    c->drained.expires_at(net::steady_timer::time_point::max());
    co_await c->drained.async_wait(use_tuple);
  }
  c->end();
}

}  // namespace

net::awaitable<http::after_stream> stream_events(std::shared_ptr<http::stream> stream,
                                                 std::unique_ptr<store::event_tail> tail, sse_options o) {
  std::string head = o.http_version == 10 ? "HTTP/1.0 200 OK\r\n" : "HTTP/1.1 200 OK\r\n";
  head +=
      "Content-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n"
      "X-Accel-Buffering: no\r\nServer: tether\r\n\r\n";
  stream->set_send_buffer(sse_socket_buffer);
  const auto ex = co_await net::this_coro::executor;
  auto c = std::make_shared<sse_client>(ex, std::move(stream), std::move(tail));
  auto& subscribers = metrics::sse_subscribers();
  subscribers.add(1);
  c->enqueue(head);
  using namespace net::experimental::awaitable_operators;
  auto writer = sse_writer(c, o.stall_timeout);
  auto beat = sse_beats(c, o.heartbeat);
  auto reader = sse_reader(c);
  auto pump = sse_pump(c, o.with_ids, o.max_buffered);
  co_await (std::move(writer) && std::move(beat) && std::move(reader) && std::move(pump));
  subscribers.sub(1);
  co_return http::after_stream::close;
}

}  // namespace tether::api
