// What the agent tests share: a temporary directory short enough for a Unix
// socket path, an io_context running on its own thread, and a line client of
// the bridge with per-operation deadlines (a bug fails a test, not hangs it).
#pragma once

#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>
#include <boost/json.hpp>

namespace tether::runtime::agent::test {

namespace asio = boost::asio;
namespace json = boost::json;
namespace fs = std::filesystem;
using local = asio::local::stream_protocol;
using namespace std::chrono_literals;

// /tmp/tether-agent-XXXXXX, removed with everything in it.
class temp_dir {
 public:
  temp_dir() {
    std::string pattern = "/tmp/tether-agent-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~temp_dir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  [[nodiscard]] const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// An io_context run by one thread until the object is destroyed.
class running_context {
 public:
  running_context() : guard_(io_.get_executor()), thread_([this] { io_.run(); }) {}
  ~running_context() { join(); }
  running_context(const running_context&) = delete;
  running_context& operator=(const running_context&) = delete;
  asio::io_context& io() { return io_; }
  asio::any_io_executor executor() { return io_.get_executor(); }
  // Lets the thread end once the work already queued is done.
  void join() {
    guard_.reset();
    if (thread_.joinable()) thread_.join();
  }

 private:
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> guard_;
  std::thread thread_;
};

// One connection to the bridge. Each operation runs on the client's own
// io_context for at most `deadline`.
class line_client {
 public:
  explicit line_client(const fs::path& socket) : socket_(io_) { socket_.connect(local::endpoint(socket.string())); }

  // Writes all of `bytes`; false when the bridge closed (or the deadline passed).
  bool send(const std::string& bytes, std::chrono::milliseconds deadline = 5s) {
    std::optional<boost::system::error_code> done;
    asio::async_write(socket_, asio::buffer(bytes), [&](boost::system::error_code ec, std::size_t) { done = ec; });
    drive(done, deadline);
    return done && !*done;
  }
  // The next line without '\n'; nullopt at EOF, an error or the deadline.
  std::optional<std::string> read_line(std::chrono::milliseconds deadline = 5s) {
    std::optional<boost::system::error_code> done;
    std::size_t n = 0;
    asio::async_read_until(socket_, asio::dynamic_buffer(buffer_), '\n',
                           [&](boost::system::error_code ec, std::size_t got) {
                             done = ec;
                             n = got;
                           });
    drive(done, deadline);
    if (!done || *done) return std::nullopt;
    std::string line = buffer_.substr(0, n - 1);
    buffer_.erase(0, n);
    return line;
  }
  // Whether the bridge closed the connection (EOF or reset) within `deadline`.
  bool closed_by_peer(std::chrono::milliseconds deadline = 5s) {
    std::optional<boost::system::error_code> done;
    buffer_.clear();
    asio::async_read_until(socket_, asio::dynamic_buffer(buffer_), '\n',
                           [&](boost::system::error_code ec, std::size_t) { done = ec; });
    drive(done, deadline);
    return done && (*done == asio::error::eof || *done == asio::error::connection_reset);
  }
  // One request, its reply as JSON (null when none came).
  json::value ask(const json::value& request) {
    if (!send(json::serialize(request) + "\n")) return nullptr;
    auto line = read_line();
    return line ? json::parse(*line) : json::value(nullptr);
  }
  void close() {
    boost::system::error_code ignored;
    socket_.close(ignored);
  }
  local::socket& socket() { return socket_; }

 private:
  template <class T>
  void drive(std::optional<T>& done, std::chrono::milliseconds deadline) {
    io_.restart();
    const auto until = std::chrono::steady_clock::now() + deadline;
    while (!done && io_.run_one_until(until) > 0) {
    }
    if (!done) {  // the deadline: abort the operation and let it complete
      boost::system::error_code ignored;
      socket_.cancel(ignored);
      io_.restart();
      while (io_.run_one() > 0 && !done) {
      }
      done.reset();
    }
  }

  asio::io_context io_;
  local::socket socket_;
  std::string buffer_;
};

inline json::object list_request(const std::string& token) { return {{"token", token}, {"op", "list"}}; }
inline json::object call_request(const std::string& token, const std::string& tool, json::object arguments) {
  return {{"token", token}, {"op", "call"}, {"tool", tool}, {"arguments", std::move(arguments)}};
}

}  // namespace tether::runtime::agent::test
