#include "node/data_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

namespace tether::node {

namespace fs = std::filesystem;

namespace {

std::string octal(mode_t m) { return fmt::format("{:04o}", static_cast<unsigned>(m & 07777U)); }

// Tightens one path to `wanted` when group or others have any access.
void make_private(const fs::path& p, mode_t wanted, const std::function<void(const std::string&)>& warn) {
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0 || S_ISLNK(st.st_mode)) return;  // links are not followed
  if ((st.st_mode & 077U) == 0) return;
  if (warn) warn(fmt::format("{} was {} (readable by others); it is now {}", p.string(), octal(st.st_mode), octal(wanted)));
  ::chmod(p.c_str(), wanted);
}

// "pid N" of the lock's holder, as it wrote it, or "".
std::string holder(int fd) {
  char buf[32] = {};
  const auto n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return "";
  std::string s(buf, static_cast<std::size_t>(n));
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s.empty() ? "" : " (pid " + s + ")";
}

}  // namespace

data_dir::~data_dir() {
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the flock
}

data_dir::data_dir(data_dir&& o) noexcept : path_(std::move(o.path_)), lock_fd_(std::exchange(o.lock_fd_, -1)) {}

data_dir& data_dir::operator=(data_dir&& o) noexcept {
  if (this != &o) {
    if (lock_fd_ >= 0) ::close(lock_fd_);
    path_ = std::move(o.path_);
    lock_fd_ = std::exchange(o.lock_fd_, -1);
  }
  return *this;
}

result<data_dir> claim_data_dir(const std::string& wanted, const std::function<void(const std::string&)>& warn) {
  std::error_code ec;
  fs::create_directories(wanted, ec);
  if (ec)
    return make_error(node_errc::data_dir_unusable, "cannot create the data directory " + wanted + ": " + ec.message());
  auto path = fs::canonical(wanted, ec);
  if (ec)
    return make_error(node_errc::data_dir_unusable, "cannot resolve the data directory " + wanted + ": " + ec.message());

  const fs::path lock_path = path / "lock";
  const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0)
    return make_error(node_errc::data_dir_unusable, "cannot open " + lock_path.string() + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    const std::string who = holder(fd);
    ::close(fd);
    if (err == EWOULDBLOCK)
      return make_error(node_errc::data_dir_locked, "the data directory " + path.string() +
                                                        " is in use by another Tether process" + who +
                                                        "; stop it first, or give this one its own --data");
    return make_error(node_errc::data_dir_unusable, "cannot lock " + lock_path.string() + ": " + std::strerror(err));
  }
  data_dir dir(path, fd);
  // Who holds it, for the message a second process prints (best effort).
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) == 0) (void)!::pwrite(fd, pid.data(), pid.size(), 0);

  make_private(path, 0700, warn);
  for (const auto& entry : fs::directory_iterator(path, ec)) {
    std::error_code type_ec;
    const auto status = entry.symlink_status(type_ec);
    if (type_ec) continue;
    if (fs::is_directory(status))
      make_private(entry.path(), 0700, warn);
    else if (fs::is_regular_file(status))
      make_private(entry.path(), 0600, warn);
  }
  return dir;
}

}  // namespace tether::node
