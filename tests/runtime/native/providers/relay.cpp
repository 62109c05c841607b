#include "runtime/native/providers/relay.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>

#include "runtime/native/providers/loopback.h"

namespace tether::runtime::native::testing {

struct relay::link {
  link() = default;
  link(const link&) = delete;
  link& operator=(const link&) = delete;
  ~link() {
    if (client >= 0) ::close(client);
    if (upstream >= 0) ::close(upstream);
  }
  int client = -1;
  int upstream = -1;
  std::atomic<bool> close_on_request{false};
};

namespace {

bool copy(int from, int to) {
  char buf[16384];
  const ssize_t n = ::recv(from, buf, sizeof buf, 0);
  if (n <= 0) return false;
  for (ssize_t sent = 0; sent < n;) {
    const ssize_t w = ::send(to, buf + sent, static_cast<std::size_t>(n - sent), MSG_NOSIGNAL);
    if (w <= 0) return false;
    sent += w;
  }
  return true;
}

}  // namespace

relay::relay(std::uint16_t upstream_port) : upstream_(upstream_port) {
  listen_fd_ = listen_loopback(port_);
  acceptor_ = std::thread([this] { accept_loop(); });
}

relay::~relay() {
  stopping_ = true;
  ::shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  ::close(listen_fd_);
  close_idle();
  for (auto& t : threads_) t.join();
}

void relay::accept_loop() {
  for (;;) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;  // shut down
    if (stopping_) {
      ::close(fd);
      return;
    }
    ++accepted_;
    auto l = std::make_shared<link>();
    l->client = fd;
    l->upstream = connect_loopback(upstream_);
    const std::lock_guard lock(mu_);
    links_.push_back(l);
    ++open_;
    threads_.emplace_back([this, l] { pump(l); });
  }
}

void relay::pump(const std::shared_ptr<link>& l) {
  while (l->upstream >= 0) {
    pollfd fds[2] = {{l->client, POLLIN, 0}, {l->upstream, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) break;
    if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      if (l->close_on_request.load() || !copy(l->client, l->upstream)) break;
    }
    if ((fds[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0 && !copy(l->upstream, l->client)) break;
  }
  // Both sides learn at once; the descriptors are closed by whoever holds the last reference.
  ::shutdown(l->client, SHUT_RDWR);
  if (l->upstream >= 0) ::shutdown(l->upstream, SHUT_RDWR);
  --open_;
}

void relay::close_idle() {
  const std::lock_guard lock(mu_);
  for (const auto& l : links_) {
    ::shutdown(l->client, SHUT_RDWR);
    if (l->upstream >= 0) ::shutdown(l->upstream, SHUT_RDWR);
  }
}

void relay::close_on_next_request() {
  const std::lock_guard lock(mu_);
  for (const auto& l : links_) l->close_on_request = true;
}

}  // namespace tether::runtime::native::testing
