#include "support/paths.h"

#ifndef TETHER_SOURCE_DIR
#error "CMake gives this file (only) TETHER_SOURCE_DIR"
#endif

namespace tether::test_paths {

const char* source_dir() { return TETHER_SOURCE_DIR; }

}  // namespace tether::test_paths
