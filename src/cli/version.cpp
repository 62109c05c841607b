#include "cli/version.h"

#include "tether_revision.h"

#ifndef TETHER_VERSION
#define TETHER_VERSION "unknown"
#endif

namespace tether::cli {

std::string version_line() { return std::string("tether ") + TETHER_VERSION + " (revision " + TETHER_REVISION + ")"; }

}  // namespace tether::cli
