// What a tool's process can reach and leave behind, through the real
// binaries: a `tether serve` whose bash tool (driven by the scripted model's
// `Run:`) tries to read the token, the database and the keys, to reach the
// API's port, and to outlive a SIGKILLed server.
#include <signal.h>
#include <unistd.h>

#include <dirent.h>

#include <fstream>
#include <random>
#include <sstream>

#include <gtest/gtest.h>

#include "server/harness.h"

namespace tether::e2e {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace std::chrono_literals;

std::string nonce() {
  std::random_device rd;
  return std::to_string(100000 + rd() % 900000);
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool alive(pid_t pid) {
  const std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  const auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}

// Host processes whose command line contains `tag` (zombies excluded);
// with `comm`, only those whose name is `comm`.
std::vector<pid_t> processes_with(const std::string& tag, const std::string& comm = "") {
  std::vector<pid_t> out;
  DIR* d = ::opendir("/proc");
  if (d == nullptr) return out;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmd = slurp("/proc/" + name + "/cmdline");
    for (auto& c : cmd)
      if (c == '\0') c = ' ';
    const auto pid = static_cast<pid_t>(std::stol(name));
    if (cmd.find(tag) == std::string::npos || !alive(pid)) continue;
    if (!comm.empty() && slurp("/proc/" + name + "/comm") != comm + "\n") continue;
    out.push_back(pid);
  }
  ::closedir(d);
  return out;
}

bool eventually(const std::function<bool()>& pred, std::chrono::seconds limit = 20s) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return pred();
}

// mock-llm plus one `tether serve` with a profile of our own, restartable on
// the same port.
class server_under_test {
 public:
  explicit server_under_test(const std::string& profile_extra, std::map<std::string, std::string> env = {})
      : env_(std::move(env)) {
    std::random_device rd;
    dir_ = fs::temp_directory_path() / ("tether-e2e-sandbox-" + std::to_string(rd()));
    fs::create_directories(dir_);
    mock_ = std::make_unique<child>(std::vector<std::string>{tether_binary(), "mock-llm", "--listen", "127.0.0.1:0"},
                                    dir_ / "mock.log");
    const auto line = mock_->wait_line("mock-llm listening on ", 20s);
    const auto mock_port = line.substr(line.rfind(':') + 1);
    std::ofstream cfg(dir_ / "tether.toml");
    cfg << "[profiles.default]\nprovider = \"openai-chat\"\nbase_url = \"http://127.0.0.1:" << mock_port
        << "/v1\"\nmodel = \"scripted\"\n"
        << profile_extra;
    cfg.close();
    env_["NO_PROXY"] = "127.0.0.1";
    env_["no_proxy"] = "127.0.0.1";
  }
  ~server_under_test() {
    server_.reset();
    mock_.reset();
    std::error_code ec;
    if (std::getenv("TETHER_E2E_KEEP") == nullptr) fs::remove_all(dir_, ec);
  }
  server_under_test(const server_under_test&) = delete;
  server_under_test& operator=(const server_under_test&) = delete;

  // Starts serve on `port` (0: any); throws when it does not listen.
  void start(unsigned short port = 0) {
    server_ = std::make_unique<child>(
        std::vector<std::string>{tether_binary(), "serve", "--data", data().string(), "--config",
                                 (dir_ / "tether.toml").string(), "--listen", "127.0.0.1:" + std::to_string(port)},
        dir_ / ("serve-" + std::to_string(starts_++) + ".log"), env_);
    const auto line = server_->wait_line("listening on ", 20s);
    port_ = static_cast<unsigned short>(std::stoi(line.substr(line.rfind(':') + 1)));
    std::ifstream in(data() / "token");
    std::getline(in, token_);
  }
  void kill() {
    server_->signal(SIGKILL);
    server_->wait();
  }
  [[nodiscard]] fs::path data() const { return dir_ / "data"; }
  [[nodiscard]] pid_t server_pid() const { return server_->pid(); }
  [[nodiscard]] unsigned short port() const { return port_; }
  [[nodiscard]] const std::string& token() const { return token_; }

  http_result call(const std::string& method, const std::string& target, const json::value& body = nullptr) {
    return request(port_, method, target, body.is_null() ? std::string() : json::serialize(body),
                   {{"Authorization", "Bearer " + token_}});
  }
  std::string create_session() {
    auto r = call("POST", "/v1/sessions", json::object{});
    if (r.status != 201) throw std::runtime_error("create session: " + r.body);
    return std::string(r.json.at("session").at("id").as_string());
  }
  void send(const std::string& s, const std::string& text) {
    auto r = call("POST", "/v1/sessions/" + s + "/inputs", json::object{{"text", text}});
    if (r.status != 202) throw std::runtime_error("send: " + r.body);
  }
  // The result of the session's first tool call, once it settled.
  std::string first_tool_result(const std::string& s) {
    std::string out;
    eventually([&] {
      auto r = call("GET", "/v1/sessions/" + s + "/messages");
      if (r.status != 200) return false;
      for (const auto& m : r.json.at("messages").as_array()) {
        if (m.at("role").as_string() != "assistant") continue;
        for (const auto& c : m.at("tool_calls").as_array()) {
          if (c.at("status").as_string() == "running") return false;
          out = std::string(c.at("result").as_string());
          return true;
        }
      }
      return false;
    }, 60s);
    return out;
  }

 private:
  fs::path dir_;
  std::map<std::string, std::string> env_;
  std::unique_ptr<child> mock_;
  std::unique_ptr<child> server_;
  unsigned short port_ = 0;
  std::string token_;
  int starts_ = 0;
};

TEST(Sandbox, ACommandCannotReachTheTokenTheDatabaseThePortOrTheKeys) {
  const std::string key = "pat-" + nonce();
  server_under_test t("api_key_env = \"TETHER_E2E_PAT\"\n",
                      {{"TETHER_E2E_PAT", key}, {"TETHER_E2E_UNRELATED", "unrelated-" + key}});
  t.start();
  const auto s = t.create_session();
  const std::string data = t.data().string();
  t.send(s, "Run: ls /proc/self/fd | tr '\\n' ' '; echo; cat ../../token " + data + "/token; head -c 16 " + data +
                "/tether.db; ls " + data + "; (exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(t.port()) +
                ") && echo CONNECTED; cat /proc/$PPID/environ /proc/1/environ | tr '\\0' '\\n'; env\n"
                "Reply with exactly: done");
  const auto out = t.first_tool_result(s);
  ASSERT_FALSE(out.empty());
  EXPECT_TRUE(out.starts_with("0 1 2 3 \n")) << out;  // stdio, and the fd ls opened
  EXPECT_FALSE(t.token().empty());
  EXPECT_EQ(out.find(t.token()), std::string::npos) << out;
  EXPECT_EQ(out.find("SQLite format"), std::string::npos) << out;
  EXPECT_EQ(out.find("CONNECTED"), std::string::npos) << out;
  EXPECT_EQ(out.find(key), std::string::npos) << out;  // neither the key nor the unrelated variable
  EXPECT_NE(out.find("exit code"), std::string::npos) << out;
}

TEST(Sandbox, ASigkilledServerLeavesNoToolProcessAndItsPortIsFreeAtOnce) {
  server_under_test t("");
  t.start();
  const auto port = t.port();
  const auto s = t.create_session();
  const std::string tag = "sleep 300." + nonce();
  t.send(s, "Run: (" + tag + " & wait) & " + tag + "; wait");
  // The shell's child and grandchild run (in the sandbox's PID namespace).
  ASSERT_TRUE(eventually([&] { return processes_with(tag, "sleep").size() == 2; }));
  t.kill();
  EXPECT_TRUE(eventually([&] { return processes_with(tag).empty(); }));
  t.start(port);  // throws when the port is still held
  EXPECT_EQ(t.port(), port);
}

// /proc/PID/stat field 22.
unsigned long long start_time(pid_t pid) {
  const std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  std::istringstream fields(stat.substr(stat.rfind(')') + 1));
  std::string f;
  for (int n = 3; fields >> f; ++n)
    if (n == 22) return std::stoull(f);
  return 0;
}

TEST(Sandbox, WithoutASandboxTheRestartKillsTheRecordedGroupButNeverAReusedPid) {
  server_under_test t("sandbox = \"off\"\n");
  t.start();
  const auto port = t.port();
  const auto s = t.create_session();
  const std::string tag = "sleep 300." + nonce();
  t.send(s, "Run: (" + tag + " & wait) & " + tag + "; wait");
  ASSERT_TRUE(eventually([&] { return processes_with(tag, "sleep").size() == 2; }));
  const fs::path records = t.data() / "run" / "procs";
  const pid_t dead_server = t.server_pid();
  ASSERT_FALSE(fs::is_empty(records));

  // A process of someone else under a recorded pid: same pid, another start time.
  const std::string other = "sleep 300." + nonce();
  child decoy({"/bin/sh", "-c", "exec " + other}, t.data().parent_path() / "decoy.log");
  ASSERT_TRUE(eventually([&] { return processes_with(other).size() == 1; }));
  std::string boot = slurp("/proc/sys/kernel/random/boot_id");
  boot.erase(boot.find_last_not_of("\n ") + 1);
  {
    std::ofstream rec(records / std::to_string(decoy.pid()));
    rec << "tether-process 1\npid " << decoy.pid() << "\npgid " << decoy.pid() << "\nstart "
        << start_time(decoy.pid()) + 1 << "\nboot " << boot << "\nowner " << dead_server << " 0\n";
  }

  t.kill();
  // Without a sandbox nothing ties them to the server: they survive its death…
  std::this_thread::sleep_for(200ms);
  ASSERT_EQ(processes_with(tag, "sleep").size(), 2U);
  // …until the next start kills the recorded group, and binds the port at once.
  t.start(port);
  EXPECT_EQ(t.port(), port);
  EXPECT_TRUE(eventually([&] { return processes_with(tag).empty(); }));
  EXPECT_TRUE(decoy.running());
  EXPECT_EQ(processes_with(other).size(), 1U);
  EXPECT_FALSE(fs::exists(records / std::to_string(decoy.pid())));
}

}  // namespace
}  // namespace tether::e2e
