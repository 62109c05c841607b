// The runtime kinds (runtime/kinds.cpp): one descriptor per name of
// model/runtime_kinds.h, and what the configuration reads with them.
#include "runtime/kind.h"

#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "model/runtime_kinds.h"

namespace tether::runtime {
namespace {

TEST(kinds, every_named_kind_has_one_descriptor_and_native_comes_first) {
  std::set<std::string_view> described;
  for (const auto& k : kinds()) {
    EXPECT_TRUE(described.insert(k.config.name).second) << k.config.name << " twice";
    EXPECT_TRUE(k.make) << k.config.name;
    EXPECT_TRUE(k.config.read) << k.config.name;
    EXPECT_EQ(find_kind(k.config.name), &k);
  }
  EXPECT_EQ(described, std::set<std::string_view>(model::runtime_kind::all.begin(), model::runtime_kind::all.end()));
  EXPECT_EQ(kinds().front().config.name, model::runtime_kind::native);
  EXPECT_EQ(find_kind("codex-server"), nullptr);
  ASSERT_EQ(config_kinds().size(), kinds().size());
  EXPECT_EQ(config_kinds().front().name, model::runtime_kind::native);
}

TEST(kinds, each_agent_kind_names_the_program_it_drives) {
  EXPECT_EQ(find_kind(model::runtime_kind::native)->program, "");
  EXPECT_EQ(find_kind(model::runtime_kind::codex_exec)->program, "codex");
  EXPECT_EQ(find_kind(model::runtime_kind::claude)->program, "claude");
  EXPECT_EQ(find_kind(model::runtime_kind::opencode_run)->program, "opencode");
  EXPECT_EQ(find_kind(model::runtime_kind::acp_codex)->program, "codex-acp");
  EXPECT_EQ(find_kind(model::runtime_kind::acp_claude)->program, "claude-agent-acp");
  EXPECT_EQ(find_kind(model::runtime_kind::acp)->program, "acp");
}

TEST(kinds, only_the_warm_kinds_take_a_keep_alive) {
  for (const auto& k : kinds()) {
    const bool takes = std::find(k.config.keys.begin(), k.config.keys.end(), "keep_alive_ms") != k.config.keys.end();
    const bool warm = std::find(model::runtime_kind::warm.begin(), model::runtime_kind::warm.end(), k.config.name) !=
                      model::runtime_kind::warm.end();
    EXPECT_EQ(takes, warm) << k.config.name;
  }
}

}  // namespace
}  // namespace tether::runtime
