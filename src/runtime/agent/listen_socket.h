// listen_socket — binds a Unix stream socket for the tool bridge: the
// parent directory is created 0700, the socket file is 0600 from the moment
// it exists (the socket is fchmod'ed before bind, which Linux applies to the
// file), a stale socket file (nobody accepts on it) is replaced, and a live
// one is left alone.
//
// Errors: agent_errc::socket_path_too_long (the path does not fit sun_path),
// not_a_socket (a file or directory sits there), address_in_use (another
// process accepts on it), listen_failed.
#pragma once

#include <sys/types.h>

#include <filesystem>

#include <boost/asio/local/stream_protocol.hpp>

#include "util/result.h"

namespace tether::runtime::agent {

// The socket file as bound, so only that file is removed later (not a newer
// one another process bound at the same path).
struct bound_file {
  std::filesystem::path path;
  dev_t device = 0;
  ino_t inode = 0;
};

// Opens, binds and listens `acceptor` (closed on failure); its descriptor is close-on-exec.
result<bound_file> listen_at(boost::asio::local::stream_protocol::acceptor& acceptor,
                             const std::filesystem::path& path);

// Removes the socket file if it is still the one listen_at() bound.
void remove_bound_file(const bound_file& f);

}  // namespace tether::runtime::agent
