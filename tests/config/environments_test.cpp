// [environments.NAME]: read by the environment kinds (env/kinds.h); a
// profile names one; unknown kinds, keys and names are refused with the key.
#include <string>

#include <gtest/gtest.h>

#include "config/with_kinds.h"
#include "env/daytona/daytona.h"
#include "env/kinds.h"
#include "env/ssh/ssh.h"

namespace tether::config {
namespace {

const std::string ssh_table = R"(
[environments.box]
kind = "ssh"
host = "10.0.0.7"
port = 2222
user = "agent"
identity_file = "/etc/tether/id"
known_hosts = "/etc/tether/known_hosts"
remote_root = "/srv/tether"
keep_warm_ms = 60000
[environments.box.price]
cpu_hour = 0.05
memory_gib_hour = 0.01
disk_gib_hour = 0.0001
source = "list price"
date = "2026-12-01"
)";

TEST(environments, local_is_built_in_and_the_default_of_every_profile) {
  auto s = test::parse("");
  ASSERT_TRUE(s) << s.error().message;
  ASSERT_TRUE(s->environments.contains("local"));
  EXPECT_EQ(s->environments.at("local").kind, "local");
  EXPECT_EQ(s->profiles.at("default").environment, "local");
}

TEST(environments, an_ssh_table_is_read_by_its_kind_with_its_price_and_a_profile_names_it) {
  auto s = test::parse(ssh_table + "[profiles.remote]\nenvironment = \"box\"\n");
  ASSERT_TRUE(s) << s.error().message;
  const auto& e = s->environments.at("box");
  EXPECT_EQ(e.kind, "ssh");
  EXPECT_EQ(e.keep_warm_ms, 60000);
  ASSERT_TRUE(e.price);
  EXPECT_EQ(*e.price, (env_price{0.05, 0.01, 0.0001, "list price", "2026-12-01"}));
  const auto* o = e.kind_settings<env::ssh::ssh_options>();
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->host, "10.0.0.7");
  EXPECT_EQ(o->port, 2222);
  EXPECT_EQ(o->user, "agent");
  EXPECT_EQ(o->remote_root, "/srv/tether");
  EXPECT_EQ(o->identity_file, "/etc/tether/id");
  EXPECT_EQ(o->name, "box");
  EXPECT_EQ(s->profiles.at("remote").environment, "box");
}

TEST(environments, an_unknown_kind_key_or_name_is_refused_with_what_is_known) {
  auto kind = test::parse("[environments.x]\nkind = \"kubernetes\"\n");
  ASSERT_FALSE(kind);
  EXPECT_NE(kind.error().message.find("environments.x.kind: \"kubernetes\" is not an environment kind (known: daytona, local, ssh)"),
            std::string::npos)
      << kind.error().message;
  std::string typo = ssh_table;
  typo.insert(typo.find("keep_warm_ms"), "hots = \"typo\"\n");
  auto key = test::parse(typo);
  ASSERT_FALSE(key);
  EXPECT_NE(key.error().message.find("environments.box: unknown key \"hots\" for kind \"ssh\""), std::string::npos)
      << key.error().message;
  auto name = test::parse("[profiles.p]\nenvironment = \"nowhere\"\n");
  ASSERT_FALSE(name);
  EXPECT_NE(name.error().message.find("profiles.p.environment: no environment \"nowhere\""), std::string::npos)
      << name.error().message;
  auto price = test::parse(ssh_table + "[environments.box.price.extra]\n");
  ASSERT_FALSE(price);
  auto local = test::parse("[environments.local]\nkind = \"local\"\n");
  ASSERT_FALSE(local);
  EXPECT_NE(local.error().message.find("built in"), std::string::npos);
}

TEST(environments, the_ssh_kind_requires_its_host_user_keys_and_an_absolute_remote_root) {
  for (const std::string missing : {"host", "user", "identity_file", "known_hosts", "remote_root"}) {
    std::string text;
    for (const auto& line : {std::string("[environments.box]"), std::string("kind = \"ssh\""),
                             std::string("host = \"h\""), std::string("user = \"u\""),
                             std::string("identity_file = \"/i\""), std::string("known_hosts = \"/k\""),
                             std::string("remote_root = \"/r\"")}) {
      if (line.rfind(missing + " ", 0) != 0) text += line + "\n";
    }
    auto s = test::parse(text);
    ASSERT_FALSE(s) << missing;
    EXPECT_NE(s.error().message.find("environments.box." + missing), std::string::npos) << s.error().message;
  }
  auto relative = test::parse("[environments.box]\nkind = \"ssh\"\nhost = \"h\"\nuser = \"u\"\nidentity_file = \"/i\"\n"
                              "known_hosts = \"/k\"\nremote_root = \"srv\"\n");
  ASSERT_FALSE(relative);
  EXPECT_NE(relative.error().message.find("remote_root"), std::string::npos);
  auto negative = test::parse(ssh_table + "[environments.neg]\nkind = \"ssh\"\nhost = \"h\"\nuser = \"u\"\n"
                                          "identity_file = \"/i\"\nknown_hosts = \"/k\"\nremote_root = \"/r\"\n"
                                          "[environments.neg.price]\ncpu_hour = -1\n");
  ASSERT_FALSE(negative);
  EXPECT_NE(negative.error().message.find("environments.neg.price.cpu_hour"), std::string::npos)
      << negative.error().message;
}

TEST(environments, a_daytona_table_is_read_with_its_lifecycle_and_where_a_sandbox_reaches_this_machine) {
  auto s = test::parse("[environments.cloud]\nkind = \"daytona\"\napi_key_env = \"MY_DAYTONA\"\n"
                       "reach_host = \"tether.internal\"\nauto_stop_minutes = 5\ncpu = 2\n");
  ASSERT_TRUE(s) << s.error().message;
  const auto* o = s->environments.at("cloud").kind_settings<env::daytona::daytona_options>();
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->api_key_env, "MY_DAYTONA");
  EXPECT_EQ(o->reach_host, "tether.internal");
  EXPECT_EQ(o->auto_stop, 5);
  EXPECT_EQ(o->auto_archive, 60);
  EXPECT_EQ(o->auto_delete, 7 * 24 * 60);
  EXPECT_EQ(o->cpu, 2);
  for (const char* bad : {"http://x", "a:1", "a b"}) {
    auto r = test::parse(std::string("[environments.cloud]\nkind = \"daytona\"\nreach_host = \"") + bad + "\"\n");
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message.find("environments.cloud.reach_host"), std::string::npos) << r.error().message;
  }
}

TEST(environments, a_table_becomes_its_environment_and_local_has_no_lease) {
  auto s = test::parse(ssh_table);
  ASSERT_TRUE(s);
  // The files do not exist: the factory checks them and says which.
  auto e = env::make_environment(s->environments.at("box"));
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().message.find("identity_file"), std::string::npos) << e.error().message;
  auto local = env::make_environment(s->environments.at("local"));
  ASSERT_FALSE(local);
  EXPECT_EQ(local.error(), env::env_errc::invalid);
}

}  // namespace
}  // namespace tether::config
