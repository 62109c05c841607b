// A profile's sandbox, network and env settings (what the bash tool reaches).
#include "config/config.h"

#include "config/with_kinds.h"

#include <gtest/gtest.h>

namespace tether::config {
namespace {

using process::sandbox_mode;
using test::native;
using test::parse;

TEST(config_sandbox, the_default_is_workspace_write_without_network_or_extra_variables) {
  auto s = parse("[profiles.a]\nmodel = \"m\"\n");
  ASSERT_TRUE(s) << s.error().describe();
  for (const auto* name : {"a", "default"}) {
    const auto p = s->find(name);
    ASSERT_TRUE(p);
    EXPECT_EQ(native(*p).sandbox, sandbox_mode::workspace_write);
    EXPECT_FALSE(native(*p).network);
    EXPECT_TRUE(p->env.empty());
  }
}

TEST(config_sandbox, every_mode_network_and_env_are_read) {
  auto s = parse(
      "[profiles.w]\nsandbox = \"workspace-write\"\nnetwork = true\nenv = [\"GOPATH\", \"CARGO_HOME\"]\n"
      "[profiles.r]\nsandbox = \"read-only\"\n"
      "[profiles.o]\nsandbox = \"off\"\n");
  ASSERT_TRUE(s) << s.error().describe();
  EXPECT_EQ(native(*s->find("w")).sandbox, sandbox_mode::workspace_write);
  EXPECT_TRUE(native(*s->find("w")).network);
  EXPECT_EQ(s->find("w")->env, (std::vector<std::string>{"GOPATH", "CARGO_HOME"}));
  EXPECT_EQ(native(*s->find("r")).sandbox, sandbox_mode::read_only);
  EXPECT_EQ(native(*s->find("o")).sandbox, sandbox_mode::off);
}

TEST(config_sandbox, an_unknown_mode_is_refused_by_name) {
  auto s = parse("[profiles.a]\nsandbox = \"none\"\n");
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("profiles.a.sandbox: \"none\" is not a sandbox mode (workspace-write, read-only, off)"),
            std::string::npos)
      << s.error().message;
}

TEST(config_sandbox, wrong_types_and_bad_names_are_refused_naming_the_key) {
  for (const char* text : {"[profiles.a]\nsandbox = false\n", "[profiles.a]\nnetwork = \"yes\"\n",
                           "[profiles.a]\nenv = \"FOO\"\n", "[profiles.a]\nenv = [\"FOO=1\"]\n",
                           "[profiles.a]\nenv = [\"\"]\n", "[profiles.a]\nenv = [3]\n"}) {
    SCOPED_TRACE(text);
    auto s = parse(text);
    ASSERT_FALSE(s);
    EXPECT_NE(s.error().message.find("profiles.a."), std::string::npos) << s.error().message;
  }
}

}  // namespace
}  // namespace tether::config
