// Test support: the configuration read with Tether's runtime kinds
// (runtime/kinds.cpp), as the node reads it, and each kind's settings.
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>

#include "config/config.h"
#include "env/kinds.h"
#include "runtime/agent/settings.h"
#include "runtime/kind.h"
#include "runtime/native/settings.h"

namespace tether::config::test {

inline result<settings> parse(std::string_view text) {
  return config::parse(text, runtime::config_kinds(), env::config_kinds());
}
inline result<settings> load(const std::optional<std::filesystem::path>& file) {
  return config::load(file, runtime::config_kinds(), env::config_kinds());
}
inline const runtime::native::native_settings& native(const profile& p) {
  return p.kind_settings<runtime::native::native_settings>();
}
inline const runtime::agent::agent_settings& agent(const profile& p) {
  return p.kind_settings<runtime::agent::agent_settings>();
}

}  // namespace tether::config::test
