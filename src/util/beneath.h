// beneath — file work inside a directory that an untrusted program can
// write at the same time: a session's workspace, an agent's home. Every
// path is opened relative to a descriptor of that directory, never by name
// from `/`, so what was checked is what is used:
//
//   - a path is a relative path of plain names ('/'-separated); `..`, an
//     absolute path, NUL and an empty path are refused before any system
//     call (invalid_argument);
//   - opening goes through openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
//     RESOLVE_NO_MAGICLINKS): no component, the last included, may be a
//     symbolic link, and nothing may lead out of the root. A link swapped in
//     at any moment makes the open fail (ELOOP, reported as "goes through a
//     symbolic link"); it is never followed. Where the kernel has no openat2
//     (before Linux 5.6) the same is done one component at a time with
//     O_NOFOLLOW;
//   - reads open with O_NONBLOCK and check the opened descriptor (fstat): a
//     FIFO, a socket or a device is refused, never waited on;
//   - writes go to a temporary file beside the target (O_EXCL, fchmod, fsync)
//     and renameat() over it inside the already-open parent: a link or FIFO
//     planted at the target is replaced, never written through, and a
//     reader sees the old file or the new one;
//   - directories made on the way are created with mkdirat and opened with
//     O_NOFOLLOW before the next step, their mode set with fchmod.
//
// Errors are the system's codes (std::generic_category), the message naming
// the path as the caller shows it. All calls block on the file system: call
// them from a blocking pool, never from an I/O thread (a hung network file
// system would stop it).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "util/fd.h"
#include "util/result.h"

namespace tether::beneath {

// Opens directory `dir` (a path Tether chose itself, so links on the way to
// it are followed) as a root for the calls below.
result<unique_fd> open_root(const std::filesystem::path& dir);

// Checks `rel` as described above; the error names it.
result<void> check_relative(std::string_view rel);

// Opens `rel` beneath `root` with `flags` (O_CLOEXEC and O_NOFOLLOW added).
result<unique_fd> open_at(int root, std::string_view rel, int flags, mode_t mode = 0);

// Opens the regular file `rel` for reading; anything else (a directory, a
// FIFO, a socket, a device) is refused without blocking.
result<unique_fd> open_regular(int root, std::string_view rel);

// Opens directory `rel` beneath `root` ("" or "." is the root itself),
// making each missing directory with `mode` (set by fchmod, whatever the
// umask) when `make` says so.
enum class missing_dirs { refuse, make };
result<unique_fd> open_dir(int root, std::string_view rel, missing_dirs make, mode_t mode = 0755);

// Reads all of the regular file open as `fd`; more than `max_bytes` is
// refused (too_large), also when the file grows while it is read.
result<std::string> read_all(int fd, std::size_t max_bytes, std::string_view shown);

// Replaces (or creates) the file `name` (one plain name) in the open
// directory `dir` with `data`, through a temporary file and renameat. An
// existing regular file keeps its mode; a new one gets `new_mode`; a
// symbolic link there is replaced, not followed. A directory, FIFO, socket
// or device at `name` is refused.
result<void> replace_file(int dir, std::string_view name, std::string_view data, mode_t new_mode,
                          std::string_view shown);

// Writes `data` as `rel` beneath `root`: the parent directories made where
// missing (0755), then replace_file.
result<void> write_file(int root, std::string_view rel, std::string_view data, mode_t new_mode);

}  // namespace tether::beneath
