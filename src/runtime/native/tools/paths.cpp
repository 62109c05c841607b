#include "runtime/native/tools/paths.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "util/beneath.h"
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
  auto root = beneath::open_root(workspace);
  if (!root) return root.error();
  auto fd = beneath::open_at(root->get(), p.shown, flags);
  if (!fd && fd.error().code == std::errc::too_many_symbolic_link_levels)
    return bad(in_quotes(p.shown) + " became a symbolic link while it was being opened; try again");
  if (!fd && fd.error().code == std::errc::no_such_file_or_directory)
    return bad("no such file or directory: " + in_quotes(p.shown));
  return fd;
}

result<std::string> read_all(int fd, std::size_t max_bytes, std::string_view shown) {
  return beneath::read_all(fd, max_bytes, shown);
}

result<void> replace_file_at(int dir_fd, const std::string& name, std::string_view data, std::string_view shown,
                             new_file_access access) {
  return beneath::replace_file(dir_fd, name, data, access == new_file_access::shared ? 0644 : 0600, shown);
}

result<void> write_atomic(const fs::path& workspace, const workspace_path& p, std::string_view data) {
  if (p.abs == workspace) return bad("the workspace itself is a directory");
  auto root = beneath::open_root(workspace);
  if (!root) return root.error();
  auto w = beneath::write_file(root->get(), p.shown, data, 0644);
  if (!w && w.error().code == std::errc::too_many_symbolic_link_levels)
    return bad(in_quotes(p.shown) + " became a symbolic link while it was being written; try again");
  return w;
}

}  // namespace tether::runtime::native::tool_detail
