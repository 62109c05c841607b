#include "process/run_to_end.h"

#include <signal.h>

#include <gtest/gtest.h>

#include "process/errors.h"
#include "shell.h"
#include "support/fault_spawner.h"

namespace tether::process {
namespace {

using namespace std::chrono_literals;

spawn_options shell(const std::string& command) { return test::shell_options(command); }

TEST(run_to_end, output_and_stderr_come_back_merged_with_the_exit_status) {
  auto done = run_to_end(shell("echo out; echo err >&2; exit 3"));
  ASSERT_TRUE(done) << done.error().message;
  EXPECT_EQ(done->output, "out\nerr\n");
  EXPECT_EQ(done->status.code, 3);
  EXPECT_FALSE(done->timed_out);
}

TEST(run_to_end, output_is_bounded_and_the_rest_is_drained) {
  auto done = run_to_end(shell("head -c 1000000 /dev/zero"), {.max_output = 1000});
  ASSERT_TRUE(done);
  EXPECT_EQ(done->output.size(), 1000u);
  EXPECT_EQ(done->dropped, 999'000u);
  EXPECT_TRUE(done->status.success());
}

TEST(run_to_end, a_child_past_the_limit_is_killed_with_its_group) {
  auto done = run_to_end(shell("echo started; sleep 1000"), {.limit = 200ms});
  ASSERT_TRUE(done);
  EXPECT_TRUE(done->timed_out);
  EXPECT_EQ(done->status.signal, SIGKILL);
  EXPECT_EQ(done->output, "started\n");
}

TEST(run_to_end, a_spawn_failure_is_an_error) {
  test::fault_spawner s;
  s.fail_spawn_at = 1;
  auto done = run_to_end(shell("true"), {}, s);
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error(), process_errc::spawn_failed);
}

}  // namespace
}  // namespace tether::process
