// fault_spawner: a process::spawner for tests that wraps the real one and
// injects the failures a child process can bring.
//
//   test::fault_spawner s;
//   s.fail_spawn_at = 3;              // the 3rd spawn fails (process_errc::spawn_failed)
//   s.hang = true;                    // every child ignores SIGTERM and never exits on its own
//   s.drop_pidfd = true;              // children come without a pidfd (the polling fallback)
//   auto c = process::child::start(ex, options, s);
#pragma once

#include <string>

#include "process/errors.h"
#include "process/spawn.h"

namespace tether::test {

class fault_spawner final : public process::spawner {
 public:
  int fail_spawn_at = 0;  // 1-based; 0: never
  bool hang = false;
  bool drop_pidfd = false;
  int spawns = 0;

  result<process::spawned> spawn(const process::spawn_options& o) override {
    ++spawns;
    if (spawns == fail_spawn_at)
      return make_error(process::process_errc::spawn_failed, "injected spawn failure " + std::to_string(spawns));
    process::spawn_options changed = o;
    if (hang) changed.argv = process::shell_argv("trap '' TERM; echo hanging; while :; do sleep 1; done");
    auto s = process::system_spawner().spawn(changed);
    if (s && drop_pidfd) s->pidfd.reset();
    return s;
  }
};

}  // namespace tether::test
