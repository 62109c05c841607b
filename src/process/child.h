// A running child driven asynchronously on the caller's executor.
//
//   auto c = process::child::start(co_await this_coro::executor, options);  // result<unique_ptr<child>>
//   co_await (*c)->write("request\n");
//   auto line = co_await (*c)->read_line(stream::out);  // result<optional<string>>: nullopt at EOF
//   exit_status s = co_await (*c)->stop();              // TERM, grace, KILL, reap
//
// Threading: every member runs on (or is called from) the executor given to
// start(), serialized by the caller (use a strand when the executor has
// several threads). A read on stdout, a read on stderr, a write and an exit
// wait may be outstanding at the same time; two of the same kind may not.
// stdin (input::pipe) is a socket pair: a write to a child that closed it is
// an error, never SIGPIPE.
//
// Exit: wait_exit() waits through a pidfd (an asynchronous wait on it; where
// pidfd_open is unavailable, a 20 ms poll of waitid(WNOWAIT)) and does not
// reap: until reap() the pid, and so the group id, cannot be reused, which
// keeps signal() safe. wait() is wait_exit() then reap(). Neither touches the
// rest of the group; stop() ends all of it:
//
//   stop():  SIGTERM to the group → the leader exits, or the spawn options'
//            grace passes → SIGKILL to the group (stragglers included) →
//            reap (blocking, briefly: only a process in uninterruptible
//            sleep outlives SIGKILL). A cancelled caller skips the grace;
//            stop() always ends in the reap.
//
// Cancellation: cancel() aborts every outstanding operation (they complete
// with an error, or false for wait_exit); the child keeps running. Asio
// cancellation of an awaiting coroutine works the same way per operation.
//
// Destruction: a child not yet reaped is killed (SIGKILL to its group) and
// reaped, blocking briefly. Nothing the layer starts is left behind as a zombie.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>

#include "process/line_framer.h"
#include "process/spawn.h"

namespace tether::process {

enum class stream { out, err };

class child {
 public:
  // Spawns through `s` and binds the parent's ends to `ex`. The gate (if
  // gated) is still closed.
  static result<std::unique_ptr<child>> start(const boost::asio::any_io_executor& ex, const spawn_options& o,
                                               spawner& s = system_spawner());
  child(const boost::asio::any_io_executor& ex, spawned s);
  ~child();
  child(const child&) = delete;
  child& operator=(const child&) = delete;

  [[nodiscard]] pid_t pid() const { return pid_; }
  // See spawn.h: lets a gated child exec.
  result<void> open_gate();

  // stdin (input::pipe): the whole of `data`, or an error (the child closed it).
  boost::asio::awaitable<result<void>> write(std::string data);
  // EOF for the child's stdin.
  void close_stdin();

  // Up to buffer's size bytes; 0 at EOF.
  boost::asio::awaitable<result<std::size_t>> read_some(stream which, boost::asio::mutable_buffer buffer);
  // The next line, framed within `limits` (the limits of the first call on
  // a stream hold for it); nullopt at EOF.
  boost::asio::awaitable<result<std::optional<std::string>>> read_line(stream which, line_limits limits = {});
  // Stops reading `which`: pending reads complete with an error, later ones fail.
  void close_output(stream which);

  // Until the child exited (true) or `deadline` passed or the wait was
  // cancelled (false). Does not reap.
  boost::asio::awaitable<bool> wait_exit(
      std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max());
  [[nodiscard]] bool exited();
  // Reaps the exited child (blocking until it exits; call after wait_exit()).
  exit_status reap();
  boost::asio::awaitable<exit_status> wait();
  boost::asio::awaitable<exit_status> stop();

  // `sig` to the whole group (nothing once reaped).
  void signal(int sig);
  void cancel();
  // Set once reaped.
  [[nodiscard]] const std::optional<exit_status>& status() const { return status_; }

 private:
  struct reader {
    explicit reader(const boost::asio::any_io_executor& ex) : pipe(ex) {}
    boost::asio::posix::stream_descriptor pipe;
    std::optional<line_framer> framer;
    bool eof = false;
  };
  reader& output(stream which) { return which == stream::out ? out_ : err_; }

  pid_t pid_;
  std::chrono::milliseconds grace_;
  spawned gate_;  // holds the gate and exec-status ends until open_gate()
  boost::asio::local::stream_protocol::socket in_;
  reader out_;
  reader err_;
  boost::asio::posix::stream_descriptor pidfd_;
  boost::asio::steady_timer timer_;
  bool polling_ = true;  // no pidfd: waitid is polled
  bool exited_ = false;
  std::optional<exit_status> status_;
};

}  // namespace tether::process
