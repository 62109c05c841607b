#include "runtime/native/tools/tool.h"

#include <stdlib.h>

#include <filesystem>
#include <string>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "fixture.h"
#include "util/text.h"

namespace tether::runtime::native::test {
namespace {

namespace fs = std::filesystem;

class bash_tool : public tools_test {
 protected:
  // Tests that read $$ see the host's pids only without a PID namespace;
  // sandbox_test.cpp checks the same kills inside the sandbox.
  void without_sandbox() { sandbox_.mode = sandbox_mode::off; }

  // A pid the command wrote to a file in the workspace, once it is there.
  pid_t pid_from(const std::string& name) {
    pid_t pid = 0;
    eventually([&] {
      const std::string text = slurp(ws_ / name);
      if (text.empty() || text.back() != '\n') return false;
      pid = static_cast<pid_t>(std::stol(text));
      return true;
    });
    return pid;
  }
};

TEST_F(bash_tool, reports_the_exit_code_and_a_nonzero_exit_still_succeeds) {
  const auto out = call("bash", args({{"command", "echo hi; exit 3"}}));
  ASSERT_EQ(out.status, tool_status::succeeded) << out.content;
  EXPECT_EQ(out.content, "hi\nexit code 3");
}

TEST_F(bash_tool, merges_stderr_runs_in_the_workspace_and_reads_an_empty_stdin) {
  const auto out = call("bash", args({{"command", "pwd; echo err >&2; cat; echo done"}}));
  ASSERT_EQ(out.status, tool_status::succeeded) << out.content;
  EXPECT_EQ(out.content, ws_.string() + "\nerr\ndone\nexit code 0");
}

TEST_F(bash_tool, a_command_without_output_says_so) {
  EXPECT_EQ(call("bash", args({{"command", "true"}})).content, "(no output)\nexit code 0");
}

TEST_F(bash_tool, death_by_signal_is_reported) {
  without_sandbox();
  const auto out = call("bash", args({{"command", "kill -KILL $$"}}));
  ASSERT_EQ(out.status, tool_status::succeeded) << out.content;
  EXPECT_TRUE(contains(out.content, "killed by signal 9 (SIGKILL)")) << out.content;
}

TEST_F(bash_tool, output_over_the_cap_is_drained_and_dropped_and_the_drop_is_reported) {
  limits_.bash_output_cap = 1000;
  const auto out = call("bash", args({{"command", "head -c 100000 /dev/zero | tr '\\0' a; echo; echo tail"}}));
  ASSERT_EQ(out.status, tool_status::succeeded) << out.content;
  std::string expected(1000, 'a');
  expected += "\n(99006 more bytes of output were dropped";
  EXPECT_TRUE(out.content.starts_with(expected)) << out.content.substr(0, 1100);
  EXPECT_TRUE(out.content.ends_with("exit code 0")) << out.content;
}

TEST_F(bash_tool, invalid_utf8_output_is_made_valid) {
  const auto out = call("bash", args({{"command", "printf 'ok \\377\\n'"}}));
  EXPECT_TRUE(is_valid_utf8(out.content));
  EXPECT_TRUE(out.content.starts_with("ok \xEF\xBF\xBD\n")) << out.content;
}

TEST_F(bash_tool, a_timeout_kills_the_whole_process_group_and_keeps_the_partial_output) {
  without_sandbox();
  const auto out = call("bash", args({{"command", "echo $$ > pid; sleep 1000 & echo $! > bg; echo started; wait"},
                                      {"timeout_ms", 1500}}));
  EXPECT_EQ(out.status, tool_status::failed);
  EXPECT_TRUE(out.content.starts_with("started\n")) << out.content;
  EXPECT_TRUE(contains(out.content, "timed out after 1500 ms")) << out.content;
  const pid_t shell = pid_from("pid");
  const pid_t background = pid_from("bg");
  ASSERT_GT(shell, 0);
  ASSERT_GT(background, 0);
  EXPECT_TRUE(eventually([&] { return !group_alive(shell) && !process_alive(background); }));
}

TEST_F(bash_tool, a_group_that_ignores_sigterm_is_killed_with_sigkill_after_the_grace) {
  without_sandbox();
  limits_.bash_kill_grace = std::chrono::milliseconds(200);
  const auto out = call("bash", args({{"command", "trap '' TERM; echo $$ > pid; sleep 1000 & echo $! > bg; wait"},
                                      {"timeout_ms", 1000}}));
  EXPECT_EQ(out.status, tool_status::failed);
  EXPECT_TRUE(contains(out.content, "timed out after 1000 ms")) << out.content;
  const pid_t shell = pid_from("pid");
  const pid_t background = pid_from("bg");
  EXPECT_TRUE(eventually([&] { return !group_alive(shell) && !process_alive(background); }));
}

TEST_F(bash_tool, the_timeout_is_the_smaller_of_the_argument_and_the_limit) {
  limits_.bash_timeout = std::chrono::milliseconds(300);
  const auto out = call("bash", args({{"command", "sleep 1000"}, {"timeout_ms", 60000}}));
  EXPECT_EQ(out.status, tool_status::failed);
  EXPECT_TRUE(contains(out.content, "timed out after 300 ms")) << out.content;
}

TEST_F(bash_tool, an_interrupt_kills_the_whole_process_group_and_fails_interrupted) {
  without_sandbox();
  std::stop_source stop;
  auto ctx = context();
  ctx.stop = stop.get_token();
  auto running = start("bash", args({{"command", "echo $$ > pid; sleep 1000 & echo $! > bg; wait"}}), ctx);
  const pid_t shell = pid_from("pid");
  const pid_t background = pid_from("bg");
  ASSERT_GT(background, 0);
  stop.request_stop();
  const auto out = running.get();
  EXPECT_EQ(out.status, tool_status::failed);
  EXPECT_EQ(out.content, "interrupted");
  EXPECT_TRUE(eventually([&] { return !group_alive(shell) && !process_alive(background); }));
}

TEST_F(bash_tool, asio_cancellation_of_the_caller_interrupts_and_kills_the_process_group) {
  without_sandbox();
  boost::asio::cancellation_signal cancel;
  const tool* bash = tools_.find("bash");
  // The signal is not thread-safe: the call and the emit share one strand.
  auto strand = boost::asio::make_strand(io_);
  auto token = boost::asio::bind_cancellation_slot(cancel.slot(), boost::asio::use_future);
  auto running = boost::asio::co_spawn(
      strand, bash->run(args({{"command", "echo $$ > pid; sleep 1000 & echo $! > bg; wait"}}), context()),
      token);
  const pid_t shell = pid_from("pid");
  const pid_t background = pid_from("bg");
  ASSERT_GT(background, 0);
  boost::asio::post(strand, [&cancel] { cancel.emit(boost::asio::cancellation_type::terminal); });
  const auto out = running.get();
  EXPECT_EQ(out.status, tool_status::failed);
  EXPECT_EQ(out.content, "interrupted");
  EXPECT_TRUE(eventually([&] { return !group_alive(shell) && !process_alive(background); }));
}

TEST_F(bash_tool, background_jobs_do_not_outlive_the_command) {
  without_sandbox();
  const auto out = call("bash", args({{"command", "sleep 1000 > /dev/null 2>&1 & echo $! > bg; echo ok"}}));
  ASSERT_EQ(out.status, tool_status::succeeded) << out.content;
  EXPECT_EQ(out.content, "ok\nexit code 0");
  const pid_t background = pid_from("bg");
  EXPECT_TRUE(eventually([&] { return !process_alive(background); }));
}

TEST_F(bash_tool, a_background_job_holding_the_output_open_does_not_hang_the_call) {
  without_sandbox();
  const auto out = call("bash", args({{"command", "sleep 1000 & echo $! > bg; echo ok"}}));
  ASSERT_EQ(out.status, tool_status::succeeded) << out.content;
  EXPECT_EQ(out.content, "ok\nexit code 0");
  EXPECT_TRUE(eventually([&] { return !process_alive(pid_from("bg")); }));
}

TEST_F(bash_tool, long_output_is_spilled_with_a_head_and_tail_preview) {
  const auto out = call("bash", args({{"command", "seq 1 5000"}}));
  ASSERT_EQ(out.status, tool_status::succeeded);
  ASSERT_EQ(out.output_path, (root_ / "spill" / "call_1.txt").string());
  EXPECT_TRUE(out.content.starts_with("1\n2\n")) << out.content.substr(0, 100);
  EXPECT_TRUE(out.content.ends_with("4999\n5000\nexit code 0\n")) << out.content.substr(out.content.size() - 100);
  std::string full;
  for (int i = 1; i <= 5000; ++i) full += std::to_string(i) + "\n";
  EXPECT_EQ(slurp(out.output_path), full + "exit code 0");
}

TEST_F(bash_tool, bad_arguments_fail_before_anything_runs) {
  EXPECT_EQ(call("bash", args({})).content, "missing required argument 'command'");
  EXPECT_EQ(call("bash", args({{"command", "true"}, {"timeout_ms", "soon"}})).content,
            "argument 'timeout_ms' must be an integer");
  EXPECT_EQ(call("bash", args({{"command", "true"}, {"timeout_ms", 0}})).status, tool_status::failed);
  EXPECT_EQ(call("bash", args({{"command", "  "}})).content, "the command is empty");
}

}  // namespace
}  // namespace tether::runtime::native::test
