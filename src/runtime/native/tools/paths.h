// Workspace confinement and file I/O for the local tools (internal).
//
// resolve() walks a path argument component by component the way the kernel
// does (`..` and symbolic links in every component, the final one included;
// a dangling final link is followed to where it would create the file) and
// refuses a result outside the workspace. The check is on the physical path,
// so `ws/link/../x` means "the parent of link's target", not `ws/x`.
//
// Time of check vs time of use: files are then opened beneath a descriptor
// of the workspace with no symbolic link allowed on the way (util/beneath.h:
// openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), so a file or directory
// swapped for a symlink between the check and the open is refused, and
// write_atomic() makes missing parents and renames the new file into place
// through descriptors too. Confinement guards the model's path arguments; it is not a
// sandbox (bash runs arbitrary commands).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "process/types.h"
#include "util/result.h"

namespace tether::runtime::native::tool_detail {

// An owned file descriptor (the process layer's).
using unique_fd = process::unique_fd;

enum class path_kind { must_exist, may_be_missing };

struct workspace_path {
  std::filesystem::path abs;  // physical: absolute, no symlink, no `.` or `..`
  std::string shown;          // relative to the workspace, '/'-separated; "." for the workspace itself
};

// Resolves `arg` (relative to `workspace`, or absolute). Errors, each naming
// the argument: empty, NUL byte or invalid UTF-8; "outside the workspace";
// "no such file or directory" (must_exist, or a missing directory in the
// middle of a path that is then used as a directory); "not a directory";
// a symlink loop. `workspace` must be canonical.
result<workspace_path> resolve(const std::filesystem::path& workspace, std::string_view arg, path_kind kind);

bool is_within(const std::filesystem::path& workspace, const std::filesystem::path& abs);
std::string shown_path(const std::filesystem::path& workspace, const std::filesystem::path& abs);

// Opens a resolved path beneath the workspace (O_NOFOLLOW | O_CLOEXEC added
// to `flags`); a symbolic link on the way since resolve() is refused.
result<unique_fd> open_inside(const std::filesystem::path& workspace, const workspace_path& p, int flags);

// Reads a whole regular file from `fd`; refuses more than `max_bytes`.
result<std::string> read_all(int fd, std::size_t max_bytes, std::string_view shown);

// Who may read a file a tool creates. The server runs with umask 077 so that
// its data directory stays private; files an agent writes in a user's
// workspace must not be: they get the modes umask 022 would give.
enum class new_file_access {
  owner_only,  // 0600: spill files and blobs in the data directory
  shared,      // 0644 files, 0755 directories: the user's workspace
};

// Writes `data` as file `p` atomically: creates missing parent directories
// (0755), opens and re-checks the parent, writes a temporary file beside the
// target, fsyncs it and renames it over the target. An existing file keeps its
// permission bits; a new one is 0644 whatever the process umask. A symlink
// that appeared at the final component since resolve() is replaced, never
// written through.
result<void> write_atomic(const std::filesystem::path& workspace, const workspace_path& p, std::string_view data);

// The same temp + fsync + rename into an already-open directory (no
// confinement): spill files and image blobs. A new file gets `access`.
result<void> replace_file_at(int dir_fd, const std::string& name, std::string_view data, std::string_view shown,
                             new_file_access access = new_file_access::owner_only);

// "<what>: <strerror(err)>" as an error value.
tether::error os_error(std::string_view what, int err);

}  // namespace tether::runtime::native::tool_detail
