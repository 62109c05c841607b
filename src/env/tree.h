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

}  // namespace tether::env
