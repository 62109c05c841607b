// The native kind's descriptor (runtime/kind.h): its settings
// (native/settings.h) and a factory that builds a native_runtime from a
// profile and the node's host: the provider (or the built-in scripted
// model), the profile's bash sandbox (off, loudly, where bubblewrap does not
// run), prices and the work tools.
#pragma once

#include <string>
#include <string_view>

#include "runtime/kind.h"

namespace tether::runtime::native {

runtime::kind native_kind(std::string_view name);

}  // namespace tether::runtime::native
