// Error codes of the work layer (tasks, workspaces, fingerprints).
#pragma once

#include <system_error>

namespace tether::work {

enum class work_errc {
  invalid_spec = 1,  // a workspace spec refused before anything ran (the message names the field)
  not_empty,         // a new workspace's directory exists and holds something
  checkout_failed,   // git clone or worktree add failed (the message names the repository, git's last line)
  command_failed,    // a setup command failed or timed out (its status and last line)
  io,                // a directory could not be made or removed; git is not installed
};

const std::error_category& work_category();
inline std::error_code make_error_code(work_errc e) { return {static_cast<int>(e), work_category()}; }

}  // namespace tether::work

template <>
struct std::is_error_code_enum<tether::work::work_errc> : std::true_type {};
