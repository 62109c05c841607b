// Where the tests find the checkout. Defined in one translation unit
// (paths.cpp), the only one CMake gives the path: a path on every test file's
// command line would make each of them miss ccache in another checkout, so a
// fresh clone would compile every suite anew.
#pragma once

namespace tether::test_paths {

// The checkout's root: scripts/, suites/, config/, tests/ below it.
const char* source_dir();

}  // namespace tether::test_paths
