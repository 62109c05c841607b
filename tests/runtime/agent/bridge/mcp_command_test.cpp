// `tether mcp` as an agent runs it: the real binary on a pipe, against a
// tool bridge in this process.
#include "runtime/agent/bridge/tool_bridge.h"

#include <future>
#include <memory>
#include <mutex>
#include <vector>

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include "process/child.h"
#include "runtime/agent/agent_test_support.h"
#include "support/run.h"

#ifndef TETHER_BINARY
#error "TETHER_BINARY must name the built tether binary"
#endif

namespace tether::runtime::agent {
namespace {

using namespace test;  // NOLINT(google-build-using-namespace)
using tether::test::run_sync;

constexpr process::line_limits reply_limits{.max_bytes = 8U << 20U};

// The next line of `which` within `d`; nullopt at EOF, on error or when `d` passed.
asio::awaitable<std::optional<std::string>> line_within(process::child* c, process::stream which,
                                                        std::chrono::milliseconds d) {
  using namespace asio::experimental::awaitable_operators;  // NOLINT(google-build-using-namespace)
  asio::steady_timer timer(co_await asio::this_coro::executor, d);
  auto got = co_await (c->read_line(which, reply_limits) || timer.async_wait(asio::use_awaitable));
  if (got.index() != 0) co_return std::nullopt;
  auto& line = std::get<0>(got);
  if (!line || !*line) co_return std::nullopt;
  co_return std::move(**line);
}

// The handler: echo says back its arguments; fail answers with is_error.
asio::awaitable<tool_reply> handle_call(std::vector<json::value>* seen, std::mutex* mu, std::string tool,
                                        json::value arguments) {
  {
    std::lock_guard lock(*mu);
    seen->push_back(arguments);
  }
  if (tool == "fail") co_return tool_reply{"it broke", true};
  co_return tool_reply{"echo: " + json::serialize(arguments), false};
}

tool_spec echo_spec() {
  return {"echo", "Says back its arguments.",
          json::object{{"type", "object"}, {"properties", {{"text", {{"type", "string"}}}}}, {"required", {"text"}}}};
}

// One `tether mcp` process; it is ended (EOF, then a kill if it lingers)
// when the object goes.
class mcp_process {
 public:
  mcp_process(asio::io_context& io, std::vector<std::string> env) : io_(io) {
    process::spawn_options o;
    o.argv = {TETHER_BINARY, "mcp"};
    o.env = std::move(env);
    o.env.emplace_back("TETHER_LOG=warn");
    o.stdin_mode = process::input::pipe;
    o.grace = 1s;
    auto c = process::child::start(io.get_executor(), o);
    if (!c) throw std::runtime_error(c.error().describe());
    child_ = std::move(*c);
  }
  ~mcp_process() {
    if (!child_->status()) run_sync(io_, child_->stop());
  }
  mcp_process(const mcp_process&) = delete;
  mcp_process& operator=(const mcp_process&) = delete;

  void send(const std::string& line) {
    auto w = run_sync(io_, child_->write(line + "\n"));
    ASSERT_TRUE(w) << w.error().describe();
  }
  void send(const json::value& message) { send(json::serialize(message)); }
  // The next message on stdout, or null when none came within `d`.
  json::value next(std::chrono::milliseconds d = 10s) {
    auto line = run_sync(io_, line_within(child_.get(), process::stream::out, d));
    if (!line) return nullptr;
    boost::system::error_code ec;
    auto v = json::parse(*line, ec);
    EXPECT_FALSE(ec) << "not JSON on stdout: " << *line;
    return v;
  }
  json::value ask(const json::value& request) {
    send(request);
    return next();
  }
  std::optional<std::string> stderr_line() {
    return run_sync(io_, line_within(child_.get(), process::stream::err, 10s));
  }
  // Closes stdin and returns how the process ended (killed after 10 s).
  process::exit_status finish() {
    child_->close_stdin();
    if (!run_sync(io_, child_->wait_exit(std::chrono::steady_clock::now() + 10s))) {
      ADD_FAILURE() << "tether mcp did not exit at EOF of stdin";
      return run_sync(io_, child_->stop());
    }
    return child_->reap();
  }

 private:
  asio::io_context& io_;
  std::unique_ptr<process::child> child_;
};

json::object request(int id, std::string method, json::object params = {}) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", std::move(method)}, {"params", std::move(params)}};
}

class mcp_command_test : public ::testing::Test {
 protected:
  void SetUp() override {
    bridge_ = std::make_unique<tool_bridge>(bridge_io_.executor(), dir_.path() / "run" / "tools.sock");
    auto started = bridge_->start();
    ASSERT_TRUE(started) << started.error().describe();
    run_ = bridge_->open(turn_.executor(), {echo_spec(), {"fail", "Always fails.", json::object{{"type", "object"}}}},
                         [seen = &seen_, mu = &mu_](std::string tool, json::value arguments) {
                           return handle_call(seen, mu, std::move(tool), std::move(arguments));
                         });
  }
  void TearDown() override {
    run_.close();
    asio::co_spawn(bridge_io_.executor(), bridge_->stop(), asio::use_future).get();
    turn_.join();
    bridge_io_.join();
  }
  std::vector<std::string> env(const std::string& token) {
    return {"TETHER_TOOLS_SOCKET=" + bridge_->socket_path().string(), "TETHER_RUN_TOKEN=" + token};
  }
  std::vector<std::string> env() { return env(run_.token()); }

  temp_dir dir_;
  running_context bridge_io_;
  running_context turn_;
  std::unique_ptr<tool_bridge> bridge_;
  run_ticket run_;
  std::mutex mu_;
  std::vector<json::value> seen_;
  asio::io_context io_;  // the child's pipes, driven by run_sync on the test's thread
};

TEST_F(mcp_command_test, initialize_then_tools_list_then_tools_call_round_trip) {
  mcp_process mcp(io_, env());
  auto init = mcp.ask(request(1, "initialize",
                              {{"protocolVersion", "2025-03-26"},
                               {"capabilities", json::object()},
                               {"clientInfo", {{"name", "test"}, {"version", "1"}}}}));
  ASSERT_TRUE(init.is_object()) << init;
  EXPECT_EQ(init.at("jsonrpc"), "2.0");
  EXPECT_EQ(init.at("id"), 1);
  EXPECT_EQ(init.at("result").at("protocolVersion"), "2025-03-26");
  EXPECT_EQ(init.at("result").at("capabilities"), (json::object{{"tools", json::object()}}));
  EXPECT_EQ(init.at("result").at("serverInfo").at("name"), "tether");
  EXPECT_TRUE(init.at("result").at("serverInfo").at("version").is_string());
  mcp.send(json::object{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});

  auto listed = mcp.ask(request(2, "tools/list"));
  ASSERT_TRUE(listed.is_object()) << listed;
  EXPECT_EQ(listed.at("id"), 2);  // the notification got no reply: this is the next line
  const auto& tools = listed.at("result").at("tools").as_array();
  ASSERT_EQ(tools.size(), 2U);
  EXPECT_EQ(tools[0].at("name"), "echo");
  EXPECT_EQ(tools[0].at("description"), "Says back its arguments.");
  EXPECT_EQ(tools[0].at("inputSchema"), echo_spec().input_schema);
  EXPECT_EQ(tools[1].at("name"), "fail");

  auto called = mcp.ask(request(3, "tools/call", {{"name", "echo"}, {"arguments", {{"text", "hi"}}}}));
  ASSERT_TRUE(called.is_object()) << called;
  EXPECT_EQ(called.at("id"), 3);
  EXPECT_EQ(called.at("result"),
            (json::object{{"content", json::array{json::object{{"type", "text"}, {"text", "echo: {\"text\":\"hi\"}"}}}},
                          {"isError", false}}));
  {
    std::lock_guard lock(mu_);
    ASSERT_EQ(seen_.size(), 1U);
    EXPECT_EQ(seen_[0], (json::object{{"text", "hi"}}));
  }
  auto failed = mcp.ask(request(4, "tools/call", {{"name", "fail"}}));  // arguments may be left out
  ASSERT_TRUE(failed.is_object()) << failed;
  EXPECT_EQ(failed.at("result").at("isError"), true);
  EXPECT_EQ(failed.at("result").at("content").at(0).at("text"), "it broke");
  EXPECT_EQ(mcp.ask(request(5, "ping")), (json::object{{"jsonrpc", "2.0"}, {"id", 5}, {"result", json::object()}}));
  EXPECT_EQ(mcp.finish().code, 0);
}

TEST_F(mcp_command_test, initialize_answers_an_unknown_protocol_version_with_the_latest) {
  mcp_process mcp(io_, env());
  for (const auto* known : {"2024-11-05", "2025-06-18"}) {
    auto init = mcp.ask(request(1, "initialize", {{"protocolVersion", known}}));
    EXPECT_EQ(init.at("result").at("protocolVersion"), known);
  }
  auto init = mcp.ask(request(2, "initialize", {{"protocolVersion", "1999-01-01"}}));
  EXPECT_EQ(init.at("result").at("protocolVersion"), "2025-06-18");
  auto bare = mcp.ask(json::object{{"jsonrpc", "2.0"}, {"id", "s"}, {"method", "initialize"}});
  EXPECT_EQ(bare.at("id"), "s");
  EXPECT_EQ(bare.at("result").at("protocolVersion"), "2025-06-18");
  EXPECT_EQ(mcp.finish().code, 0);
}

TEST_F(mcp_command_test, a_refused_token_makes_tools_call_an_error_result_and_tools_list_empty) {
  mcp_process mcp(io_, env("0123456789abcdef"));
  auto called = mcp.ask(request(1, "tools/call", {{"name", "echo"}, {"arguments", {{"text", "hi"}}}}));
  ASSERT_TRUE(called.is_object()) << called;
  EXPECT_EQ(called.at("id"), 1);
  EXPECT_EQ(called.at("result").at("isError"), true);
  const std::string text(called.at("result").at("content").at(0).at("text").as_string());
  EXPECT_NE(text.find("unknown run token"), std::string::npos) << text;
  auto listed = mcp.ask(request(2, "tools/list"));
  EXPECT_EQ(listed.at("result"), (json::object{{"tools", json::array()}}));
  auto complaint = mcp.stderr_line();
  ASSERT_TRUE(complaint);
  EXPECT_NE(complaint->find("unknown run token"), std::string::npos) << *complaint;
  EXPECT_TRUE(seen_.empty());
  EXPECT_EQ(mcp.finish().code, 0);
}

TEST_F(mcp_command_test, a_closed_run_and_an_unknown_tool_are_error_results) {
  mcp_process mcp(io_, env());
  auto unknown = mcp.ask(request(1, "tools/call", {{"name", "rm_rf"}, {"arguments", json::object()}}));
  EXPECT_EQ(unknown.at("result").at("isError"), true);
  EXPECT_NE(std::string(unknown.at("result").at("content").at(0).at("text").as_string()).find("rm_rf"),
            std::string::npos);
  run_.close();
  auto closed = mcp.ask(request(2, "tools/call", {{"name", "echo"}, {"arguments", json::object()}}));
  EXPECT_EQ(closed.at("result").at("isError"), true);
  EXPECT_TRUE(seen_.empty());
  EXPECT_EQ(mcp.finish().code, 0);
}

TEST_F(mcp_command_test, an_unknown_method_is_method_not_found) {
  mcp_process mcp(io_, env());
  auto reply = mcp.ask(request(9, "resources/list"));
  ASSERT_TRUE(reply.is_object()) << reply;
  EXPECT_EQ(reply.at("id"), 9);
  EXPECT_EQ(reply.at("error").at("code"), -32601);
  EXPECT_FALSE(reply.as_object().contains("result"));
  // An unknown notification gets nothing: the next line answers the ping.
  mcp.send(json::object{{"jsonrpc", "2.0"}, {"method", "notifications/whatever"}});
  EXPECT_EQ(mcp.ask(request(10, "ping")).at("id"), 10);
  EXPECT_EQ(mcp.finish().code, 0);
}

TEST_F(mcp_command_test, bad_tools_call_params_are_invalid_params) {
  mcp_process mcp(io_, env());
  EXPECT_EQ(mcp.ask(request(1, "tools/call", {{"arguments", json::object()}})).at("error").at("code"), -32602);
  EXPECT_EQ(mcp.ask(request(2, "tools/call", {{"name", "echo"}, {"arguments", "text"}})).at("error").at("code"),
            -32602);
  EXPECT_TRUE(seen_.empty());
  EXPECT_EQ(mcp.finish().code, 0);
}

TEST_F(mcp_command_test, a_malformed_line_is_a_parse_error_with_a_null_id_and_the_server_goes_on) {
  mcp_process mcp(io_, env());
  mcp.send(std::string("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"));
  auto reply = mcp.next();
  ASSERT_TRUE(reply.is_object()) << reply;
  EXPECT_TRUE(reply.at("id").is_null());
  EXPECT_EQ(reply.at("error").at("code"), -32700);
  auto not_object = mcp.ask(json::array{1, 2});
  EXPECT_TRUE(not_object.at("id").is_null());
  EXPECT_EQ(not_object.at("error").at("code"), -32600);
  EXPECT_EQ(mcp.ask(request(2, "ping")).at("id"), 2);
  EXPECT_EQ(mcp.finish().code, 0);
}

TEST_F(mcp_command_test, a_line_over_4_mib_is_refused_and_skipped) {
  mcp_process mcp(io_, env());
  mcp.send("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"pad\":\"" + std::string(5U << 20U, 'x') +
           "\"}}");
  auto refused = mcp.next();
  ASSERT_TRUE(refused.is_object()) << refused;
  EXPECT_TRUE(refused.at("id").is_null());
  EXPECT_EQ(refused.at("error").at("code"), -32600);
  // The rest of the long line was dropped, not read as a message.
  EXPECT_EQ(mcp.ask(request(2, "ping")).at("id"), 2);
  EXPECT_EQ(mcp.finish().code, 0);
}

TEST_F(mcp_command_test, a_stopped_bridge_makes_tools_call_an_error_result) {
  mcp_process mcp(io_, env());
  asio::co_spawn(bridge_io_.executor(), bridge_->stop(), asio::use_future).get();
  auto called = mcp.ask(request(1, "tools/call", {{"name", "echo"}, {"arguments", json::object()}}));
  ASSERT_TRUE(called.is_object()) << called;
  EXPECT_EQ(called.at("result").at("isError"), true);
  EXPECT_EQ(mcp.finish().code, 0);
}

TEST_F(mcp_command_test, a_missing_environment_variable_exits_2_with_the_reason) {
  for (const auto& [env, missing] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{}, "TETHER_TOOLS_SOCKET"},
           {{"TETHER_TOOLS_SOCKET=" + bridge_->socket_path().string()}, "TETHER_RUN_TOKEN"}}) {
    mcp_process mcp(io_, env);
    auto reason = mcp.stderr_line();
    ASSERT_TRUE(reason) << missing;
    EXPECT_NE(reason->find(missing + " is not set"), std::string::npos) << *reason;
    EXPECT_EQ(mcp.next(2s), json::value(nullptr));  // nothing on stdout
    EXPECT_EQ(mcp.finish().code, 2);
  }
}

}  // namespace
}  // namespace tether::runtime::agent
