// `tether relay-forward --port P --socket S -- PROGRAM [ARGS…]`: what runs
// first inside an agent's sandbox when it has no network of its own
// (`network = "relay-only"`, runtime/agent/relay/model_relay.h). It listens on
// 127.0.0.1:P — inside the sandbox's network namespace, where nothing else
// does — and splices each connection to the model relay's Unix socket S
// (bind-mounted into the sandbox); then it runs PROGRAM with its own
// standard streams, forwards SIGTERM, SIGINT and SIGHUP to it, and ends as
// PROGRAM ends: with its exit status, or killed by the same signal. It
// prints nothing on stdout (the agent's protocol); its own failures go to
// stderr and exit 125 before PROGRAM runs.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/signal_set.hpp>

#include "cli/commands.h"
#include "runtime/agent/relay/splice.h"

namespace tether::cli {

namespace {

namespace net = boost::asio;
using tcp = net::ip::tcp;
using local = net::local::stream_protocol;

constexpr int exit_cannot_start = 125;
constexpr auto use_tuple = net::as_tuple(net::use_awaitable);

void cloexec(int fd) { (void)::fcntl(fd, F_SETFD, ::fcntl(fd, F_GETFD) | FD_CLOEXEC); }

net::awaitable<void> forward_one(tcp::socket from, std::string socket_path) {
  local::socket to(from.get_executor());
  auto [ec] = co_await to.async_connect(local::endpoint(socket_path), use_tuple);
  if (ec) {
    std::fprintf(stderr, "tether relay-forward: cannot reach the relay at %s: %s\n", socket_path.c_str(),
                 ec.message().c_str());
    co_return;
  }
  cloexec(to.native_handle());
  co_await runtime::agent::splice(std::move(from), std::move(to));
}

net::awaitable<void> accept_all(std::shared_ptr<tcp::acceptor> acceptor, std::string socket_path) {
  for (;;) {
    auto [ec, socket] = co_await acceptor->async_accept(use_tuple);
    if (ec == net::error::operation_aborted || !acceptor->is_open()) co_return;
    if (ec) continue;
    cloexec(socket.native_handle());
    net::co_spawn(acceptor->get_executor(), forward_one(std::move(socket), socket_path), net::detached);
  }
}

int run_forward(std::uint16_t port, const std::string& socket_path, const std::vector<std::string>& command) {
  net::io_context io(1);
  auto acceptor_ptr = std::make_shared<tcp::acceptor>(io);
  auto& acceptor = *acceptor_ptr;
  boost::system::error_code ec;
  const tcp::endpoint at(net::ip::address_v4::loopback(), port);
  acceptor.open(at.protocol(), ec);
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(at, ec);
  if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    std::fprintf(stderr, "tether relay-forward: cannot listen on 127.0.0.1:%u: %s\n", port, ec.message().c_str());
    return exit_cannot_start;
  }
  cloexec(acceptor.native_handle());
  // Installed before the fork, so that no SIGCHLD or SIGTERM is missed.
  net::signal_set signals(io, SIGCHLD, SIGTERM, SIGINT);
  signals.add(SIGHUP);

  std::vector<char*> argv;
  argv.reserve(command.size() + 1);
  for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));  // NOLINT: execv's signature
  argv.push_back(nullptr);
  const pid_t child = ::fork();
  if (child < 0) {
    std::perror("tether relay-forward: fork");
    return exit_cannot_start;
  }
  if (child == 0) {
    for (const int sig : {SIGCHLD, SIGTERM, SIGINT, SIGHUP}) (void)std::signal(sig, SIG_DFL);
    ::execv(argv[0], argv.data());
    std::fprintf(stderr, "tether relay-forward: cannot run %s: %s\n", argv[0], std::strerror(errno));
    ::_exit(127);
  }

  int status = 0;
  bool ended = false;
  std::function<void()> wait_signal;
  wait_signal = [&] {
    signals.async_wait([&](const boost::system::error_code& e, int sig) {
      if (e) return;
      if (sig == SIGCHLD) {
        if (::waitpid(child, &status, WNOHANG) == child) {
          ended = true;
          boost::system::error_code ignored;
          acceptor.close(ignored);
          io.stop();
          return;
        }
      } else {
        (void)::kill(child, sig);
      }
      wait_signal();
    });
  };
  wait_signal();
  net::co_spawn(io, accept_all(acceptor_ptr, socket_path), net::detached);
  io.run();
  if (!ended && ::waitpid(child, &status, 0) != child) return exit_cannot_start;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    (void)std::signal(sig, SIG_DFL);
    (void)::kill(::getpid(), sig);
    return 128 + sig;
  }
  return exit_cannot_start;
}

}  // namespace

void add_relay_forward_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("relay-forward",
                                 "Inside an agent's relay-only sandbox: forwards 127.0.0.1:PORT to the model "
                                 "relay's socket, runs the agent and ends with it");
  cmd->group("");  // not for people: Tether starts it
  struct args {
    std::uint16_t port = 0;
    std::string socket;
    std::vector<std::string> command;
  };
  auto a = std::make_shared<args>();
  cmd->add_option("--port", a->port, "the port the agent's base URL names")->required();
  cmd->add_option("--socket", a->socket, "the model relay's Unix socket")->required();
  cmd->add_option("command", a->command, "the agent's program and its arguments")->required();
  cmd->callback([&exit_code, a] { exit_code = run_forward(a->port, a->socket, a->command); });
}

}  // namespace tether::cli
