#include "util/beneath.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <random>
#include <vector>

#include "util/errors.h"

namespace tether::beneath {

namespace {

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

tether::error sys(std::string_view what, std::string_view shown, int err) {
  std::string m(what);
  m += " " + quoted(shown) + ": ";
  if (err == ELOOP)
    m += "it goes through a symbolic link, which is never followed here";
  else if (err == EXDEV)
    m += "it leads outside the directory it must stay in";
  else
    m += std::strerror(err);
  return {std::error_code(err, std::generic_category()), std::move(m)};
}

std::vector<std::string_view> components(std::string_view rel) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  while (pos <= rel.size()) {
    const auto slash = rel.find('/', pos);
    const auto end = slash == std::string_view::npos ? rel.size() : slash;
    const auto part = rel.substr(pos, end - pos);
    if (!part.empty() && part != ".") out.push_back(part);
    if (slash == std::string_view::npos) break;
    pos = slash + 1;
  }
  return out;
}

// Cleared when the kernel has no openat2 (ENOSYS): walk instead.
std::atomic<bool> have_openat2{true};

int openat2_beneath(int root, const char* rel, int flags, mode_t mode) {
  open_how how{};
  how.flags = static_cast<std::uint64_t>(flags);
  how.mode = (flags & (O_CREAT | O_TMPFILE)) != 0 ? mode : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  for (;;) {
    const auto fd = ::syscall(SYS_openat2, root, rel, &how, sizeof how);
    if (fd >= 0 || errno != EINTR) return static_cast<int>(fd);
  }
}

// The same rules, one component at a time: every directory on the way is
// opened with O_NOFOLLOW | O_DIRECTORY, so a link anywhere fails (ELOOP or
// ENOTDIR); `..` never reaches here (check_relative).
int walk_beneath(int root, std::string_view rel, int flags, mode_t mode) {
  const auto parts = components(rel);
  if (parts.empty()) return ::openat(root, ".", flags, mode);
  unique_fd dir;
  int at = root;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    const std::string name(parts[i]);
    unique_fd next(::openat(at, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (next.get() < 0) {
      if (errno == ENOTDIR) {
        struct stat st {};
        if (::fstatat(at, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) errno = ELOOP;
      }
      return -1;
    }
    dir = std::move(next);
    at = dir.get();
  }
  const std::string last(parts.back());
  return ::openat(at, last.c_str(), flags, mode);
}

int open_beneath(int root, std::string_view rel, int flags, mode_t mode) {
  const std::string path = rel.empty() ? std::string(".") : std::string(rel);
  if (have_openat2.load(std::memory_order_relaxed)) {
    const int fd = openat2_beneath(root, path.c_str(), flags, mode);
    if (fd >= 0 || errno != ENOSYS) return fd;
    have_openat2.store(false, std::memory_order_relaxed);
  }
  return walk_beneath(root, path, flags, mode);
}

std::string temp_name(std::string_view name) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr std::string_view hex = "0123456789abcdef";
  std::string suffix(12, '0');
  auto bits = rng();
  for (char& c : suffix) {
    c = hex[bits & 15U];
    bits >>= 4U;
  }
  return "." + std::string(name.substr(0, 100)) + ".tmp-" + suffix;
}

}  // namespace

result<void> check_relative(std::string_view rel) {
  if (rel.find('\0') != std::string_view::npos) return tether::error(util_errc::invalid_argument, "a path with a NUL byte");
  if (rel.starts_with('/'))
    return tether::error(util_errc::invalid_argument, "an absolute path where a relative one is needed: " + quoted(rel));
  for (const auto part : components(rel))
    if (part == "..") return tether::error(util_errc::invalid_argument, "a path with '..' is refused: " + quoted(rel));
  return ok();
}

result<unique_fd> open_root(const std::filesystem::path& dir) {
  unique_fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) return sys("cannot open the directory", dir.string(), errno);
  return fd;
}

result<unique_fd> open_at(int root, std::string_view rel, int flags, mode_t mode) {
  if (auto c = check_relative(rel); !c) return c.error();
  unique_fd fd(open_beneath(root, rel, flags | O_CLOEXEC | O_NOFOLLOW, mode));
  if (fd.get() < 0) return sys("cannot open", rel, errno);
  return fd;
}

result<unique_fd> open_regular(int root, std::string_view rel) {
  auto fd = open_at(root, rel, O_RDONLY | O_NONBLOCK);
  if (!fd) return fd;
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) return sys("cannot stat", rel, errno);
  if (S_ISDIR(st.st_mode)) return sys("cannot read", rel, EISDIR);
  if (!S_ISREG(st.st_mode))
    return tether::error(std::make_error_code(std::errc::operation_not_supported),
                         quoted(rel) + " is not a regular file (a FIFO, socket or device is never opened)");
  return fd;
}

result<unique_fd> open_dir(int root, std::string_view rel, missing_dirs make, mode_t mode) {
  if (auto c = check_relative(rel); !c) return c.error();
  unique_fd dir(::fcntl(root, F_DUPFD_CLOEXEC, 0));
  if (dir.get() < 0) return sys("cannot open", rel, errno);
  std::string shown;
  for (const auto part : components(rel)) {
    const std::string name(part);
    shown += (shown.empty() ? "" : "/") + name;
    auto next = open_at(dir.get(), name, O_RDONLY | O_DIRECTORY);
    if (!next && next.error().code == std::errc::no_such_file_or_directory && make == missing_dirs::make) {
      if (::mkdirat(dir.get(), name.c_str(), 0700) != 0 && errno != EEXIST) return sys("cannot create", shown, errno);
      next = open_at(dir.get(), name, O_RDONLY | O_DIRECTORY);
      if (next && ::fchmod(next->get(), mode) != 0) return sys("cannot set the mode of", shown, errno);
    }
    if (!next) return sys("cannot open", shown, next.error().code.value());
    dir = std::move(*next);
  }
  return dir;
}

result<std::string> read_all(int fd, std::size_t max_bytes, std::string_view shown) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return sys("cannot stat", shown, errno);
  const auto too_large = [&](std::size_t n) {
    return tether::error(util_errc::too_large, "the file " + quoted(shown) + " is " + std::to_string(n) +
                                                   " bytes; the limit is " + std::to_string(max_bytes) + " bytes");
  };
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size > max_bytes) return too_large(size);
  std::string out;
  out.resize(size);
  std::size_t have = 0;
  for (;;) {
    if (have == out.size()) {
      if (out.size() > max_bytes) return too_large(out.size());
      out.resize(out.size() + 64 * 1024);  // the file grew since fstat
    }
    const auto n = ::read(fd, out.data() + have, out.size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return sys("cannot read", shown, errno);
    if (n == 0) break;
    have += static_cast<std::size_t>(n);
  }
  out.resize(have);
  if (have > max_bytes) return too_large(have);
  return out;
}

result<void> replace_file(int dir, std::string_view name_view, std::string_view data, mode_t new_mode,
                          std::string_view shown) {
  const std::string name(name_view);
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos ||
      name.find('\0') != std::string::npos)
    return tether::error(util_errc::invalid_argument, "not a file name: " + quoted(shown));
  struct stat st {};
  mode_t mode = new_mode;
  if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISDIR(st.st_mode)) return sys("cannot write", shown, EISDIR);
    if (S_ISREG(st.st_mode)) mode = st.st_mode & 07777;  // an existing file keeps its mode
    // A link is replaced (never written through); a FIFO, socket or device is left alone.
    if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
      return tether::error(std::make_error_code(std::errc::operation_not_supported),
                           quoted(shown) + " is not a regular file (a FIFO, socket or device is never written)");
  }
  const std::string tmp = temp_name(name);
  unique_fd fd(::openat(dir, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (fd.get() < 0) return sys("cannot create a file beside", shown, errno);
  const auto fail = [&](std::string_view what, int err) {
    ::unlinkat(dir, tmp.c_str(), 0);
    return sys(what, shown, err);
  };
  if (::fchmod(fd.get(), mode) != 0) return fail("cannot set the mode of", errno);
  std::size_t done = 0;
  while (done < data.size()) {
    const auto n = ::write(fd.get(), data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("cannot write", errno);
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd.get()) != 0) return fail("cannot sync", errno);
  if (::close(fd.release()) != 0) return fail("cannot write", errno);
  if (::renameat(dir, tmp.c_str(), dir, name.c_str()) != 0) return fail("cannot replace", errno);
  return ok();
}

result<void> write_file(int root, std::string_view rel, std::string_view data, mode_t new_mode) {
  if (auto c = check_relative(rel); !c) return c.error();
  const auto parts = components(rel);
  if (parts.empty()) return tether::error(util_errc::invalid_argument, "the directory itself is not a file");
  const auto last = parts.back();
  const auto parent = rel.substr(0, static_cast<std::size_t>(last.data() - rel.data()));
  auto dir = open_dir(root, parent, missing_dirs::make, 0755);
  if (!dir) return dir.error();
  return replace_file(dir->get(), last, data, new_mode, rel);
}

}  // namespace tether::beneath
