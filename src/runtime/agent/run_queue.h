// run_queue — the tool bridge's runs inside (not a public API): a run's
// state, shared by the registry, the ticket and the run's worker, and the
// queue that makes one run's calls sequential.
//
// A connection submit()s a pending_call and awaits its `done` channel. The
// run's worker (one at a time, spawned on the run's executor when a call
// arrives at an idle run, ending when the queue is empty) runs each call's
// handler and sends the reply line into `done`. A connection that goes away
// marks its call abandoned and closes `done`: a call not started yet is then
// skipped, a running one finishes and its reply is dropped.
#pragma once

#include <atomic>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/experimental/concurrent_channel.hpp>
#include <boost/json/value.hpp>

#include "runtime/agent/bridge/tool_bridge.h"

namespace tether::runtime::agent {

// One call on its way to its run's handler. The connection that asked
// awaits `done`; the run's worker sends the reply line into it.
struct pending_call {
  pending_call(const boost::asio::any_io_executor& ex, std::string t, boost::json::value a)
      : tool(std::move(t)), arguments(std::move(a)), done(ex, 1) {}
  std::string tool;
  boost::json::value arguments;
  std::atomic<bool> abandoned{false};  // the connection is gone: nobody wants the reply
  boost::asio::experimental::concurrent_channel<void(boost::system::error_code, std::string)> done;
};

// A run as the registry and its worker see it. Its handler's calls queue
// here and one worker at a time runs them on the run's executor, which is
// what makes calls of one run sequential.
struct bridge_run {
  std::string token;
  boost::asio::any_io_executor executor;
  std::vector<tool_spec> tools;
  tool_handler handler;
  std::weak_ptr<tool_bridge::impl> bridge;
  std::atomic<bool> closed{false};
  std::atomic<std::size_t> refused{0};  // connections of this run turned away (over max_connections_per_run)
  std::mutex mu;
  std::deque<std::shared_ptr<pending_call>> queue;  // under mu
  bool draining = false;                            // under mu: a worker is running the queue

  [[nodiscard]] bool offers(const std::string& name) const {
    for (const auto& t : tools) {
      if (t.name == name) return true;
    }
    return false;
  }
};

// Queues `call` on `run`, starting the run's worker if it is idle. Any thread.
void submit(const std::shared_ptr<bridge_run>& run, std::shared_ptr<pending_call> call);

// Logs the exception of a coroutine that ended with one (`what` names it).
void log_failure(const char* what, const std::exception_ptr& e);

}  // namespace tether::runtime::agent
