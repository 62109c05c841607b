// A session-layer test bed: a SQLite store in a fresh temp dir, an
// io_context on two threads, a scripted runtime and a manual clock.
#pragma once

#include <chrono>
#include <filesystem>
#include <future>
#include <memory>
#include <thread>

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include "session/scripted_runtime.h"
#include "session/service.h"
#include "store/sqlite/sqlite_store.h"

namespace tether::testing {

namespace asio = boost::asio;

class session_fixture : public ::testing::Test {
 protected:
  session_fixture();
  ~session_fixture() override;

  // Runs an awaitable on the io_context and waits for its value.
  template <class T>
  T run(asio::awaitable<T> a) {
    auto f = asio::co_spawn(io_, std::move(a), asio::use_future);
    return f.get();
  }
  void run(asio::awaitable<void> a) { asio::co_spawn(io_, std::move(a), asio::use_future).get(); }

  // Waits (polling, at most 20 s of wall time) until pred() holds; fails the test otherwise.
  template <class F>
  bool eventually(F pred) {
    for (int i = 0; i < 20'000; ++i) {
      if (pred()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ADD_FAILURE() << "condition not reached";
    return false;
  }

  void open_store();
  void close_store();
  void make_service(session::session_options opts = test_options(), std::string node = "n1");
  void stop_service();
  static session::session_options test_options();

  session_id new_session();
  session::admission admit(const session_id& s, std::string prompt, model::delivery d = model::delivery::steer,
                           session::start_mode m = session::start_mode::resume,
                           std::optional<std::string> id = std::nullopt);
  // All durable events of a session, in order.
  std::vector<model::event> events(const session_id& s);
  std::vector<std::string> types(const session_id& s);
  std::size_t count(const session_id& s, std::string_view type);
  void idle(const session_id& s) { run(service_->idle(s)); }

  std::filesystem::path dir_;
  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  std::vector<std::thread> threads_;
  manual_clock clock_;
  scripted_runtime runtime_;
  std::unique_ptr<store::event_store> store_;
  std::unique_ptr<session::session_service> service_;
};

}  // namespace tether::testing
