// `tether doctor` on a configuration with an SSH environment: the host
// reached (a real sshd, tests/support/sshd.h), its free disk, the programs
// its profiles need; a wrong host key is a broken line that says so.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "process/run_to_end.h"
#include "support/sshd.h"

namespace tether::env {
namespace {

namespace fs = std::filesystem;

struct doctor_run {
  int code = -1;
  std::string output;
};

doctor_run doctor(const fs::path& config) {
  auto done = process::run_to_end(
      {.argv = {TETHER_BINARY, "doctor", "--config", config.string()},
       .env = {"PATH=/usr/bin:/bin", "HOME=" + config.parent_path().string()}},
      {.limit = std::chrono::seconds(60)});
  EXPECT_TRUE(done) << done.error().describe();
  return done ? doctor_run{done->status.code, done->output} : doctor_run{};
}

std::string config_for(const ssh::ssh_options& o, const std::string& profile_runtime) {
  return "data_dir = \"" + (fs::path(o.control_dir).parent_path() / "data").string() + "\"\n" +
         "[environments.box]\nkind = \"ssh\"\nhost = \"" + o.host + "\"\nport = " + std::to_string(o.port) +
         "\nuser = \"agent\"\nidentity_file = \"" + o.identity_file.string() + "\"\nknown_hosts = \"" +
         o.known_hosts.string() + "\"\nremote_root = \"" + o.remote_root + "\"\ncontrol_dir = \"" +
         o.control_dir.string() + "\"\n[profiles.remote]\nruntime = \"" + profile_runtime +
         "\"\nenvironment = \"box\"\n";
}

TEST(Doctor, AnSshEnvironmentIsReachedAndWhatItLacksIsBroken) {
  auto server = test::sshd::start();
  ASSERT_TRUE(server) << server.error().describe();
  const auto o = (*server)->options();
  const fs::path config = (*server)->dir() / "tether.toml";

  std::ofstream(config) << config_for(o, "native");
  auto ok = doctor(config);
  EXPECT_NE(ok.output.find("env box"), std::string::npos) << ok.output;
  EXPECT_NE(ok.output.find("ssh agent@" + o.host + ":" + std::to_string(o.port) +
                           ": reachable, host key and identity accepted"),
            std::string::npos)
      << ok.output;
  EXPECT_NE(ok.output.find("MiB free; sh /usr/bin/sh; tar /usr/bin/tar"), std::string::npos) << ok.output;

  // A profile that drives codex there: codex is not on that host.
  std::ofstream(config) << config_for(o, "codex");
  auto lacking = doctor(config);
  EXPECT_NE(lacking.output.find("; codex NOT found"), std::string::npos) << lacking.output;
  EXPECT_EQ(lacking.code, 1);

  auto wrong = o;
  wrong.known_hosts = (*server)->wrong_known_hosts();
  std::ofstream(config) << config_for(wrong, "native");
  auto refused = doctor(config);
  EXPECT_EQ(refused.code, 1);
  EXPECT_NE(refused.output.find("is not the one in known_hosts"), std::string::npos) << refused.output;
}

}  // namespace
}  // namespace tether::env
