// A real full disk. `tether serve` runs in a private mount namespace on a
// small tmpfs (unshare -m, then mount -t tmpfs: this needs root, which the
// test machine and CI have; elsewhere the test is skipped). The test reaches
// that tmpfs through /proc/<server>/root, fills it while a turn's tool runs,
// and checks: the failed write makes /v1/health answer 503 degraded, writes
// are refused with 503 storage_unavailable and the metric says so; once the
// space is freed, writes succeed again without a restart, /v1/health is ok,
// and the turn that was running goes on (its tool's result was waiting for
// the store, not lost) and ends.
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "server/harness.h"
#include "process/run_to_end.h"

namespace tether::e2e {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace std::chrono_literals;

const std::string token = "full-disk-test-token-0123456789abcdef";

// Whether this process may mount a tmpfs in a private mount namespace.
bool can_mount_tmpfs(const fs::path& where) {
  if (::geteuid() != 0 || !fs::exists("/usr/bin/unshare")) return false;
  process::spawn_options o;
  o.argv = {"/usr/bin/unshare", "-m", "/bin/sh", "-c", "mount -t tmpfs -o size=1m tmpfs \"$0\"", where.string()};
  o.env = process::inherited_environment();
  auto done = process::run_to_end(std::move(o));
  return done && !done->timed_out && done->status.success();
}

// Polls `fn` every 20 ms until it returns true or `timeout` passes.
template <class F>
bool within(std::chrono::milliseconds timeout, F fn) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (fn()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return fn();
}

// Writes zeros into `file` until the filesystem is full; returns the bytes written.
std::size_t fill(const fs::path& file) {
  std::FILE* f = std::fopen(file.c_str(), "wb");
  if (f == nullptr) return 0;
  std::setvbuf(f, nullptr, _IONBF, 0);
  const std::string chunk(64 * 1024, '\0');
  std::size_t total = 0;
  for (;;) {
    const std::size_t n = std::fwrite(chunk.data(), 1, chunk.size(), f);
    total += n;
    if (n < chunk.size()) break;  // ENOSPC
  }
  std::fclose(f);
  return total;
}

class full_disk : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = fs::temp_directory_path() / ("tether-full-disk-" + std::to_string(rd()));
    mnt_ = dir_ / "mnt";
    fs::create_directories(mnt_);
    if (!can_mount_tmpfs(mnt_)) GTEST_SKIP() << "cannot mount a tmpfs in a private mount namespace (needs root)";

    mock_ = std::make_unique<child>(std::vector<std::string>{tether_binary(), "mock-llm", "--listen", "127.0.0.1:0"},
                                    dir_ / "mock.log");
    const auto line = mock_->wait_line("mock-llm listening on ", 20s);
    const auto mock_port = line.substr(line.rfind(':') + 1);
    std::ofstream cfg(dir_ / "tether.toml");
    cfg << "[profiles.default]\nprovider = \"openai-chat\"\nbase_url = \"http://127.0.0.1:" << mock_port
        << "/v1\"\nmodel = \"scripted\"\n";
    cfg.close();

    // unshare execs sh, which mounts an 8 MiB tmpfs seen only by itself and
    // its children, then execs tether: one pid throughout.
    const std::vector<std::string> argv{
        "/usr/bin/unshare",
        "-m",
        "--propagation",
        "private",
        "sh",
        "-c",
        "mount -t tmpfs -o size=8m tmpfs \"$1\" && exec \"$0\" serve --data \"$1/data\" --config \"$2\" "
        "--listen 127.0.0.1:0",
        tether_binary(),
        mnt_.string(),
        (dir_ / "tether.toml").string()};
    server_ =
        std::make_unique<child>(argv, dir_ / "serve.log",
                                std::map<std::string, std::string>{
                                    {"TETHER_TOKEN", token}, {"NO_PROXY", "127.0.0.1"}, {"no_proxy", "127.0.0.1"}});
    const auto listening = server_->wait_line("listening on ", 20s);
    port_ = static_cast<unsigned short>(std::stoi(listening.substr(listening.rfind(':') + 1)));
    // The tmpfs as this process sees it: through the server's own root.
    disk_ = fs::path("/proc/" + std::to_string(server_->pid()) + "/root") / mnt_.relative_path();
  }

  void TearDown() override {
    if (server_) {
      server_->signal(SIGTERM);
      EXPECT_EQ(server_->wait(), 0) << "the server did not stop cleanly";
    }
    server_.reset();  // its mount namespace, and the tmpfs, go with it
    mock_.reset();
    std::error_code ec;
    if (std::getenv("TETHER_E2E_KEEP") == nullptr) fs::remove_all(dir_, ec);
  }

  http_result call(const std::string& method, const std::string& target, const json::value& body = nullptr) {
    return request(port_, method, target, body.is_null() ? std::string() : json::serialize(body),
                   {{"Authorization", "Bearer " + token}, {"Content-Type", "application/json"}});
  }

  json::object session(const std::string& s) { return call("GET", "/v1/sessions/" + s).json.at("session").as_object(); }

  bool tool_running(const std::string& s) {
    auto r = call("GET", "/v1/sessions/" + s + "/messages");
    if (r.status != 200) return false;
    for (const auto& m : r.json.at("messages").as_array())
      if (m.at("role").as_string() == "assistant")
        for (const auto& c : m.at("tool_calls").as_array())
          if (c.at("status").as_string() == "running") return true;
    return false;
  }

  fs::path dir_;
  fs::path mnt_;
  fs::path disk_;
  std::unique_ptr<child> mock_;
  std::unique_ptr<child> server_;
  unsigned short port_ = 0;
};

TEST_F(full_disk, a_full_disk_degrades_the_server_and_freed_space_brings_it_back_without_a_restart) {
  auto created = call("POST", "/v1/sessions", json::object{});
  ASSERT_EQ(created.status, 201u) << created.body;
  const std::string s(created.json.at("session").at("id").as_string());
  ASSERT_EQ(request(port_, "GET", "/v1/health").status, 200u);

  // The tool waits for a file the test creates once the disk is full.
  auto sent = call("POST", "/v1/sessions/" + s + "/inputs",
                   json::object{{"text", "Run: while [ ! -e go ]; do sleep 0.05; done; echo released"}});
  ASSERT_EQ(sent.status, 202u) << sent.body;
  ASSERT_TRUE(within(30s, [&] { return tool_running(s); })) << "the tool never started";

  const fs::path filler = disk_ / "filler";
  const auto filled = fill(filler);
  EXPECT_GT(filled, 1'000'000u) << "the tmpfs was not where the test looked";
  const fs::path workspace = disk_ / "data" / "workspaces" / s;
  ASSERT_TRUE(fs::is_directory(workspace)) << workspace;
  std::ofstream(workspace / "go").close();  // an empty file needs no data block
  ASSERT_TRUE(fs::exists(workspace / "go"));

  // The tool's result cannot be written.
  http_result health;
  ASSERT_TRUE(within(30s,
                     [&] {
                       health = request(port_, "GET", "/v1/health");
                       return health.status == 503u;
                     }))
      << "health stayed " << health.status << " " << health.body;
  EXPECT_EQ(health.json.at("status").as_string(), "degraded");
  EXPECT_FALSE(health.json.at("reason").as_string().empty());
  EXPECT_GT(health.json.at("since").as_int64(), 0);

  auto refused = call("POST", "/v1/sessions/" + s + "/inputs", json::object{{"text", "Reply with exactly: refused"}});
  EXPECT_EQ(refused.status, 503u) << refused.body;
  EXPECT_EQ(refused.json.at("error").at("code").as_string(), "storage_unavailable") << refused.body;
  const auto metrics = call("GET", "/metrics");
  EXPECT_NE(metrics.body.find("tether_store_degraded 1"), std::string::npos);
  EXPECT_EQ(metrics.body.find("tether_store_write_failures_total 0"), std::string::npos);
  EXPECT_EQ(session(s).at("status").as_string(), "running");

  // Space is back: the server takes writes again on its own, and the turn ends.
  fs::remove(filler);
  ASSERT_TRUE(within(30s,
                     [&] {
                       health = request(port_, "GET", "/v1/health");
                       return health.status == 200u;
                     }))
      << "still " << health.body;
  EXPECT_EQ(health.json.at("status").as_string(), "ok");
  EXPECT_NE(call("GET", "/metrics").body.find("tether_store_degraded 0"), std::string::npos);

  ASSERT_TRUE(within(30s, [&] { return session(s).at("status").as_string() != "running"; }))
      << "the turn stayed running";
  const auto exes = call("GET", "/v1/sessions/" + s + "/executions").json.at("executions").as_array();
  ASSERT_EQ(exes.size(), 1u);
  EXPECT_EQ(exes[0].at("outcome").as_string(), "succeeded") << "the tool's result waited for the store "
                                                            << json::serialize(exes[0]);

  auto again = call("POST", "/v1/sessions/" + s + "/inputs", json::object{{"text", "Reply with exactly: back"}});
  ASSERT_EQ(again.status, 202u) << again.body;
  ASSERT_TRUE(within(30s, [&] {
    const auto o = session(s);
    return o.at("status").as_string() == "idle" && o.at("pending_inputs").as_int64() == 0;
  }));
  const auto after = call("GET", "/v1/sessions/" + s + "/executions").json.at("executions").as_array();
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[1].at("outcome").as_string(), "succeeded") << json::serialize(after[1]);
}

}  // namespace
}  // namespace tether::e2e
