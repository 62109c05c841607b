// connect_loopback: a blocking TCP connection to 127.0.0.1:port for tests
// and benchmarks that drive a real server (the end-to-end harness, the
// connection-flood tests, the stalled-reader benchmark).
//
//   const int fd = test::connect_loopback(port);            // -1 when refused
//   const int slow = test::connect_loopback(port, 4096);     // SO_RCVBUF set before connecting
//
// The descriptor is close-on-exec; the caller closes it.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace tether::test {

// receive_buffer > 0: the socket's SO_RCVBUF, set before connecting (a small
// one makes a reader that does not read fall behind quickly).
inline int connect_loopback(unsigned short port, int receive_buffer = 0) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (receive_buffer > 0) ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace tether::test
