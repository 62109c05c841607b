// A counting TCP relay on 127.0.0.1 for the connection-pool tests: every
// connection it accepts is forwarded to an upstream port, byte for byte (so
// it carries TLS as well as plain HTTP), and counted.
//
//   relay r(upstream_port);
//   … point a provider at r.port() …
//   r.accepted();                  // connections accepted so far
//   r.close_idle();                // the "server" closes every connection now
//   r.close_on_next_request();     // … or when its next request starts
//
// Each connection is served by a thread of its own; destruction closes all
// of them and joins the threads.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace tether::runtime::native::testing {

class relay {
 public:
  explicit relay(std::uint16_t upstream_port);
  ~relay();
  relay(const relay&) = delete;
  relay& operator=(const relay&) = delete;

  [[nodiscard]] std::uint16_t port() const { return port_; }
  [[nodiscard]] int accepted() const { return accepted_.load(); }
  // Connections open right now (accepted and not yet closed by either side).
  [[nodiscard]] int open() const { return open_.load(); }
  // Closes both sides of every connection open now.
  void close_idle();
  // Connections open now are closed, without forwarding, as soon as the
  // client sends its next byte (a server that timed them out just then).
  void close_on_next_request();

 private:
  struct link;
  void accept_loop();
  void pump(const std::shared_ptr<link>& l);

  std::uint16_t upstream_;
  std::uint16_t port_ = 0;
  int listen_fd_ = -1;
  std::atomic<bool> stopping_{false};
  std::atomic<int> accepted_{0};
  std::atomic<int> open_{0};
  std::mutex mu_;
  std::vector<std::shared_ptr<link>> links_;
  std::vector<std::thread> threads_;
  std::thread acceptor_;
};

}  // namespace tether::runtime::native::testing
