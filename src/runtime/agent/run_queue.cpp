#include "runtime/agent/run_queue.h"

#include <utility>

#include <spdlog/spdlog.h>
#include <boost/asio/co_spawn.hpp>

#include "runtime/agent/bridge/protocol.h"

namespace tether::runtime::agent {

namespace net = boost::asio;

namespace {

// What the handler made of one call, as its reply line.
net::awaitable<std::string> run_call(std::shared_ptr<bridge_run> run, std::shared_ptr<pending_call> call) {
  // Queued behind a call that outlived its run: the run is gone now.
  if (run->closed) co_return protocol::refusal("the run is closed");
  try {
    auto reply = co_await run->handler(call->tool, std::move(call->arguments));
    co_return protocol::call_reply(reply);
  } catch (const std::exception& e) {  // a bug in the handler: this call fails, the bridge goes on
    spdlog::error("tool bridge: the handler of {} threw: {}", call->tool, e.what());
    co_return protocol::call_reply({"the tool " + call->tool + " failed inside Tether: " + e.what(), true});
  }
}

// The run's worker, on the run's executor: runs the queued calls one after
// the other and ends when the queue is empty.
net::awaitable<void> drain(std::shared_ptr<bridge_run> run) {
  for (;;) {
    std::shared_ptr<pending_call> call;
    {
      std::lock_guard lock(run->mu);
      if (run->queue.empty()) {
        run->draining = false;
        co_return;
      }
      call = std::move(run->queue.front());
      run->queue.pop_front();
    }
    if (call->abandoned) continue;
    auto line = co_await run_call(run, call);
    call->done.try_send(boost::system::error_code{}, std::move(line));  // refused when abandoned meanwhile
  }
}

}  // namespace

void submit(const std::shared_ptr<bridge_run>& run, std::shared_ptr<pending_call> call) {
  bool start = false;
  {
    std::lock_guard lock(run->mu);
    run->queue.push_back(std::move(call));
    start = !std::exchange(run->draining, true);
  }
  if (start) net::co_spawn(run->executor, drain(run), [](const std::exception_ptr& e) { log_failure("a run", e); });
}

void log_failure(const char* what, const std::exception_ptr& e) {
  if (!e) return;
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    spdlog::error("tool bridge: {} failed: {}", what, x.what());
  }
}

}  // namespace tether::runtime::agent
