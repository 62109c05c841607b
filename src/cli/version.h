// The version line of this binary, as `tether --version` and `tether
// version` print it: "tether 0.1.0 (revision 1a2b3c4d5e6f)". The revision
// is the source tree's `git describe --always --dirty` at build time
// (cmake/revision.cmake), "unknown" when it was built outside a checkout.
#pragma once

#include <string>

namespace tether::cli {

std::string version_line();

}  // namespace tether::cli
