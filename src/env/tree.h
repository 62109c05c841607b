// The digest of a directory tree (env.workspace.synced's tree_sha256): the
// same tree gives the same digest on any machine, whatever the order the
// filesystem lists it in or the files' times and owners.
#pragma once

#include <filesystem>

#include "env/environment.h"

namespace tether::env {

// Every entry under `root` (not `root` itself), symbolic links not followed.
// An error when `root` is not a directory or an entry cannot be read.
result<tree_report> describe_tree(const std::filesystem::path& root);

// A new empty directory beside `local` (".NAME.pull-XXXX") to receive a tree into.
result<std::filesystem::path> receiving_dir(const std::filesystem::path& local);
// Puts the tree received in `received` (a receiving_dir) in place of
// `local` at once (renameat2 RENAME_EXCHANGE; a plain rename when `local`
// does not exist) and removes what was there. On failure `local` is as it
// was and `received` is removed.
result<void> swap_in(const std::filesystem::path& received, const std::filesystem::path& local);

}  // namespace tether::env
