// The fixture of the store conformance suite: a fresh store of one backend
// (made by a backend factory, see backends.h) in its own temp directory, a
// manual clock the store reads for every time, and helpers that drive
// awaitables synchronously. The suite's tests are typed tests over
// `backends`, so each runs against every backend.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>
#include <boost/asio/io_context.hpp>

#include "store/event_store.h"
#include "support/run.h"
#include "util/clock.h"

namespace tether::store::test {

// "store: message" of a failed result, for assertion messages.
template <class R>
std::string why(const R& r) {
  return r ? std::string("ok") : r.error().describe();
}

// What a test may ask of any backend (a factory maps it onto the backend's
// own options).
struct backend_options {
  const tether::clock* clock = nullptr;  // the store's one clock
  std::size_t max_batch = 1024;          // write requests per group commit
  std::size_t tail_buffer = 4096;
  std::size_t tail_buffer_bytes = 1U << 20U;
  int retry_initial_ms = 100;  // degraded: first probe, then doubling up to retry_max_ms
  int retry_max_ms = 5'000;
  // Called before each commit (the probes' too): true makes that commit
  // fail as if the storage had failed.
  std::function<bool()> fail_commit;
};

// A door the fail_commit hook can be held at, so tests can queue
// several requests behind one commit and have them grouped into the next.
class commit_gate {
 public:
  // Holds the next commits; arrivals count from here.
  void close() {
    std::lock_guard lock(mu_);
    open_ = false;
    arrived_ = 0;
  }
  void open() {
    {
      std::lock_guard lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  // Called by the writer; blocks while the gate is closed.
  void pass() {
    std::unique_lock lock(mu_);
    ++arrived_;
    cv_.notify_all();
    cv_.wait(lock, [this] { return open_; });
  }
  // Waits until the writer is held at the gate.
  void wait_arrivals(int n) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return arrived_ >= n; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = true;
  int arrived_ = 0;
};

// `Factory` (backends.h): Factory(dir) prepares a backend whose data lives
// in `dir`; open(backend_options) opens a store on it (again after a stop:
// what was committed is still there); Factory::stats(store) are its
// group-commit counters.
template <class Factory>
class store_test : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() / ("tether-store-" + std::string(info->name()) + "-" +
                                                     std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    factory_ = std::make_unique<Factory>(dir_);
  }

  void TearDown() override {
    if (store_) store_->stop();
    store_.reset();
    factory_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  backend_options options() {
    backend_options o;
    o.clock = &clock_;
    return o;
  }

  event_store& open(std::optional<backend_options> o = std::nullopt) {
    auto r = factory_->open(o ? std::move(*o) : options());
    return adopt(std::move(r));
  }

  // Takes an opened store as the one under test.
  event_store& adopt(result<std::unique_ptr<event_store>> r) {
    EXPECT_TRUE(r) << why(r);
    if (!r) throw std::runtime_error("cannot open the store");
    store_ = std::move(*r);
    return *store_;
  }

  void close_store() {
    if (store_) store_->stop();
    store_.reset();
  }

  event_store& reopen(std::optional<backend_options> o = std::nullopt) {
    close_store();
    return open(std::move(o));
  }

  event_store& store() { return *store_; }

  // An io_context for a helper thread. The fixture keeps it until the store
  // has stopped: a completion posted by the store's threads must not race
  // the destruction of the io_context it is posted to.
  boost::asio::io_context& new_io() {
    std::lock_guard lock(ios_mu_);
    return *ios_.emplace_back(std::make_unique<boost::asio::io_context>());
  }

  template <class T>
  T run(boost::asio::awaitable<T> aw) {
    return tether::test::run_sync(io_, std::move(aw));
  }

  result<append_result> append(const session_id& s, std::vector<model::payload> events,
                               std::optional<fence> f = std::nullopt, time_ms time = 0) {
    return run(store().append(append_request{s, std::move(events), std::move(f), time}));
  }

  // A new session with one session.created event (seq 1).
  session_id new_session(std::string title = "a session") {
    auto s = session_id::generate();
    auto r = append(s, {model::session_created{std::move(title), "/srv/project", "default"}});
    EXPECT_TRUE(r) << why(r);
    return s;
  }

  std::vector<model::event> all_events(const session_id& s) {
    auto page = run(store().read(s, event_seq{0}, 100'000));
    EXPECT_TRUE(page) << why(page);
    return page ? page->events : std::vector<model::event>{};
  }

  std::int64_t last_seq(const session_id& s) {
    auto row = run(store().get_session(s));
    EXPECT_TRUE(row) << why(row);
    return row ? row->last_seq.value : -1;
  }

  manual_clock clock_;
  std::mutex ios_mu_;
  std::vector<std::unique_ptr<boost::asio::io_context>> ios_;
  boost::asio::io_context io_;
  std::filesystem::path dir_;
  std::unique_ptr<Factory> factory_;
  std::unique_ptr<event_store> store_;
};

// Polls (wall time, at most 30 s) until pred() holds.
template <class F>
bool eventually(F pred) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return pred();
}

// Payload shorthands.
inline model::payload admitted(const input_id& id, std::string prompt, model::delivery d = model::delivery::steer) {
  return model::input_admitted{id, std::move(prompt), d};
}
inline model::payload started(const execution_id& e, std::string node = "node-a") {
  return model::execution_started{e, std::move(node)};
}
inline model::payload finished(const execution_id& e, model::outcome o = model::outcome::succeeded) {
  return model::execution_finished{e, o, "", "", {}};
}
inline model::payload notice(std::string text) { return model::synthetic{std::move(text), "test"}; }

}  // namespace tether::store::test
