// require_agent: the path of an installed agent CLI, for tests that drive one.
//
//   TEST(codex_runtime, answers_a_plain_prompt) {
//     const auto codex = test::require_agent("codex");
//     if (codex.empty()) return;   // skipped (or, under CI, failed)
//     ...
//   }
//   // or, the same two lines:  TETHER_REQUIRE_AGENT(codex, "codex");
//
// It finds the kind's binary as the runtimes do (runtime/agent/programs.h:
// $TETHER_AGENTS_PREFIX or the source tree's .agents/, then PATH). When
// there is none it records why (where it looked, and that
// scripts/install-agents installs it) and returns an empty path:
//   - with the environment variable CI set (.ci/run exports CI=1) as a
//     failure: CI runs `make test`, which installs the agents, so a missing
//     one is a broken installation, not a reason to skip;
//   - otherwise as a skip (GTEST_SKIP), so a machine without the agents
//     still runs the rest.
// Either way the test can never pass silently: a recorded skip marks it
// skipped even if it carries on, and a failure marks it failed.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "runtime/agent/programs.h"

namespace tether::test {

inline bool on_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && *ci != '\0';
}

inline std::filesystem::path require_agent(std::string_view kind) {
  auto found = runtime::agent::find(kind);
  if (found) return found->path;
  const std::string reason = found.error().message + " (scripts/install-agents installs it)";
  // GTEST_SKIP and FAIL return from the function they are in; a void lambda
  // records the outcome on the running test and lets this one return.
  if (on_ci()) {
    [&] { FAIL() << "CI is set and " << reason; }();
  } else {
    [&] { GTEST_SKIP() << reason; }();
  }
  return {};
}

}  // namespace tether::test

#define TETHER_REQUIRE_AGENT(var, kind)                 \
  const auto var = ::tether::test::require_agent(kind); \
  if (var.empty()) return
