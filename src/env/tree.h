// Trees moved between this machine and an environment: the digest of a tree
// (env.workspace.synced's tree_sha256: the same tree gives the same digest on
// any machine, whatever the order the filesystem lists it in or the files'
// times and owners), and receiving one safely.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>

#include "env/environment.h"

namespace tether::env {

// Every entry under `root` (not `root` itself), symbolic links not followed.
// An error when `root` is not a directory or an entry cannot be read.
result<tree_report> describe_tree(const std::filesystem::path& root);

// A cheap stamp of the tree at `root`: a digest of every entry's path, type,
// inode, mode, size, modification time (ns) and link target, no content
// read. Equal stamps mean nothing under `root` changed between them, short
// of a write in place that kept a file's size and time to the nanosecond
// (Tether's file tools write a new file and rename it in: a new inode).
result<std::string> stamp_tree(const std::filesystem::path& root);

// Receives a tree in place of `local`, whole or not at all. `fetch(archive)`
// writes the tar the other side made to `archive`, a file in a private
// directory beside `local` (".NAME.pull-XXXX", mode 0700: nothing in it is
// reachable by another user of this machine). GNU tar unpacks it there
// without the archive's owners; an entry the archive places outside the tree
// or through a link it made is not made (tar refuses it: the pull fails).
// The tree is then confined: device nodes, FIFOs and sockets are removed
// (report.dropped), set-user-ID, set-group-ID and sticky bits cleared
// (report.cleared); links stay links, wherever they point (Tether's tools
// and routes do not follow one out of a workspace). Then it takes the place
// of `local` at once (renameat2 RENAME_EXCHANGE; a plain rename when `local`
// does not exist) and what was there is removed. On any failure `local` is
// as it was and nothing is left beside it.
result<tree_report> receive_tree(const std::filesystem::path& local,
                                 const std::function<result<void>(const std::filesystem::path& archive)>& fetch);

// The confinement above, of the tree at `root` (itself included).
struct confinement {
  std::size_t dropped = 0;
  std::size_t cleared = 0;
};
result<confinement> confine_tree(const std::filesystem::path& root);

}  // namespace tether::env
