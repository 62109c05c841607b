#include "process/child.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <boost/asio/io_context.hpp>

#include "process/errors.h"
#include "shell.h"
#include "support/fault_spawner.h"
#include "support/run.h"

namespace tether::process {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using asio::awaitable;
using test::run_sync;
using namespace std::chrono_literals;

spawn_options shell(const std::string& command) { return test::shell_options(command); }

// Everything `c` writes on `which` until EOF.
awaitable<std::string> drain(child& c, stream which) {  // NOLINT(cppcoreguidelines-avoid-reference-coroutine-parameters): run_sync awaits it at once; the caller owns `c`
  std::string out;
  char buf[4096];
  for (;;) {
    auto n = co_await c.read_some(which, asio::buffer(buf));
    if (!n || *n == 0) co_return out;
    out.append(buf, *n);
  }
}

struct run_result {
  std::string out;
  std::string err;
  exit_status status;
};

run_result run(asio::io_context& io, spawn_options o, spawner& s = system_spawner()) {
  auto c = child::start(io.get_executor(), o, s);
  EXPECT_TRUE(c) << c.error().message;
  if (!c) return {};
  EXPECT_TRUE((*c)->open_gate());
  run_result r;
  r.out = run_sync(io, drain(**c, stream::out));
  if (o.stderr_mode == output::pipe) r.err = run_sync(io, drain(**c, stream::err));
  r.status = run_sync(io, (*c)->wait());
  return r;
}

bool alive(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (stat.empty()) return false;
  const auto close = stat.rfind(')');
  return close != std::string::npos && stat.size() > close + 2 && stat[close + 2] != 'Z';
}

bool eventually(const std::function<bool()>& pred) {
  for (int i = 0; i < 1000; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return pred();
}

fs::path scratch() {
  std::random_device rd;
  auto dir = fs::temp_directory_path() / ("tether-process-" + std::to_string(rd()));
  fs::create_directories(dir);
  return dir;
}

TEST(child, the_child_inherits_no_descriptor_but_its_stdio) {
  asio::io_context io;
  // A descriptor without close-on-exec, as a careless library would leave one.
  const int leaked = ::dup(2);
  ASSERT_GT(leaked, 2);
  auto r = run(io, shell("ls /proc/$$/fd"));
  ::close(leaked);
  EXPECT_EQ(r.out, "0\n1\n2\n");
  EXPECT_EQ(r.status.describe(), "exit code 0");
}

TEST(child, a_gated_child_inherits_nothing_either_once_it_runs) {
  asio::io_context io;
  auto o = shell("ls /proc/$$/fd");
  o.gate = start_gate::gated;
  EXPECT_EQ(run(io, o).out, "0\n1\n2\n");
}

TEST(child, the_environment_is_exactly_the_one_given) {
  asio::io_context io;
  ::setenv("TETHER_PROCESS_TEST_SECRET", "leak", 1);
  spawn_options o;
  o.argv = {"/usr/bin/env"};
  o.env = {"ONLY=this", "AND=that"};
  EXPECT_EQ(run(io, o).out, "ONLY=this\nAND=that\n");
  o.env.clear();
  EXPECT_EQ(run(io, o).out, "");
  ::unsetenv("TETHER_PROCESS_TEST_SECRET");
}

TEST(child, signals_are_default_and_unblocked_in_the_child_whatever_the_parent_set) {
  asio::io_context io;
  struct sigaction ignore {};
  struct sigaction saved {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGINT, &ignore, &saved);
  sigset_t block;
  sigset_t old;
  sigemptyset(&block);
  sigaddset(&block, SIGUSR1);
  ::pthread_sigmask(SIG_BLOCK, &block, &old);
  // glibc's own signals (32, 33) ignored too, as some launchers leave them:
  // sigaction(3) cannot reset those, only the raw call can.
  const unsigned long ignored[8] = {reinterpret_cast<unsigned long>(SIG_IGN)};  // handler first on x86-64
  unsigned long kept[2][8] = {};
  for (int i = 0; i < 2; ++i) ::syscall(SYS_rt_sigaction, 32 + i, ignored, kept[i], (NSIG - 1) / 8);
  // grep itself, not a shell: what it shows is what the spawner handed it.
  spawn_options o;
  o.argv = {"/bin/grep", "-E", "^Sig(Blk|Ign)", "/proc/self/status"};
  auto r = run(io, o);
  for (int i = 0; i < 2; ++i) ::syscall(SYS_rt_sigaction, 32 + i, kept[i], nullptr, (NSIG - 1) / 8);
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ::sigaction(SIGINT, &saved, nullptr);
  EXPECT_EQ(r.out, "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
}

TEST(child, every_child_leads_its_own_session_and_process_group) {
  asio::io_context io;
  auto r = run(io, shell("cut -d' ' -f5,6 /proc/$$/stat; echo $$"));
  std::istringstream in(r.out);
  pid_t pgid = 0, sid = 0, pid = 0;
  in >> pgid >> sid >> pid;
  EXPECT_EQ(pgid, pid);
  EXPECT_EQ(sid, pid);
}

TEST(child, cwd_umask_stdin_pipe_and_separate_stderr_are_as_asked) {
  asio::io_context io;
  const auto dir = scratch();
  auto o = shell("pwd; umask; cat; echo oops >&2");
  o.cwd = dir;
  o.umask = 022;
  o.stdin_mode = input::pipe;
  auto c = child::start(io.get_executor(), o);
  ASSERT_TRUE(c) << c.error().message;
  auto& ch = **c;
  EXPECT_TRUE(run_sync(io, ch.write("from stdin\n")));
  ch.close_stdin();
  EXPECT_EQ(run_sync(io, drain(ch, stream::out)), dir.string() + "\n0022\nfrom stdin\n");
  EXPECT_EQ(run_sync(io, drain(ch, stream::err)), "oops\n");
  EXPECT_TRUE(run_sync(io, ch.wait()).success());
  fs::remove_all(dir);
}

TEST(child, stderr_can_be_merged_into_stdout_in_order_or_go_to_a_log_file) {
  asio::io_context io;
  auto o = shell("echo one; echo two >&2; echo three");
  o.stderr_mode = output::stdout_pipe;
  EXPECT_EQ(run(io, o).out, "one\ntwo\nthree\n");
  const auto dir = scratch();
  o.stdout_mode = output::log_file;
  o.stderr_mode = output::log_file;
  o.log = dir / "child.log";
  auto c = child::start(io.get_executor(), o);
  ASSERT_TRUE(c);
  EXPECT_TRUE(run_sync(io, (*c)->wait()).success());
  std::ifstream in(o.log);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()), "one\ntwo\nthree\n");
  EXPECT_EQ(fs::status(o.log).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
  fs::remove_all(dir);
}

TEST(child, a_missing_program_or_directory_is_a_spawn_error_not_an_exit_code) {
  asio::io_context io;
  spawn_options o;
  o.argv = {"/nonexistent/program"};
  auto c = child::start(io.get_executor(), o);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error(), process_errc::spawn_failed);
  EXPECT_NE(c.error().message.find("No such file"), std::string::npos) << c.error().message;
  o = shell("true");
  o.cwd = "/nonexistent-dir";
  c = child::start(io.get_executor(), o);
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("working directory"), std::string::npos) << c.error().message;
}

TEST(child, lines_are_framed_and_a_line_over_the_limit_is_an_error) {
  asio::io_context io;
  auto c = child::start(io.get_executor(), shell("printf 'a\\nbb\\r\\nccc'; head -c 5000 /dev/zero | tr '\\0' x"));
  ASSERT_TRUE(c);
  auto& ch = **c;
  const line_limits limits{.max_bytes = 1000};
  EXPECT_EQ(run_sync(io, ch.read_line(stream::out, limits)).value(), std::optional<std::string>("a"));
  EXPECT_EQ(run_sync(io, ch.read_line(stream::out, limits)).value(), std::optional<std::string>("bb"));
  auto over = run_sync(io, ch.read_line(stream::out, limits));
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error(), process_errc::line_too_long);
  (void)run_sync(io, ch.stop());
}

TEST(child, read_line_returns_the_last_unterminated_line_then_eof) {
  asio::io_context io;
  auto c = child::start(io.get_executor(), shell("printf 'x\\ny'"));
  ASSERT_TRUE(c);
  EXPECT_EQ(run_sync(io, (*c)->read_line(stream::out)).value(), std::optional<std::string>("x"));
  EXPECT_EQ(run_sync(io, (*c)->read_line(stream::out)).value(), std::optional<std::string>("y"));
  EXPECT_EQ(run_sync(io, (*c)->read_line(stream::out)).value(), std::nullopt);
  EXPECT_TRUE(run_sync(io, (*c)->wait()).success());
}

TEST(child, stop_kills_the_whole_group_grandchildren_included) {
  asio::io_context io;
  auto c = child::start(io.get_executor(), shell("sleep 1000 & echo $!; wait"));
  ASSERT_TRUE(c);
  auto line = run_sync(io, (*c)->read_line(stream::out));
  ASSERT_TRUE(line && *line);
  const pid_t grandchild = std::stoi(**line);
  ASSERT_TRUE(alive(grandchild));
  const auto s = run_sync(io, (*c)->stop());
  EXPECT_EQ(s.signal, SIGTERM);
  EXPECT_TRUE(eventually([&] { return !alive(grandchild); }));
}

TEST(child, a_child_ignoring_sigterm_gets_sigkill_after_the_grace) {
  asio::io_context io;
  auto o = shell("trap '' TERM; echo ready; while :; do sleep 1; done");
  o.grace = 200ms;
  auto c = child::start(io.get_executor(), o);
  ASSERT_TRUE(c);
  ASSERT_EQ(run_sync(io, (*c)->read_line(stream::out)).value(), std::optional<std::string>("ready"));
  const auto s = run_sync(io, (*c)->stop());
  EXPECT_EQ(s.signal, SIGKILL);
  EXPECT_EQ(s.describe(), "killed by signal 9 (SIGKILL)");
}

TEST(child, a_gated_child_runs_nothing_before_the_gate_opens_and_nothing_if_it_closes) {
  asio::io_context io;
  const auto dir = scratch();
  auto o = shell("touch ran");
  o.cwd = dir;
  o.gate = start_gate::gated;
  {
    auto c = child::start(io.get_executor(), o);
    ASSERT_TRUE(c);
    std::this_thread::sleep_for(50ms);  // room to misbehave; the assertion does not depend on it
    EXPECT_FALSE(fs::exists(dir / "ran"));
    ASSERT_TRUE((*c)->open_gate());
    EXPECT_TRUE(run_sync(io, (*c)->wait()).success());
    EXPECT_TRUE(fs::exists(dir / "ran"));
  }
  fs::remove(dir / "ran");
  auto s = system_spawner().spawn(o);
  ASSERT_TRUE(s);
  s->gate.reset();  // as if the spawner died before opening it
  EXPECT_EQ(reap(s->release()).code, 125);
  EXPECT_FALSE(fs::exists(dir / "ran"));
  fs::remove_all(dir);
}

TEST(child, a_gated_exec_failure_is_the_gate_opening_error) {
  asio::io_context io;
  spawn_options o;
  o.argv = {"/nonexistent/program"};
  o.gate = start_gate::gated;
  auto c = child::start(io.get_executor(), o);
  ASSERT_TRUE(c);
  auto opened = (*c)->open_gate();
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error(), process_errc::spawn_failed);
  EXPECT_NE(opened.error().message.find("/nonexistent/program"), std::string::npos) << opened.error().message;
  EXPECT_TRUE((*c)->status().has_value());  // reaped
}

TEST(child, a_gated_spawn_returns_once_the_child_is_set_up_in_its_own_group) {
  // A caller records the child between spawn() and open_gate(): what it
  // reads of the child then must already be final.
  auto o = shell("true");
  o.gate = start_gate::gated;
  for (int i = 0; i < 50; ++i) {
    auto s = system_spawner().spawn(o);
    ASSERT_TRUE(s);
    std::ifstream in("/proc/" + std::to_string(s->pid) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::istringstream fields(stat.substr(stat.rfind(')') + 2));
    char state = 0;
    pid_t ppid = 0, pgid = 0;
    fields >> state >> ppid >> pgid;
    EXPECT_EQ(pgid, s->pid);
    ASSERT_TRUE(s->open_gate());
    EXPECT_TRUE(reap(s->release()).success());
  }
}

TEST(child, a_gated_child_whose_setup_failed_is_a_spawn_error) {
  asio::io_context io;
  auto o = shell("true");
  o.cwd = "/nonexistent-dir";
  o.gate = start_gate::gated;
  auto c = child::start(io.get_executor(), o);
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("working directory"), std::string::npos) << c.error().message;
}

TEST(child, the_exit_is_seen_without_a_pidfd_by_polling) {
  asio::io_context io;
  test::fault_spawner s;
  s.drop_pidfd = true;
  auto r = run(io, shell("echo polled; exit 4"), s);
  EXPECT_EQ(r.out, "polled\n");
  EXPECT_EQ(r.status.code, 4);
}

TEST(child, a_hanging_child_is_still_stopped) {
  asio::io_context io;
  test::fault_spawner s;
  s.hang = true;
  auto o = shell("exit 0");
  o.grace = 100ms;
  auto c = child::start(io.get_executor(), o, s);
  ASSERT_TRUE(c);
  ASSERT_EQ(run_sync(io, (*c)->read_line(stream::out)).value(), std::optional<std::string>("hanging"));
  EXPECT_FALSE(run_sync(io, (*c)->wait_exit(std::chrono::steady_clock::now() + 100ms)));
  EXPECT_EQ(run_sync(io, (*c)->stop()).signal, SIGKILL);
}

TEST(child, a_write_to_a_child_that_closed_stdin_is_an_error_not_sigpipe) {
  asio::io_context io;
  auto o = shell("exec 0<&-; echo closed; sleep 1000");
  o.stdin_mode = input::pipe;
  auto c = child::start(io.get_executor(), o);
  ASSERT_TRUE(c);
  ASSERT_EQ(run_sync(io, (*c)->read_line(stream::out)).value(), std::optional<std::string>("closed"));
  auto w = run_sync(io, (*c)->write(std::string(1 << 20, 'x')));
  EXPECT_FALSE(w);
  (void)run_sync(io, (*c)->stop());
}

TEST(child, destroying_a_running_child_kills_and_reaps_it) {
  asio::io_context io;
  pid_t pid = 0;
  {
    auto c = child::start(io.get_executor(), shell("sleep 1000"));
    ASSERT_TRUE(c);
    pid = (*c)->pid();
  }
  EXPECT_FALSE(alive(pid));
  EXPECT_FALSE(fs::exists("/proc/" + std::to_string(pid)));  // reaped: no zombie either
}

}  // namespace
}  // namespace tether::process
