#include "process/child.h"

#include <signal.h>

#include <algorithm>
#include <vector>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include "process/errors.h"

namespace tether::process {

namespace asio = boost::asio;
using asio::awaitable;
using std::chrono::steady_clock;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);
constexpr std::chrono::milliseconds exit_poll_interval{20};  // without a pidfd
constexpr std::size_t read_chunk = 64 * 1024;

tether::error io_error(const std::string& what, const boost::system::error_code& ec) {
  return make_error(process_errc::io, what + ": " + ec.message());
}

}  // namespace

result<std::unique_ptr<child>> child::start(const asio::any_io_executor& ex, const spawn_options& o, spawner& s) {
  auto spawned = s.spawn(o);
  if (!spawned) return spawned.error();
  return std::make_unique<child>(ex, std::move(spawned).value());
}

child::child(const asio::any_io_executor& ex, spawned s)
    : pid_(s.release()), grace_(s.grace), in_(ex), out_(ex), err_(ex), pidfd_(ex), timer_(ex) {
  if (s.stdin_fd.valid()) in_.assign(asio::local::stream_protocol(), s.stdin_fd.release());
  if (s.stdout_fd.valid()) out_.pipe.assign(s.stdout_fd.release());
  if (s.stderr_fd.valid()) err_.pipe.assign(s.stderr_fd.release());
  if (s.pidfd.valid()) {
    boost::system::error_code ec;
    pidfd_.assign(s.pidfd.release(), ec);
    polling_ = static_cast<bool>(ec);  // the reactor would not take it
  }
  gate_.gate = std::move(s.gate);
  gate_.exec_status = std::move(s.exec_status);
  gate_.program = std::move(s.program);
}

child::~child() {
  cancel();
  if (!status_) (void)kill_and_reap(pid_);
}

result<void> child::open_gate() {
  if (!gate_.gate.valid()) return ok();
  gate_.pid = pid_;
  auto opened = gate_.open_gate();
  if (!opened) {
    exited_ = true;  // spawned::open_gate reaped it
    status_ = exit_status{};
  }
  (void)gate_.release();
  return opened;
}

awaitable<result<void>> child::write(std::string data) {
  if (!in_.is_open()) co_return make_error(process_errc::not_a_pipe, "stdin is not a pipe (or was closed)");
  auto [ec, n] = co_await asio::async_write(in_, asio::buffer(data), use_tuple);
  if (ec) co_return io_error("cannot write to the process", ec);
  co_return ok();
}

void child::close_stdin() {
  boost::system::error_code ignored;
  in_.shutdown(asio::socket_base::shutdown_send, ignored);
  in_.close(ignored);
}

awaitable<result<std::size_t>> child::read_some(stream which, asio::mutable_buffer buffer) {
  auto& r = output(which);
  if (r.eof) co_return std::size_t{0};
  if (!r.pipe.is_open()) co_return make_error(process_errc::not_a_pipe, "the stream is not a pipe (or was closed)");
  auto [ec, n] = co_await r.pipe.async_read_some(buffer, use_tuple);
  if (ec == asio::error::eof) {
    r.eof = true;
    co_return std::size_t{0};
  }
  if (ec) co_return io_error("cannot read from the process", ec);
  co_return n;
}

awaitable<result<std::optional<std::string>>> child::read_line(stream which, line_limits limits) {
  auto& r = output(which);
  if (!r.framer) r.framer.emplace(limits);
  std::vector<char> buf;
  for (;;) {
    if (auto line = r.framer->next()) {
      if (!*line) co_return line->error();
      co_return std::optional<std::string>(std::move(line->value()));
    }
    if (r.eof) {
      if (auto tail = r.framer->finish()) {
        if (!*tail) co_return tail->error();
        co_return std::optional<std::string>(std::move(tail->value()));
      }
      co_return std::optional<std::string>();
    }
    // Never more than the limit plus one chunk is held.
    buf.resize(std::min(read_chunk, r.framer->limits().max_bytes + 1));
    auto n = co_await read_some(which, asio::buffer(buf));
    if (!n) co_return n.error();
    r.framer->feed(std::string_view(buf.data(), *n));
  }
}

void child::close_output(stream which) {
  boost::system::error_code ignored;
  output(which).pipe.close(ignored);
}

bool child::exited() {
  if (!exited_ && !status_) exited_ = has_exited(pid_);
  return exited_ || status_.has_value();
}

awaitable<bool> child::wait_exit(steady_clock::time_point deadline) {
  using namespace asio::experimental::awaitable_operators;
  for (;;) {
    if (exited()) co_return true;
    const auto now = steady_clock::now();
    if (now >= deadline) co_return false;
    if (polling_) {
      timer_.expires_at(std::min(deadline, now + exit_poll_interval));
      auto [ec] = co_await timer_.async_wait(use_tuple);
      if (ec) co_return exited();  // cancelled
      continue;
    }
    timer_.expires_at(deadline);
    // Named, not temporaries inside the co_await expression: g++ 12
    // mishandles those.
    auto either = pidfd_.async_wait(asio::posix::descriptor_base::wait_read, use_tuple) || timer_.async_wait(use_tuple);
    auto done = co_await std::move(either);
    if (done.index() == 0) {
      const auto [ec] = std::get<0>(done);
      if (!ec) {
        exited_ = true;
        co_return true;
      }
      if (ec == asio::error::operation_aborted) co_return exited();
      polling_ = true;  // the reactor refused the pidfd: fall back to polling
    } else if (std::get<0>(std::get<1>(done)) == asio::error::operation_aborted) {
      co_return exited();
    }
  }
}

exit_status child::reap() {
  if (!status_) {
    status_ = process::reap(pid_);
    exited_ = true;
  }
  return *status_;
}

awaitable<exit_status> child::wait() {
  co_await wait_exit();
  co_return reap();
}

awaitable<exit_status> child::stop() {
  if (status_) co_return *status_;
  signal(SIGTERM);
  try {
    co_await wait_exit(steady_clock::now() + grace_);
  } catch (const boost::system::system_error&) {
    // The caller was cancelled (throw_if_cancelled): the stop goes on without the grace.
  }
  signal(SIGKILL);
  // Blocking, but briefly: nothing survives SIGKILL but a process in
  // uninterruptible sleep, and the stop must end in a reap even when the
  // caller is being cancelled.
  co_return reap();
}

void child::signal(int sig) {
  if (!status_) signal_group(pid_, sig);
}

void child::cancel() {
  boost::system::error_code ignored;
  timer_.cancel();
  pidfd_.cancel(ignored);
  out_.pipe.cancel(ignored);
  err_.pipe.cancel(ignored);
  in_.cancel(ignored);
}

}  // namespace tether::process
