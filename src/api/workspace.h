// Where a session's workspace may be: under one of the server's workspace
// roots (configuration `workspace_roots`; by default the data directory's
// `workspaces/` and the directory `tether serve` was started in).
//
//   auto w = resolve_workspace("/srv/repos/a/../b", roots);   // "/srv/repos/b" or 400
//
// The given path must be absolute. It is resolved before the check: `.` and
// `..` are folded and every symbolic link along the part that exists is
// followed (std::filesystem::weakly_canonical), so `root/link-to-etc` and
// `root/../etc` are outside. The result is the resolved path, which is what
// the session stores: a link swapped after the check cannot move the
// workspace. Nothing is created here, so a refused path leaves no trace.
// `roots` must already be resolved (resolve_roots). A refusal is
// api_errc::bad_request naming the field `workspace`. So is a workspace that
// holds `data_dir` (Tether's data directory, its token and store), which
// the agent's tools would otherwise reach, and one inside it (another
// session's workspace, an agent's home, run/): a session's own workspace
// there is the one it gets by naming none.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace tether::api {

result<std::string> resolve_workspace(std::string_view given, const std::vector<std::filesystem::path>& roots,
                                      const std::filesystem::path& data_dir = {});

// Whether `workspace` is `data_dir` or one of its ancestors (both resolved
// as above): Tether's data would be in reach of the agent's tools.
bool holds_data_dir(const std::filesystem::path& workspace, const std::filesystem::path& data_dir);

// Whether `workspace` is inside `data_dir` (or is it), resolved as above.
bool in_data_dir(const std::filesystem::path& workspace, const std::filesystem::path& data_dir);

// The roots resolved as above, duplicates and unresolvable ones dropped.
std::vector<std::filesystem::path> resolve_roots(const std::vector<std::filesystem::path>& roots);

}  // namespace tether::api
