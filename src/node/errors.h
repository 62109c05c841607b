// Error codes of the node: what keeps a process from starting on its data
// directory (the CLI maps each to its exit code, see cli/commands.h).
#pragma once

#include <system_error>

namespace tether::node {

enum class node_errc {
  data_dir_locked = 1,  // another live Tether process holds the data directory
  data_dir_unusable,    // the directory or its lock file cannot be created, opened or locked
};

const std::error_category& node_category();
inline std::error_code make_error_code(node_errc e) { return {static_cast<int>(e), node_category()}; }

}  // namespace tether::node

template <>
struct std::is_error_code_enum<tether::node::node_errc> : std::true_type {};
