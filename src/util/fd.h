// Descriptor flags. Every descriptor the server holds must be close-on-exec
// so a child (a tool's shell, an agent CLI) inherits none of them; where a
// library opens the descriptor itself (Asio's sockets) the flag is set right
// after open or accept. Children also close everything above their stdio
// before exec, which covers the window between a library's open and this call.
#pragma once

#include <fcntl.h>

namespace tether {

// Sets FD_CLOEXEC on `fd`; false when fcntl failed (an invalid descriptor).
inline bool set_cloexec(int fd) {
  const int flags = ::fcntl(fd, F_GETFD);
  if (flags < 0) return false;
  return (flags & FD_CLOEXEC) != 0 || ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC) == 0;
}

}  // namespace tether
