#include "runtime/agent/bridge/tool_bridge.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <future>
#include <memory>
#include <mutex>
#include <variant>
#include <vector>

#include <gtest/gtest.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include "runtime/agent/agent_test_support.h"
#include "runtime/agent/bridge/client.h"
#include "runtime/agent/errors.h"
#include "util/fd.h"

namespace tether::runtime::agent {
namespace {

using namespace test;  // NOLINT(google-build-using-namespace)

tool_spec echo_spec() {
  return {"echo", "Says back what it is given.",
          json::object{{"type", "object"}, {"properties", {{"text", {{"type", "string"}}}}}}};
}
tool_spec slow_spec() { return {"slow", "Takes its time.", json::object{{"type", "object"}}}; }

// What the handler saw of each call.
struct handler_log {
  std::mutex mu;
  std::vector<std::string> tools;
  std::vector<json::value> arguments;
  std::vector<bool> on_run_executor;
  int running = 0;
  int most_at_once = 0;
  std::promise<void> slow_entered;
  bool slow_entered_set = false;
};

// The handler's body: `slow` waits on `gate` (cancel it to let the call
// finish), `echo` answers at once, `throw` throws.
asio::awaitable<tool_reply> handle_call(handler_log* log, asio::steady_timer* gate,
                                        asio::io_context::executor_type run_ex, std::string tool,
                                        json::value arguments) {
  {
    std::lock_guard lock(log->mu);
    log->tools.push_back(tool);
    log->arguments.push_back(arguments);
    log->on_run_executor.push_back(run_ex.running_in_this_thread());
    log->most_at_once = std::max(log->most_at_once, ++log->running);
  }
  if (tool == "slow") {
    {
      std::lock_guard lock(log->mu);
      if (!std::exchange(log->slow_entered_set, true)) log->slow_entered.set_value();
    }
    co_await gate->async_wait(asio::as_tuple(asio::use_awaitable));
  }
  {
    std::lock_guard lock(log->mu);
    --log->running;
  }
  if (tool == "throw") throw std::runtime_error("handler bug");
  const auto* text = arguments.is_object() ? arguments.as_object().if_contains("text") : nullptr;
  co_return tool_reply{text != nullptr && text->is_string() ? std::string(text->as_string()) : tool + " done",
                       tool == "slow"};
}

// Writes `bytes` to `fd` (non-blocking or not) until all is written or the
// peer refuses more.
void write_until_refused(int fd, const std::string& bytes) {
  std::size_t at = 0;
  while (at < bytes.size()) {
    const auto n = ::send(fd, bytes.data() + at, bytes.size() - at, MSG_NOSIGNAL);
    if (n > 0) {
      at += static_cast<std::size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      pollfd p{fd, POLLOUT, 0};
      if (::poll(&p, 1, 5'000) <= 0) return;
    } else {
      return;
    }
  }
}

class tool_bridge_test : public ::testing::Test {
 protected:
  tool_bridge_test()
      : socket_path_(dir_.path() / "run" / "tools.sock"),
        gate_(turn_.executor(), std::chrono::steady_clock::time_point::max()) {}

  void SetUp() override {
    bridge_ = std::make_unique<tool_bridge>(bridge_io_.executor(), socket_path_);
    auto started = bridge_->start();
    ASSERT_TRUE(started) << started.error().describe();
  }
  void TearDown() override {
    stop_bridge();
    asio::post(turn_.executor(), [this] { gate_.cancel(); });  // a slow call still waiting ends
    turn_.join();
    bridge_io_.join();
  }

  void stop_bridge() {
    if (!bridge_) return;
    asio::co_spawn(bridge_io_.executor(), bridge_->stop(), asio::use_future).get();
  }

  tool_handler handler() {
    return [log = &log_, gate = &gate_, ex = turn_.io().get_executor()](std::string tool, json::value arguments) {
      return handle_call(log, gate, ex, std::move(tool), std::move(arguments));
    };
  }
  run_ticket open_run(std::vector<tool_spec> tools = {echo_spec(), slow_spec(), {"throw", "", json::object()}}) {
    return bridge_->open(turn_.executor(), std::move(tools), handler());
  }
  void release_slow_calls() {
    asio::post(turn_.executor(), [this] { gate_.cancel(); });
  }
  int calls_seen() {
    std::lock_guard lock(log_.mu);
    return static_cast<int>(log_.tools.size());
  }

  temp_dir dir_;
  fs::path socket_path_;
  running_context bridge_io_;
  running_context turn_;
  handler_log log_;
  asio::steady_timer gate_;  // on the turn's executor
  std::unique_ptr<tool_bridge> bridge_;
};

TEST_F(tool_bridge_test, list_answers_with_the_tools_the_run_was_opened_with) {
  auto run = open_run({echo_spec()});
  line_client c(socket_path_);
  auto reply = c.ask(list_request(run.token()));
  ASSERT_TRUE(reply.is_object()) << reply;
  EXPECT_EQ(reply.at("ok"), true);
  const auto& tools = reply.at("tools").as_array();
  ASSERT_EQ(tools.size(), 1U);
  EXPECT_EQ(tools[0].at("name"), "echo");
  EXPECT_EQ(tools[0].at("description"), "Says back what it is given.");
  EXPECT_EQ(tools[0].at("inputSchema"), echo_spec().input_schema);
  ASSERT_TRUE(bridge_->tools_of(run.token()).has_value());
  EXPECT_EQ(bridge_->tools_of(run.token())->at(0).name, "echo");
}

// The TCP door (for an environment that reaches this machine over TCP only):
// `tether mcp`'s client reaches the same runs through it, a made-up token is
// refused there as on the socket, and once the bridge stops the port takes
// no connection.
TEST_F(tool_bridge_test, the_tcp_port_leads_to_the_same_runs_and_closes_with_the_bridge) {
  auto run = open_run();
  auto port = bridge_->tcp_port();
  ASSERT_TRUE(port) << port.error().describe();
  EXPECT_EQ(*bridge_->tcp_port(), *port);  // one door
  const std::string address = "tcp:127.0.0.1:" + std::to_string(*port);
  bridge_client client(address, run.token());
  auto reply = client.call("echo", json::object{{"text", "over tcp"}});
  ASSERT_TRUE(reply) << reply.error().describe();
  ASSERT_TRUE(std::holds_alternative<tool_reply>(*reply));
  EXPECT_EQ(std::get<tool_reply>(*reply).content, "over tcp");
  auto refused = bridge_client(address, "made-up").list();
  ASSERT_TRUE(refused) << refused.error().describe();
  EXPECT_TRUE(std::holds_alternative<protocol::refused>(*refused));
  stop_bridge();
  auto after = client.list();
  ASSERT_FALSE(after);
  EXPECT_EQ(after.error(), agent_errc::bridge_unreachable) << after.error().describe();
  auto bad = bridge_client("tcp:nowhere", run.token()).list();
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("not tcp:HOST:PORT"), std::string::npos) << bad.error().message;
}

TEST_F(tool_bridge_test, a_call_reaches_the_handler_on_the_run_executor_with_its_arguments) {
  auto run = open_run();
  line_client c(socket_path_);
  auto reply = c.ask(call_request(run.token(), "echo", {{"text", "hello"}, {"n", 3}}));
  ASSERT_TRUE(reply.is_object()) << reply;
  EXPECT_EQ(reply.at("ok"), true);
  EXPECT_EQ(reply.at("content"), "hello");
  EXPECT_EQ(reply.at("is_error"), false);
  std::lock_guard lock(log_.mu);
  ASSERT_EQ(log_.tools, std::vector<std::string>{"echo"});
  EXPECT_EQ(log_.arguments[0], (json::object{{"text", "hello"}, {"n", 3}}));
  EXPECT_TRUE(log_.on_run_executor[0]);
}

TEST_F(tool_bridge_test, a_reply_the_handler_marks_as_an_error_reaches_the_client_as_one) {
  auto run = open_run();
  line_client c(socket_path_);
  auto pending = std::async(std::launch::async, [&] { return c.ask(call_request(run.token(), "slow", {})); });
  log_.slow_entered.get_future().wait();
  release_slow_calls();
  auto reply = pending.get();
  ASSERT_TRUE(reply.is_object()) << reply;
  EXPECT_EQ(reply.at("ok"), true);
  EXPECT_EQ(reply.at("is_error"), true);
}

TEST_F(tool_bridge_test, one_connection_carries_many_requests_and_a_request_may_come_byte_by_byte) {
  auto run = open_run();
  line_client c(socket_path_);
  const std::string line = json::serialize(call_request(run.token(), "echo", {{"text", "split"}})) + "\n";
  for (char ch : line) ASSERT_TRUE(c.send(std::string(1, ch)));
  auto first = c.read_line();
  ASSERT_TRUE(first);
  EXPECT_EQ(json::parse(*first).at("content"), "split");
  // Two requests in one write: two replies, in order.
  ASSERT_TRUE(c.send(json::serialize(list_request(run.token())) + "\n" + line));
  auto listed = c.read_line();
  auto called = c.read_line();
  ASSERT_TRUE(listed && called);
  EXPECT_TRUE(json::parse(*listed).as_object().contains("tools"));
  EXPECT_EQ(json::parse(*called).at("content"), "split");
}

TEST_F(tool_bridge_test, calls_of_one_run_run_one_at_a_time) {
  auto run = open_run();
  line_client a(socket_path_);
  line_client b(socket_path_);
  auto slow = std::async(std::launch::async, [&] { return a.ask(call_request(run.token(), "slow", {})); });
  log_.slow_entered.get_future().wait();
  auto quick = std::async(std::launch::async, [&] { return b.ask(call_request(run.token(), "echo", {})); });
  // The second call waits behind the first: its handler has not started.
  EXPECT_EQ(quick.wait_for(300ms), std::future_status::timeout);
  EXPECT_EQ(calls_seen(), 1);
  release_slow_calls();
  EXPECT_EQ(slow.get().at("ok"), true);
  EXPECT_EQ(quick.get().at("content"), "echo done");
  std::lock_guard lock(log_.mu);
  EXPECT_EQ(log_.most_at_once, 1);
  EXPECT_EQ(log_.tools, (std::vector<std::string>{"slow", "echo"}));
}

TEST_F(tool_bridge_test, a_closed_run_is_refused) {
  auto run = open_run();
  const std::string token = run.token();
  line_client c(socket_path_);
  EXPECT_EQ(c.ask(list_request(token)).at("ok"), true);
  run.close();
  EXPECT_FALSE(bridge_->tools_of(token).has_value());
  for (const auto& request : {list_request(token), call_request(token, "echo", {})}) {
    auto reply = c.ask(request);
    ASSERT_TRUE(reply.is_object()) << reply;
    EXPECT_EQ(reply.at("ok"), false);
    EXPECT_EQ(reply.at("error"), "unknown run token");
  }
  EXPECT_EQ(calls_seen(), 0);
}

TEST_F(tool_bridge_test, a_ticket_closes_its_run_when_destroyed_or_overwritten) {
  std::string first_token;
  {
    auto run = open_run();
    first_token = run.token();
    auto other = open_run();
    const std::string other_token = other.token();
    EXPECT_NE(first_token, other_token);
    other = std::move(run);  // the run `other` held is closed; `first` lives on in it
    EXPECT_FALSE(bridge_->tools_of(other_token).has_value());
    EXPECT_TRUE(bridge_->tools_of(first_token).has_value());
  }
  EXPECT_FALSE(bridge_->tools_of(first_token).has_value());
}

TEST_F(tool_bridge_test, a_made_up_token_is_refused_and_the_connection_stays_usable) {
  auto run = open_run();
  line_client c(socket_path_);
  std::string forged = run.token();
  forged[0] = forged[0] == 'a' ? 'b' : 'a';
  for (const auto& token : {std::string("nope"), std::string(), forged}) {
    auto reply = c.ask(call_request(token, "echo", {}));
    ASSERT_TRUE(reply.is_object()) << reply;
    EXPECT_EQ(reply.at("ok"), false);
    EXPECT_EQ(reply.at("error"), "unknown run token");
  }
  EXPECT_EQ(c.ask(list_request(run.token())).at("ok"), true);
  EXPECT_EQ(calls_seen(), 0);
}

TEST_F(tool_bridge_test, tokens_are_32_random_bytes_in_hex) {
  auto a = open_run();
  auto b = open_run();
  EXPECT_EQ(a.token().size(), 64U);
  EXPECT_EQ(a.token().find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(a.token(), b.token());
}

TEST_F(tool_bridge_test, a_tool_the_run_does_not_offer_is_refused_and_nothing_runs) {
  auto run = open_run({echo_spec()});
  line_client c(socket_path_);
  auto reply = c.ask(call_request(run.token(), "slow", {}));
  ASSERT_TRUE(reply.is_object()) << reply;
  EXPECT_EQ(reply.at("ok"), false);
  EXPECT_EQ(reply.at("error"), "the run offers no tool \"slow\"");
  EXPECT_EQ(calls_seen(), 0);
  EXPECT_EQ(c.ask(call_request(run.token(), "echo", {})).at("ok"), true);
}

TEST_F(tool_bridge_test, a_handler_that_throws_fails_its_call_only) {
  auto run = open_run();
  line_client c(socket_path_);
  auto reply = c.ask(call_request(run.token(), "throw", {}));
  ASSERT_TRUE(reply.is_object()) << reply;
  EXPECT_EQ(reply.at("ok"), true);
  EXPECT_EQ(reply.at("is_error"), true);
  EXPECT_NE(std::string(reply.at("content").as_string()).find("handler bug"), std::string::npos);
  EXPECT_EQ(c.ask(call_request(run.token(), "echo", {{"text", "still here"}})).at("content"), "still here");
}

TEST_F(tool_bridge_test, a_line_over_the_limit_is_refused_and_the_connection_closed) {
  auto run = open_run();
  line_client c(socket_path_);
  // Sent from another thread without waiting (the bridge stops reading at the
  // limit), on a descriptor of its own: the client's io_context and socket
  // belong to this thread, which reads the reply meanwhile.
  unique_fd out(::dup(c.socket().native_handle()));
  ASSERT_TRUE(out.valid());
  std::thread writer(
      [fd = out.get()] { write_until_refused(fd, std::string(tool_bridge::max_line_bytes + 4096, 'x') + "\n"); });
  auto line = c.read_line();
  writer.join();
  ASSERT_TRUE(line);
  auto reply = json::parse(*line);
  EXPECT_EQ(reply.at("ok"), false);
  EXPECT_NE(std::string(reply.at("error").as_string()).find("longer than 1048576 bytes"), std::string::npos);
  EXPECT_TRUE(c.closed_by_peer());
  // Exactly at the limit is fine (the reply says why the JSON is wrong, not its length).
  line_client d(socket_path_);
  ASSERT_TRUE(d.send(std::string(tool_bridge::max_line_bytes, ' ') + "\n"));
  auto at_limit = d.read_line();
  ASSERT_TRUE(at_limit);
  EXPECT_EQ(json::parse(*at_limit).at("ok"), false);
  EXPECT_EQ(std::string(json::parse(*at_limit).at("error").as_string()).find("longer"), std::string::npos);
}

struct malformed_case {
  std::string line;
  std::string reason;
};

TEST_F(tool_bridge_test, a_malformed_request_is_refused_with_its_reason_and_the_connection_closed) {
  auto run = open_run();
  const std::string& t = run.token();
  const std::vector<malformed_case> cases = {
      {"this is not json", "the request is not JSON"},
      {"{\"token\":\"" + t + "\",\"op\":\"list\"", "the request is not JSON"},
      {"[1,2,3]", "the request is not a JSON object"},
      {"\"list\"", "the request is not a JSON object"},
      {"{\"op\":\"list\"}", "the request has no string \"token\""},
      {"{\"token\":7,\"op\":\"list\"}", "the request has no string \"token\""},
      {"{\"token\":\"" + t + "\"}", "the request has no string \"op\""},
      {"{\"token\":\"" + t + "\",\"op\":\"delete\"}", "unknown op \"delete\" (list or call)"},
      {"{\"token\":\"" + t + "\",\"op\":\"call\",\"arguments\":{}}", "a call has no string \"tool\""},
      {"{\"token\":\"" + t + "\",\"op\":\"call\",\"tool\":\"echo\"}", "a call has no object \"arguments\""},
      {"{\"token\":\"" + t + "\",\"op\":\"call\",\"tool\":\"echo\",\"arguments\":[]}",
       "a call has no object \"arguments\""},
  };
  for (const auto& [line, reason] : cases) {
    line_client c(socket_path_);
    ASSERT_TRUE(c.send(line + "\n"));
    auto reply_line = c.read_line();
    ASSERT_TRUE(reply_line) << line;
    auto reply = json::parse(*reply_line);
    EXPECT_EQ(reply.at("ok"), false) << line;
    EXPECT_NE(std::string(reply.at("error").as_string()).find(reason), std::string::npos)
        << line << " -> " << reply.at("error");
    EXPECT_TRUE(c.closed_by_peer()) << line;
  }
  EXPECT_EQ(calls_seen(), 0);
  EXPECT_EQ(line_client(socket_path_).ask(list_request(t)).at("ok"), true);  // the bridge is fine
}

// A raw connection to the bridge that never says a word (one descriptor,
// no io_context): what a hostile agent holds by the hundred.
unique_fd silent_connection(const fs::path& socket) {
  unique_fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, socket.c_str(), sizeof addr.sun_path - 1);
  EXPECT_EQ(::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0);
  return fd;
}

// 400 held connections used to fill the bridge (256 at most, counted before
// they said who they were): another session's ask_user vanished and its
// turn "succeeded". Connections count once they authenticate, per run.
TEST_F(tool_bridge_test, an_agent_holding_hundreds_of_connections_cannot_keep_another_run_out) {
  auto hostile = open_run();
  auto other = open_run();
  std::vector<unique_fd> held;
  for (int i = 0; i < 400; ++i) held.push_back(silent_connection(socket_path_));
  line_client client(socket_path_);
  EXPECT_EQ(client.ask(list_request(other.token())).at("ok"), true) << "the other run got through";
  EXPECT_EQ(other.refused(), 0U);

  // The hostile run's own connections: max_connections_per_run, then refusals it is charged with.
  std::vector<std::unique_ptr<line_client>> own;
  for (std::size_t i = 0; i < tool_bridge::max_connections_per_run; ++i) {
    own.push_back(std::make_unique<line_client>(socket_path_));
    ASSERT_EQ(own.back()->ask(list_request(hostile.token())).at("ok"), true) << i;
  }
  line_client over(socket_path_);
  const auto refused = over.ask(list_request(hostile.token()));
  ASSERT_TRUE(refused.is_object());
  EXPECT_EQ(refused.at("error"), "too many connections for this run");
  EXPECT_EQ(hostile.refused(), 1U);
  line_client again(socket_path_);
  EXPECT_EQ(again.ask(list_request(other.token())).at("ok"), true);
  EXPECT_EQ(other.refused(), 0U);
  EXPECT_NE(unreachable_tools(1).find("could not reach Tether's tools"), std::string::npos);
}

// A connection that never authenticates is closed after auth_timeout.
TEST_F(tool_bridge_test, a_connection_that_never_sends_a_request_is_closed) {
  line_client silent(socket_path_);
  EXPECT_TRUE(silent.closed_by_peer(tool_bridge::auth_timeout + 5s));
}

TEST_F(tool_bridge_test, stop_with_a_handler_still_running_ends_cleanly) {
  auto run = open_run();
  line_client c(socket_path_);
  line_client idle(socket_path_);
  ASSERT_TRUE(c.send(json::serialize(call_request(run.token(), "slow", {})) + "\n"));
  log_.slow_entered.get_future().wait();
  auto stopped = asio::co_spawn(bridge_io_.executor(), bridge_->stop(), asio::use_future);
  ASSERT_EQ(stopped.wait_for(5s), std::future_status::ready);
  stopped.get();
  EXPECT_TRUE(c.closed_by_peer());
  EXPECT_TRUE(idle.closed_by_peer());
  EXPECT_FALSE(fs::exists(fs::symlink_status(socket_path_)));
  EXPECT_THROW(line_client{socket_path_}, boost::system::system_error);
  // The handler finishes afterwards; its reply has nowhere to go.
  release_slow_calls();
  stop_bridge();  // a second stop() returns at once
}

TEST_F(tool_bridge_test, a_run_closed_while_its_handler_runs_still_gets_its_reply) {
  auto run = open_run();
  line_client c(socket_path_);
  auto pending = std::async(std::launch::async, [&] { return c.ask(call_request(run.token(), "slow", {})); });
  log_.slow_entered.get_future().wait();
  run.close();
  release_slow_calls();
  auto reply = pending.get();
  ASSERT_TRUE(reply.is_object()) << reply;
  EXPECT_EQ(reply.at("ok"), true);
  EXPECT_EQ(reply.at("content"), "slow done");
}

TEST_F(tool_bridge_test, the_socket_is_0600_in_a_0700_directory) {
  struct stat st {};
  ASSERT_EQ(::stat(socket_path_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777U, 0600U);
  ASSERT_EQ(::stat(socket_path_.parent_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777U, 0700U);
}

// The bridge's descriptors are the sockets named by its path (the listener
// and, on Linux, every connection it accepted).
TEST_F(tool_bridge_test, the_bridge_descriptors_are_close_on_exec) {
  auto run = open_run();
  line_client c(socket_path_);
  ASSERT_EQ(c.ask(list_request(run.token())).at("ok"), true);
  int seen = 0;
  for (const auto& entry : fs::directory_iterator("/proc/self/fd")) {
    const int fd = std::stoi(entry.path().filename().string());
    sockaddr_un addr{};
    socklen_t len = sizeof addr;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0 || addr.sun_family != AF_UNIX) continue;
    if (len <= offsetof(sockaddr_un, sun_path) || socket_path_.string() != addr.sun_path) continue;
    ++seen;
    EXPECT_NE(::fcntl(fd, F_GETFD) & FD_CLOEXEC, 0) << "fd " << fd;
  }
  EXPECT_GE(seen, 2);  // the listener and the accepted connection
}

class bridge_start_test : public ::testing::Test {
 protected:
  result<void> start_at(const fs::path& path) {
    bridge_ = std::make_unique<tool_bridge>(io_.executor(), path);
    return bridge_->start();
  }
  void TearDown() override {
    if (bridge_) asio::co_spawn(io_.executor(), bridge_->stop(), asio::use_future).get();
    io_.join();
  }
  temp_dir dir_;
  running_context io_;
  std::unique_ptr<tool_bridge> bridge_;
};

TEST_F(bridge_start_test, a_stale_socket_file_is_replaced) {
  const auto path = dir_.path() / "tools.sock";
  {  // a socket file whose process is gone
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strcpy(addr.sun_path, path.c_str());
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ::close(fd);
  }
  ASSERT_TRUE(fs::is_socket(path));
  auto started = start_at(path);
  ASSERT_TRUE(started) << started.error().describe();
  line_client c(path);
  EXPECT_EQ(c.ask(list_request("x")).at("error"), "unknown run token");
}

TEST_F(bridge_start_test, a_live_socket_is_not_taken_over) {
  const auto path = dir_.path() / "tools.sock";
  ASSERT_TRUE(start_at(path));
  tool_bridge second(io_.executor(), path);
  auto started = second.start();
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error(), agent_errc::address_in_use);
  line_client c(path);  // the first still serves
  EXPECT_EQ(c.ask(list_request("x")).at("ok"), false);
}

TEST_F(bridge_start_test, a_file_that_is_not_a_socket_is_left_alone) {
  const auto path = dir_.path() / "tools.sock";
  std::ofstream(path) << "mine";
  auto started = start_at(path);
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error(), agent_errc::not_a_socket);
  EXPECT_NE(started.error().message.find(path.string()), std::string::npos);
  EXPECT_TRUE(fs::is_regular_file(path));
  bridge_.reset();
}

TEST_F(bridge_start_test, a_path_too_long_for_sun_path_is_an_error_naming_it) {
  const auto path = dir_.path() / std::string(sizeof(sockaddr_un::sun_path), 'p') / "tools.sock";
  auto started = start_at(path);
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error(), agent_errc::socket_path_too_long);
  EXPECT_NE(started.error().message.find(path.string()), std::string::npos);
  bridge_.reset();
}

TEST_F(bridge_start_test, stop_removes_the_socket_file) {
  const auto path = dir_.path() / "tools.sock";
  ASSERT_TRUE(start_at(path));
  ASSERT_TRUE(fs::is_socket(path));
  asio::co_spawn(io_.executor(), bridge_->stop(), asio::use_future).get();
  EXPECT_FALSE(fs::exists(fs::symlink_status(path)));
}

}  // namespace
}  // namespace tether::runtime::agent
