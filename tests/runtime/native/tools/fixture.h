// A temporary workspace per test and a way to call the local tools.
//
//   tools_test: root_/ws (the canonical workspace), root_/outside (a sibling
//   the tools must never reach), root_/spill and root_/blobs. The caller's
//   executor is an io_context run by two threads (like the network pool);
//   ctx.blocking is a separate two-thread pool.
//
//   tool_outcome out = call("read", args({{"path", "a.txt"}}));
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <future>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <gtest/gtest.h>

#include "runtime/native/tools/tool.h"

namespace tether::runtime::native::test {

// Runs one coroutine on `ex` and waits for its value from the test thread.
template <class T>
T run_sync(const boost::asio::any_io_executor& ex, boost::asio::awaitable<T> aw) {
  auto fut = boost::asio::co_spawn(ex, std::move(aw), boost::asio::use_future);
  return fut.get();
}

class tools_test : public ::testing::Test {
 protected:
  tools_test();
  ~tools_test() override;

  [[nodiscard]] tool_context context();
  tool_outcome call(std::string_view name, const boost::json::value& input);
  tool_outcome call_json(std::string_view name, std::string_view json_text);
  tool_outcome call(std::string_view name, const boost::json::value& input, const tool_context& ctx);
  // Starts a call and returns its future (for tests that act while it runs).
  std::future<tool_outcome> start(std::string_view name, const boost::json::value& input, const tool_context& ctx);

  void put(const std::filesystem::path& rel, std::string_view content) const;  // under the workspace
  static void put_at(const std::filesystem::path& abs, std::string_view content);
  static std::string slurp(const std::filesystem::path& abs);

  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::vector<std::thread> io_threads_;
  boost::asio::thread_pool blocking_{2};
  tool_set tools_;
  std::filesystem::path root_, ws_, outside_;
  tool_limits limits_;
  // The default sandbox, with root_ standing for the data directory (hidden).
  sandbox_policy sandbox_;
};

// Polls `pred` every 20 ms for up to `limit`; true as soon as it holds. Not a
// timing assertion: the limit only bounds a wait for something that happens.
bool eventually(const std::function<bool()>& pred, std::chrono::seconds limit = std::chrono::seconds(10));

// A process counts as alive while it exists and is not a zombie.
bool process_alive(pid_t pid);
// Whether any live (non-zombie) process is in process group `pgid`.
bool group_alive(pid_t pgid);

bool contains(std::string_view haystack, std::string_view needle);

// A JSON object of tool arguments: args({{"path", "a.txt"}, {"limit", 3}}).
boost::json::object args(std::initializer_list<std::pair<std::string_view, boost::json::value>> kv);

}  // namespace tether::runtime::native::test
