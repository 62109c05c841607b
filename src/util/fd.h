// Descriptor flags. Every descriptor the server holds must be close-on-exec
// so a child (a tool's shell, an agent CLI) inherits none of them; where a
// library opens the descriptor itself (Asio's sockets) the flag is set right
// after open or accept. Children also close everything above their stdio
// before exec, which covers the window between a library's open and this call.
#pragma once

#include <fcntl.h>
#include <unistd.h>

namespace tether {

// An owned file descriptor, closed on destruction.
class unique_fd {
 public:
  unique_fd() = default;
  explicit unique_fd(int fd) : fd_(fd) {}
  unique_fd(unique_fd&& o) noexcept : fd_(o.release()) {}
  unique_fd& operator=(unique_fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = o.release();
    }
    return *this;
  }
  unique_fd(const unique_fd&) = delete;
  unique_fd& operator=(const unique_fd&) = delete;
  ~unique_fd() { reset(); }
  [[nodiscard]] int get() const { return fd_; }
  [[nodiscard]] bool valid() const { return fd_ >= 0; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// Sets FD_CLOEXEC on `fd`; false when fcntl failed (an invalid descriptor).
inline bool set_cloexec(int fd) {
  const int flags = ::fcntl(fd, F_GETFD);
  if (flags < 0) return false;
  return (flags & FD_CLOEXEC) != 0 || ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC) == 0;
}

}  // namespace tether
