// tcp_door — a TCP port on 127.0.0.1 that leads to a Unix socket here: how
// an environment that reaches this machine over TCP only (a Daytona
// sandbox, at its reach_host) reaches the tool bridge. Each connection it
// accepts is spliced (relay/splice.h) to a new connection to the socket, so
// the bridge authenticates what comes through as it does any connection (a
// run's token): the door adds no way in that the token does not guard.
//
//   tcp_door door(io.get_executor(), bridge.socket_path());
//   auto port = door.open();   // binds 127.0.0.1:0 on the first call; the same port after
//   door.close();              // no new connection; the spliced ones end with the socket's
//
// A connection whose socket cannot be reached is closed at once (the client
// sees the end). An accept that fails for want of descriptors is retried
// after 50 ms, never in a busy loop.
//
// Threads: open() and close() from any thread; connections run on strands of
// the executor. Destruction closes it; what runs holds the door's state.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>

#include <boost/asio/any_io_executor.hpp>

#include "util/result.h"

namespace tether::runtime::agent {

class tcp_door {
 public:
  tcp_door(boost::asio::any_io_executor executor, std::filesystem::path socket);
  ~tcp_door();
  tcp_door(const tcp_door&) = delete;
  tcp_door& operator=(const tcp_door&) = delete;

  // The port, bound on the first call. Errors: agent_errc::listen_failed.
  result<std::uint16_t> open();
  void close();

  struct state;

 private:
  std::shared_ptr<state> s_;
};

}  // namespace tether::runtime::agent
