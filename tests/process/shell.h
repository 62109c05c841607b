// The process tests' usual child: `/bin/sh -c command` with a minimal PATH.
#pragma once

#include <string>

#include "process/spawn.h"

namespace tether::test {

inline process::spawn_options shell_options(const std::string& command) {
  process::spawn_options o;
  o.argv = process::shell_argv(command);
  o.env = {"PATH=/usr/bin:/bin"};
  return o;
}

}  // namespace tether::test
