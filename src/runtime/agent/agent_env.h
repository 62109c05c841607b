// Where an agent process runs and what environment it gets (agent_runtime.h,
// steps 1 and 3).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "util/ids.h"
#include "util/result.h"

namespace tether::runtime::agent {

struct agent_options;

struct agent_dirs {
  std::filesystem::path home;       // DATA/agents/<session>/home, 0700, with its XDG dirs
  std::filesystem::path workspace;  // the session's workspace (created), canonical
};

// Creates the session's agent home and its workspace (`workspace`, or
// DATA/workspaces/<session> when empty).
result<agent_dirs> prepare_dirs(const std::filesystem::path& data_dir, const session_id& s,
                                const std::string& workspace);

// The whole environment of the agent: what a native tool gets
// (native::tool_environment: PATH, LANG, LANGUAGE, LC_*, TERM, TZ, USER,
// LOGNAME, the profile's pass-through names, never a withheld one nor
// TETHER_TOKEN), HOME and the XDG variables in its home, set_env, then
// `extra` (the dialect's), then the model key under its variable.
std::vector<std::string> agent_environment(const agent_options& o, const agent_dirs& dirs,
                                           const std::map<std::string, std::string>& extra);

}  // namespace tether::runtime::agent
