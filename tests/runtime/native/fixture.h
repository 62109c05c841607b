// A test bed for the native runtime: the scripted model server on loopback,
// a SQLite store in a temp dir, the session service driving a native runtime
// whose provider speaks the wire format under test.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <gtest/gtest.h>

#include "mock/server.h"
#include "runtime/native/native_runtime.h"
#include "session/service.h"
#include "store/event_store.h"
#include "util/clock.h"

namespace tether::testing {

namespace asio = boost::asio;
using runtime::native::wire_api;

class native_fixture : public ::testing::TestWithParam<wire_api> {
 protected:
  native_fixture();
  ~native_fixture() override;

  template <class T>
  T run(asio::awaitable<T> a) {
    return asio::co_spawn(io_, std::move(a), asio::use_future).get();
  }
  void run(asio::awaitable<void> a) { asio::co_spawn(io_, std::move(a), asio::use_future).get(); }

  // Polls (at most 30 s) until pred() holds.
  template <class F>
  bool eventually(F pred) {
    for (int i = 0; i < 30'000; ++i) {
      if (pred()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ADD_FAILURE() << "condition not reached";
    return false;
  }

  // Options of the runtime under test (change before start()).
  runtime::native::native_options& options() { return options_; }
  void start();

  session_id new_session();
  void admit(const session_id& s, std::string prompt, model::delivery d = model::delivery::steer);
  void idle(const session_id& s) { run(service_->idle(s)); }
  // Admits, then waits until the session is idle again.
  void turn(const session_id& s, std::string prompt) {
    admit(s, std::move(prompt));
    idle(s);
  }

  std::vector<model::event> events(const session_id& s);
  std::size_t count(const session_id& s, std::string_view type);
  std::vector<store::execution_row> executions(const session_id& s);
  // The text of the last assistant message of the session.
  std::string last_answer(const session_id& s);
  std::filesystem::path workspace(const session_id& s) const { return dir_ / "workspaces" / s.str(); }

  std::filesystem::path dir_;
  mock::server mock_{mock::server_options{}};
  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  std::vector<std::thread> threads_;
  system_clock clock_;
  runtime::native::native_options options_;
  std::unique_ptr<store::event_store> store_;
  std::unique_ptr<runtime::native::native_runtime> runtime_;
  std::unique_ptr<session::session_service> service_;
};

// "openai-chat", … as a test name suffix.
std::string wire_name(const ::testing::TestParamInfo<wire_api>& info);

}  // namespace tether::testing
