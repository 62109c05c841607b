// The agent CLIs scripts/install-agents puts in .agents/ (make test runs it
// through scripts/setup): each kind is found and reports a version. Skipped
// without them, failed under CI (support/agents.h).
#include "support/agents.h"

#include <gtest/gtest.h>

#include "runtime/agent/programs.h"

namespace tether::runtime::agent {
namespace {

class installed_agent : public testing::TestWithParam<std::string_view> {};

TEST_P(installed_agent, is_found_and_reports_a_version) {
  TETHER_REQUIRE_AGENT(path, GetParam());
  EXPECT_TRUE(path.is_absolute()) << path;
  auto v = installed_version(find(GetParam()).value());
  ASSERT_TRUE(v) << path << ": " << v.error().message;
  EXPECT_TRUE(first_version(*v)) << *v;
}

INSTANTIATE_TEST_SUITE_P(kinds, installed_agent, testing::ValuesIn(agent_kinds()), [](const auto& info) {
  std::string name(info.param);
  for (auto& c : name)
    if (c == '-') c = '_';
  return name;
});

}  // namespace
}  // namespace tether::runtime::agent
