// json_rpc — JSON-RPC over a child's stdin and stdout, one JSON object per
// line: what codex app-server (without the "jsonrpc" member) and ACP agents
// (JSON-RPC 2.0) speak.
//
//   auto rpc = json_rpc::make(strand, proc, {.jsonrpc_member = true}, handlers);
//   rpc->start();                                      // the reader runs on `strand`
//   auto r = co_await rpc->call("initialize", params); // result<json::value>: the result, or the error
//   co_await rpc->notify("session/cancel", params);
//   co_await rpc->close();                             // EOF to the agent; waits for the reader
//
// Incoming:
//   a response      completes the call with its id: `result`, or
//                   agent_errc::rpc_failed with "CODE: MESSAGE" of `error`
//   a notification  handlers.notification(method, params), synchronously on
//                   the strand, in the order the agent sent them
//   a request       handlers.request(method, params) runs as its own
//                   coroutine on the strand (several may run at once: an agent
//                   may ask for a permission while a file read is answered);
//                   its result, or error (code -32603 with the message), is
//                   sent back with the request's id. Without a request
//                   handler, -32601 "method not found".
//
// End: when the agent closes its stdout (it died), prints a line that is not
// a JSON object (garbage), or a line over max_line_bytes, the reader ends:
// pending and later calls fail with agent_errc::rpc_closed or
// agent_errc::protocol (the message quotes the line's start), and
// handlers.closed(error) runs once. close() closes the agent's stdin, waits
// up to `drain` for the agent to close its stdout, then stops reading;
// it returns once the reader and every request handler ended.
//
// Threads: everything on the strand given to make(), which the caller's
// coroutines also run on. The child must outlive close()'s completion.
// Writes are queued and written in order, one at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json/value.hpp>

#include "util/result.h"

namespace tether::process {
class child;
}

namespace tether::runtime::agent {

struct rpc_handlers {
  std::function<void(std::string method, boost::json::value params)> notification;
  std::function<boost::asio::awaitable<result<boost::json::value>>(std::string method, boost::json::value params)>
      request;
  std::function<void(const tether::error& why)> closed;
};

struct rpc_options {
  bool jsonrpc_member = true;  // send "jsonrpc":"2.0" (codex app-server omits it)
  std::size_t max_line_bytes = 8U << 20U;
  std::chrono::milliseconds drain{2000};  // close(): how long the agent gets to end its output
};

class json_rpc : public std::enable_shared_from_this<json_rpc> {
 public:
  static std::shared_ptr<json_rpc> make(boost::asio::any_io_executor strand, process::child& proc, rpc_options o,
                                        rpc_handlers h);
  json_rpc(boost::asio::any_io_executor strand, process::child& proc, rpc_options o, rpc_handlers h);
  json_rpc(const json_rpc&) = delete;
  json_rpc& operator=(const json_rpc&) = delete;
  ~json_rpc();

  void start();
  boost::asio::awaitable<result<boost::json::value>> call(std::string method, boost::json::value params);
  boost::asio::awaitable<result<void>> notify(std::string method, boost::json::value params);
  boost::asio::awaitable<void> close();
  // Set once the reader ended: why.
  [[nodiscard]] const std::optional<tether::error>& ended() const { return ended_; }

 private:
  struct pending {
    explicit pending(const boost::asio::any_io_executor& ex) : wake(ex) {}
    std::optional<result<boost::json::value>> reply;
    boost::asio::steady_timer wake;
  };

  boost::asio::awaitable<void> read_loop();
  boost::asio::awaitable<void> write_loop();
  // `id` is the request id as its JSON text.
  static boost::asio::awaitable<void> serve(std::shared_ptr<json_rpc> self, std::string id, std::string method,
                                            boost::json::value params);
  boost::asio::awaitable<result<void>> send(std::string line);
  void dispatch(boost::json::object msg);
  void end(tether::error why);

  boost::asio::any_io_executor strand_;
  process::child& proc_;
  rpc_options o_;
  rpc_handlers h_;
  std::int64_t next_id_ = 1;
  std::map<std::int64_t, std::shared_ptr<pending>> calls_;
  std::deque<std::pair<std::string, std::shared_ptr<pending>>> out_;  // line, who waits for it written
  bool writing_ = false;
  bool started_ = false;
  bool stdin_closed_ = false;
  std::optional<tether::error> ended_;
  int running_ = 0;  // the reader, the writer and request handlers still running
  boost::asio::steady_timer idle_;  // cancelled when running_ drops
};

}  // namespace tether::runtime::agent
