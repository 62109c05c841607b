// The environment kinds as plug-ins: each one's name, the keys its
// [environments.NAME] table takes and their reader (config::env_kind_keys),
// and the factory that builds the environment a table describes. The one
// place their names are written is kinds.cpp.
//
//   auto settings = config::load(file, runtime::config_kinds(), env::config_kinds());
//   auto e = env::make_environment(settings->environments.at("build-box"));  // result<unique_ptr<environment>>
//
// "local" is this machine: it takes no table and has no factory here (a
// turn in it runs as it always has, without a lease).
#pragma once

#include <memory>
#include <span>
#include <string_view>

#include "config/config.h"
#include "env/environment.h"

namespace tether::env {

// What the configuration reads environments with ("local" first).
std::span<const config::env_kind_keys> config_kinds();

// The environment an [environments.NAME] table describes; env_errc::invalid
// for "local" (no lease) or settings its kind did not read.
result<std::unique_ptr<environment>> make_environment(const config::environment_settings& s);

}  // namespace tether::env
