// Process records: what a restart may kill, and what it must not.
#include "process/records.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <random>

#include <gtest/gtest.h>

#include "fixture.h"
#include "process/spawn.h"

namespace tether::runtime::native::test {
namespace {

namespace fs = std::filesystem;

boost::json::value text(const std::string& s) { return boost::json::string(s); }

class process_records : public tools_test {
 protected:
  // A `sleep` in its own session and process group, as the bash tool starts one.
  pid_t start_sleep() {
    process::spawn_options o;
    o.argv = {"/bin/sleep", "300"};
    o.env = {"PATH=/usr/bin:/bin"};
    auto p = process::system_spawner().spawn(o);
    EXPECT_TRUE(p) << p.error().describe();
    return p ? p->release() : -1;  // the test kills and reaps it
  }
  // Reaps our own child once it died (so it does not linger as a zombie).
  static bool dies(pid_t pid) {
    return eventually([&] {
      int status = 0;
      return ::waitpid(pid, &status, WNOHANG) == pid;
    });
  }
  fs::path dir() const { return root_ / "run" / "procs"; }
  // The server that started the recorded processes, gone: this process's
  // pid with another start time.
  static process::process_identity dead_owner() {
    auto me = process::identify_process(::getpid());
    me->start += 1;
    return *me;
  }
};

TEST_F(process_records, a_recorded_group_that_still_runs_is_killed_and_its_record_removed) {
  const pid_t pid = start_sleep();
  ASSERT_GT(pid, 0);
  const auto id = process::identify_process(pid);
  ASSERT_TRUE(id);
  EXPECT_EQ(id->pgid, pid);
  ASSERT_TRUE(process::record_process(dir(), *id, dead_owner()));
  ASSERT_TRUE(fs::exists(dir() / std::to_string(pid)));
  const auto report = process::kill_recorded_groups(dir());
  EXPECT_EQ(report.killed, 1);
  EXPECT_TRUE(dies(pid));
  EXPECT_FALSE(fs::exists(dir() / std::to_string(pid)));
}

TEST_F(process_records, a_record_whose_start_time_differs_names_a_reused_pid_and_is_not_killed) {
  const pid_t pid = start_sleep();
  ASSERT_GT(pid, 0);
  auto id = process::identify_process(pid);
  ASSERT_TRUE(id);
  id->start += 1;  // the recorded process started at another moment: this is someone else
  ASSERT_TRUE(process::record_process(dir(), *id, dead_owner()));
  const auto report = process::kill_recorded_groups(dir());
  EXPECT_EQ(report.killed, 0);
  EXPECT_EQ(report.gone, 1);
  EXPECT_TRUE(process_alive(pid));
  EXPECT_FALSE(fs::exists(dir() / std::to_string(pid)));
  ::kill(pid, SIGKILL);
  EXPECT_TRUE(dies(pid));
}

TEST_F(process_records, a_group_whose_owner_still_runs_is_left_alone_with_its_record) {
  const pid_t pid = start_sleep();
  ASSERT_GT(pid, 0);
  const auto id = process::identify_process(pid);
  ASSERT_TRUE(id);
  ASSERT_TRUE(process::record_process(dir(), *id, *process::identify_process(::getpid())));  // we are alive
  const auto report = process::kill_recorded_groups(dir());
  EXPECT_EQ(report.killed, 0);
  EXPECT_EQ(report.owned, 1);
  EXPECT_TRUE(process_alive(pid));
  EXPECT_TRUE(fs::exists(dir() / std::to_string(pid)));
  ::kill(pid, SIGKILL);
  EXPECT_TRUE(dies(pid));
}

TEST_F(process_records, records_of_gone_processes_and_malformed_ones_are_removed) {
  const pid_t pid = start_sleep();
  ASSERT_GT(pid, 0);
  const auto id = process::identify_process(pid);
  ASSERT_TRUE(id);
  ::kill(pid, SIGKILL);
  ASSERT_TRUE(dies(pid));
  ASSERT_TRUE(process::record_process(dir(), *id, dead_owner()));
  put_at(dir() / "junk", "not a record");
  const auto report = process::kill_recorded_groups(dir());
  EXPECT_EQ(report.killed, 0);
  EXPECT_EQ(report.gone, 1);
  ASSERT_EQ(report.problems.size(), 1U);
  EXPECT_TRUE(fs::is_empty(dir()));
  EXPECT_EQ(process::kill_recorded_groups(root_ / "missing").killed, 0);
}

TEST_F(process_records, a_gated_child_whose_parent_never_opens_the_gate_runs_nothing) {
  process::spawn_options o;
  o.argv = {"/usr/bin/touch", (ws_ / "ran").string()};
  o.env = {"PATH=/usr/bin:/bin"};
  o.gate = process::start_gate::gated;
  auto p = process::system_spawner().spawn(o);
  ASSERT_TRUE(p) << p.error().describe();
  p->gate.reset();  // as if the server died before the record was durable
  EXPECT_EQ(process::reap(p->release()).describe(), "exit code 125");
  EXPECT_FALSE(fs::exists(ws_ / "ran"));
}

TEST_F(process_records, the_bash_tool_records_its_process_while_it_runs_and_forgets_it_after) {
  sandbox_.records = dir();
  for (const auto mode : {sandbox_mode::workspace_write, sandbox_mode::off}) {
    sandbox_.mode = mode;
    const auto out = call("bash", args({{"command", text("ls " + dir().string() + " 2>/dev/null | wc -l")}}));
    ASSERT_EQ(out.status, tool_status::succeeded) << out.content;
    if (mode == sandbox_mode::off) {
      EXPECT_EQ(out.content, "1\nexit code 0");  // its own record, written before it ran
    }
    EXPECT_TRUE(!fs::exists(dir()) || fs::is_empty(dir())) << to_string(mode);
  }
}

}  // namespace
}  // namespace tether::runtime::native::test
