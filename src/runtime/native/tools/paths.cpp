#include "runtime/native/tools/paths.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <vector>

#include "util/errors.h"
#include "util/text.h"

namespace tether::runtime::native::tool_detail {

namespace fs = std::filesystem;

namespace {

constexpr int max_symlinks = 40;  // as the kernel's ELOOP limit

tether::error bad(std::string message) { return {util_errc::invalid_argument, std::move(message)}; }

std::string in_quotes(std::string_view s) { return "'" + std::string(s) + "'"; }

// Pushes the components of `p` (without its root) so that the first one is
// popped first.
void push_components(std::vector<std::string>& todo, const fs::path& p) {
  std::vector<std::string> parts;
  for (const auto& c : p.relative_path()) parts.push_back(c.string());
  todo.insert(todo.end(), parts.rbegin(), parts.rend());
}

std::string temp_name(const std::string& name) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr std::string_view hex = "0123456789abcdef";
  std::string suffix(12, '0');
  auto bits = rng();
  for (char& c : suffix) {
    c = hex[bits & 15U];
    bits >>= 4U;
  }
  return "." + name.substr(0, 100) + ".tmp-" + suffix;
}

}  // namespace

tether::error os_error(std::string_view what, int err) {
  return {std::error_code(err, std::generic_category()), std::string(what) + ": " + std::strerror(err)};
}

bool is_within(const fs::path& workspace, const fs::path& abs) {
  auto a = abs.begin();
  for (const auto& w : workspace) {
    if (w.empty()) continue;  // a trailing separator
    if (a == abs.end() || *a != w) return false;
    ++a;
  }
  return true;
}

std::string shown_path(const fs::path& workspace, const fs::path& abs) {
  const auto rel = abs.lexically_relative(workspace).generic_string();
  return rel.empty() ? "." : rel;
}

result<workspace_path> resolve(const fs::path& workspace, std::string_view arg, path_kind kind) {
  if (arg.empty()) return bad("the path is empty");
  if (arg.find('\0') != std::string_view::npos) return bad("the path " + in_quotes(arg) + " contains a NUL byte");
  if (!is_valid_utf8(arg)) return bad("the path is not valid UTF-8");

  const fs::path given{std::string(arg)};
  std::vector<std::string> todo;
  push_components(todo, given.is_absolute() ? given : workspace / given);
  fs::path cur = "/";
  int links = 0;
  bool missing = false;  // from here on the path does not exist: the rest is lexical
  bool not_dir = false;  // a file was used as a directory
  while (!todo.empty()) {
    const std::string c = std::move(todo.back());
    todo.pop_back();
    if (c.empty() || c == ".") continue;
    if (c == "..") {
      cur = cur.parent_path();
      continue;
    }
    fs::path next = cur / c;
    if (missing || not_dir) {
      cur = std::move(next);
      continue;
    }
    struct stat st {};
    if (::lstat(next.c_str(), &st) != 0) {
      const int err = errno;
      if (err != ENOENT && err != ENOTDIR) return os_error("cannot access " + in_quotes(arg), err);
      missing = true;
      cur = std::move(next);
      continue;
    }
    if (S_ISLNK(st.st_mode)) {
      if (++links > max_symlinks) return bad("too many levels of symbolic links in " + in_quotes(arg));
      std::error_code ec;
      const fs::path target = fs::read_symlink(next, ec);
      if (ec) return os_error("cannot read the symbolic link " + in_quotes(next.string()), ec.value());
      if (target.is_absolute()) cur = "/";
      push_components(todo, target);
      continue;
    }
    if (!S_ISDIR(st.st_mode) && !todo.empty()) not_dir = true;
    cur = std::move(next);
  }

  if (!is_within(workspace, cur)) {
    const fs::path lexical = (given.is_absolute() ? given : workspace / given).lexically_normal();
    std::string msg = "the path " + in_quotes(arg) + " is outside the workspace " + workspace.string();
    if (lexical != cur && is_within(workspace, lexical))
      msg += " (a symbolic link leads to " + cur.string() + ")";
    return bad(std::move(msg));
  }
  if (not_dir) return bad("not a directory: a component of " + in_quotes(arg) + " is a file");
  if (missing && kind == path_kind::must_exist) return bad("no such file or directory: " + in_quotes(arg));
  workspace_path out;
  out.shown = shown_path(workspace, cur);
  out.abs = std::move(cur);
  return out;
}

result<unique_fd> open_inside(const fs::path& workspace, const workspace_path& p, int flags) {
  unique_fd fd(::open(p.abs.c_str(), flags | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0) {
    const int err = errno;
    if (err == ELOOP) return bad(in_quotes(p.shown) + " became a symbolic link while it was being opened; try again");
    if (err == ENOENT) return bad("no such file or directory: " + in_quotes(p.shown));
    return os_error("cannot open " + in_quotes(p.shown), err);
  }
  // The real path of what was opened: catches a directory on the way that
  // was swapped for a symlink after resolve() looked at it.
  char buf[4096];
  const std::string link = "/proc/self/fd/" + std::to_string(fd.get());
  const auto n = ::readlink(link.c_str(), buf, sizeof buf - 1);
  if (n > 0) {
    std::string real(buf, static_cast<std::size_t>(n));
    if (real.starts_with("/") && !is_within(workspace, fs::path(real)))
      return bad("the path " + in_quotes(p.shown) + " is outside the workspace " + workspace.string() +
                 " (it now leads to " + real + ")");
  }
  return fd;
}

result<std::string> read_all(int fd, std::size_t max_bytes, std::string_view shown) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return os_error("cannot stat " + in_quotes(shown), errno);
  const auto size = static_cast<std::size_t>(st.st_size);
  const auto too_large = [&](std::size_t n) {
    return tether::error(util_errc::too_large, "the file " + in_quotes(shown) + " is " + std::to_string(n) +
                                                   " bytes; the limit is " + std::to_string(max_bytes) + " bytes");
  };
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
    if (n < 0) return os_error("cannot read " + in_quotes(shown), errno);
    if (n == 0) break;
    have += static_cast<std::size_t>(n);
  }
  out.resize(have);
  if (have > max_bytes) return too_large(have);
  return out;
}

result<void> replace_file_at(int dir_fd, const std::string& name, std::string_view data, std::string_view shown,
                             new_file_access access) {
  struct stat st {};
  // Set with fchmod: the process umask does not decide.
  mode_t mode = access == new_file_access::shared ? 0644 : 0600;
  if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISDIR(st.st_mode)) return bad(in_quotes(shown) + " is a directory");
    if (S_ISREG(st.st_mode)) mode = st.st_mode & 07777;  // an existing file keeps its mode
  }
  const std::string tmp = temp_name(name);
  unique_fd fd(::openat(dir_fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666));
  if (fd.get() < 0) return os_error("cannot create a file beside " + in_quotes(shown), errno);
  const auto fail = [&](std::string_view what, int err) {
    ::unlinkat(dir_fd, tmp.c_str(), 0);
    return os_error(std::string(what) + " " + in_quotes(shown), err);
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
  if (::renameat(dir_fd, tmp.c_str(), dir_fd, name.c_str()) != 0) return fail("cannot replace", errno);
  return ok();
}

namespace {

// create_directories, but each directory made is 0755 whatever the umask.
result<void> make_shared_directories(const fs::path& workspace, const fs::path& dir) {
  std::vector<fs::path> missing;
  for (fs::path d = dir; !d.empty() && d != d.parent_path(); d = d.parent_path()) {
    std::error_code ec;
    if (fs::exists(fs::symlink_status(d, ec))) break;
    missing.push_back(d);
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (::mkdir(it->c_str(), 0755) != 0 && errno != EEXIST) {
      return os_error("cannot create the directory " + in_quotes(shown_path(workspace, *it)), errno);
    }
    // mkdir's mode went through the umask; never follow a link put there since.
    unique_fd made(::open(it->c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (made.get() >= 0) ::fchmod(made.get(), 0755);
  }
  return ok();
}

}  // namespace

result<void> write_atomic(const fs::path& workspace, const workspace_path& p, std::string_view data) {
  if (p.abs == workspace) return bad("the workspace itself is a directory");
  const fs::path parent = p.abs.parent_path();
  if (auto made = make_shared_directories(workspace, parent); !made) return made.error();
  workspace_path dir;
  dir.abs = parent;
  dir.shown = shown_path(workspace, parent);
  auto dir_fd = open_inside(workspace, dir, O_RDONLY | O_DIRECTORY);
  if (!dir_fd) return dir_fd.error();
  return replace_file_at(dir_fd->get(), p.abs.filename().string(), data, p.shown, new_file_access::shared);
}

}  // namespace tether::runtime::native::tool_detail
