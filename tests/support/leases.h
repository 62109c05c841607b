// Test support for the environments' tests: a command run to its end in a
// lease, and a wait for a journaled command's state.
#pragma once

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "env/environment.h"
#include "process/run_to_end.h"

namespace tether::test {

// argv run in the lease to its end (60 s at most).
inline process::finished run_in(env::lease& l, std::vector<std::string> argv, std::vector<std::string> env = {}) {
  auto done = process::run_to_end({.argv = std::move(argv), .env = std::move(env)},
                                  {.limit = std::chrono::seconds(60)}, l.spawner());
  EXPECT_TRUE(done) << done.error().describe();
  return done ? *done : process::finished{};
}

// The journal's record of `id`, once it is in `state` (the journal is read
// until then; the test's limit ends a wait that never comes).
inline env::command_record await_command(env::lease& l, const std::string& id, env::command_record::state state) {
  for (;;) {
    auto records = l.commands();
    if (!records) return {};
    for (const auto& r : *records) {
      if (r.id == id && r.status == state) return r;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace tether::test
