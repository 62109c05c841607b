// A real `tether serve` under a connection flood, and the places a session's
// workspace may be.
#include <poll.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "server/harness.h"
#include "support/loopback.h"

namespace tether::e2e {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

// What the server sent on `fd` until it closed it (or `wait` passed).
std::string received(int fd, std::chrono::milliseconds wait) {
  std::string out;
  char buf[4096];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(wait.count())) <= 0) break;
    const auto n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

TEST(Limits, AFloodOfIdleConnectionsGets503WhileHealthAndATurnStillWork) {
  cluster c({"--max-connections", "40", "--max-connections-per-peer", "30"});
  const auto s = c.create_session();
  std::vector<int> flood;
  for (int i = 0; i < 200; ++i) {
    const int fd = test::connect_loopback(c.port());  // it sends nothing
    ASSERT_GE(fd, 0) << "connection " << i;
    flood.push_back(fd);
  }
  // Everything the flood holds beyond the limits was answered 503 and closed.
  auto health = request(c.port(), "GET", "/v1/health");
  EXPECT_EQ(health.status, 200u) << health.body;
  c.send(s, "Reply with exactly: served through the flood");
  c.wait_idle(s);
  EXPECT_EQ(c.last_answer(s), "served through the flood");

  std::size_t refused = 0;
  for (const int fd : flood) {
    const auto got = received(fd, 0ms);
    if (got.starts_with("HTTP/1.1 503")) ++refused;
    ::close(fd);
  }
  EXPECT_GE(refused, 200u - 30u) << "no more than the per-peer limit stays open";
  auto metrics = c.call_raw("GET", "/metrics", "");
  EXPECT_NE(metrics.body.find("tether_http_connections_refused_total"), std::string::npos);
}

TEST(Limits, AWorkspaceOutsideTheRootsIsRefusedAndNothingIsCreated) {
  cluster c;
  for (const std::string bad : {"/", "/nonexistent-tether-e2e/x", "/proc/self", "/etc"}) {
    auto r = c.call("POST", "/v1/sessions", json::object{{"workspace", bad}});
    EXPECT_EQ(r.status, 400u) << bad << ": " << r.body;
    EXPECT_NE(r.body.find("workspace"), std::string::npos) << r.body;
  }
  EXPECT_FALSE(std::filesystem::exists("/nonexistent-tether-e2e"));

  // Nothing inside the data directory is a workspace a session may name:
  // another session's, an agent's home, run/, workspaces/ itself.
  auto first = c.call("POST", "/v1/sessions", json::object{});
  ASSERT_EQ(first.status, 201u) << first.body;
  const std::string other(first.json.at("session").at("id").as_string());
  const auto data = c.dir() / "data";
  for (const auto& bad : {data / "workspaces" / other, data / "workspaces" / "mine", data / "workspaces",
                          data / "agents" / other / "home", data / "run", data}) {
    auto r = c.call("POST", "/v1/sessions", json::object{{"workspace", bad.string()}});
    EXPECT_EQ(r.status, 400u) << bad << ": " << r.body;
    EXPECT_NE(r.body.find("data directory"), std::string::npos) << r.body;
  }
  EXPECT_FALSE(std::filesystem::exists(data / "workspaces" / "mine"));

  // Naming none, a session gets its own workspaces/<id>, and a turn runs there.
  auto created = c.call("POST", "/v1/sessions", json::object{});
  ASSERT_EQ(created.status, 201u) << created.body;
  const std::string s(created.json.at("session").at("id").as_string());
  c.send(s, "Write file note.txt: inside\nReply with exactly: written");
  c.wait_idle(s);
  EXPECT_EQ(c.last_answer(s), "written");
  EXPECT_TRUE(std::filesystem::exists(data / "workspaces" / s / "note.txt"));
}

}  // namespace
}  // namespace tether::e2e
