// Durability of acknowledged work through the real binaries (docs/architecture.md §4,
// §10): SIGKILL at the worst moments, a second server on one data
// directory, a start that cannot bind its port, and the data directory's
// file modes.
//
// TETHER_STRAND_ROUNDS (default 50) sets the admit-then-SIGKILL loop's
// rounds; TETHER_API_CRASH_ROUNDS (default 12; `make e2e` runs 100) and
// TETHER_API_CRASH_SEED the random-SIGKILL driver's.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include <gtest/gtest.h>

#include "server/harness.h"

namespace tether::e2e {
namespace {

namespace json = boost::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoi(v) : fallback;
}

std::size_t count_messages(const json::array& msgs, std::string_view role, std::string_view text) {
  std::size_t n = 0;
  for (const auto& m : msgs)
    if (m.at("role").as_string() == role && m.at("text").as_string() == text) ++n;
  return n;
}

bool has_restart_notice(const json::array& msgs) {
  for (const auto& m : msgs)
    if (m.at("role").as_string() == "synthetic" &&
        std::string_view(m.at("text").as_string()).find("restarted") != std::string_view::npos)
      return true;
  return false;
}

std::size_t restart_notices(const json::array& msgs) {
  std::size_t n = 0;
  for (const auto& m : msgs)
    if (m.at("role").as_string() == "synthetic") ++n;
  return n;
}

// POST an input with a client-chosen id; the status (0: no response, the
// server died first).
unsigned post_input(cluster& c, const std::string& s, const std::string& id, const std::string& text,
                    const std::string& delivery) {
  json::object body;
  body["id"] = id;
  body["text"] = text;
  body["delivery"] = delivery;
  try {
    return c.call("POST", "/v1/sessions/" + s + "/inputs", body).status;
  } catch (const std::exception&) {
    return 0;
  }
}

void wait_tool_running(cluster& c, const std::string& s) {
  c.wait_for("/v1/sessions/" + s + "/messages", [](const json::value& v) {
    for (const auto& m : v.at("messages").as_array())
      if (m.at("role").as_string() == "assistant")
        for (const auto& call : m.at("tool_calls").as_array())
          if (call.at("status").as_string() == "running") return true;
    return false;
  });
}

// ---- item: an acknowledged input that no one runs ----

TEST(Durability, AnInputAcknowledgedJustBeforeASigkillIsAnsweredAfterTheRestart) {
  const int rounds = env_int("TETHER_STRAND_ROUNDS", 50);
  cluster c;
  int stranded = 0;
  int ran = 0;
  std::string first;
  for (int round = 0; round < rounds; ++round, ++ran) {
    // A new session each round: a later admission must not be what wakes it.
    const auto s = c.create_session();
    const std::string marker = "answered-" + std::to_string(round);
    c.send(s, "Reply with exactly: " + marker, round % 2 == 0 ? "queue" : "steer");  // 202 is back
    c.kill_server(SIGKILL);
    c.start_server();
    try {
      c.wait_idle(s, 15s);
    } catch (const std::exception& e) {
      if (first.empty()) first = e.what();
    }
    const auto msgs = c.messages(s);
    if (count_messages(msgs, "assistant", marker) != 1) {
      ++stranded;
      if (stranded >= 5) {
        ++ran;
        break;  // enough to know: do not wait out every round
      }
    }
  }
  EXPECT_EQ(stranded, 0) << stranded << " of " << ran
                         << " inputs acknowledged with 202 were never answered (first: " << first << ")";
}

// ---- item: two servers on one data directory ----

TEST(Durability, ASecondServerOnTheDataDirectoryIsRefusedAndTheFirstOneRunsOn) {
  cluster c;
  const auto s = c.create_session();
  c.send(s, "Run: sleep 3\nReply with exactly: the first server finished");
  wait_tool_running(c, s);

  const auto second = run_to_exit(c.serve_argv("127.0.0.1:0"), c.dir() / "second-serve.log", 20s);
  EXPECT_EQ(second.status, 5) << second.log;
  EXPECT_NE(second.log.find((c.dir() / "data").string()), std::string::npos) << second.log;
  EXPECT_NE(second.log.find("in use by another Tether process"), std::string::npos) << second.log;

  // `tether run` on the same directory is refused the same way.
  const auto run = run_to_exit({tether_binary(), "run", "--data", (c.dir() / "data").string(), "--config",
                                (c.dir() / "tether.toml").string(), "Reply with exactly: intruder"},
                               c.dir() / "run.log", 20s);
  EXPECT_EQ(run.status, 5) << run.log;

  // The first server's turn was not touched: its tool call finished, no
  // restart notice, one execution that succeeded.
  c.wait_idle(s, 30s);
  const auto msgs = c.messages(s);
  EXPECT_FALSE(has_restart_notice(msgs)) << json::serialize(msgs);
  EXPECT_EQ(count_messages(msgs, "assistant", "the first server finished"), 1U) << json::serialize(msgs);
  EXPECT_EQ(count_messages(msgs, "assistant", "intruder"), 0U);
  for (const auto& m : msgs) {
    if (m.at("role").as_string() != "assistant") continue;
    for (const auto& call : m.at("tool_calls").as_array()) {
      EXPECT_EQ(call.at("status").as_string(), "succeeded") << json::serialize(call);
    }
  }
  const auto exes = c.executions(s);
  ASSERT_EQ(exes.size(), 1U);
  EXPECT_EQ(exes[0].at("outcome").as_string(), "succeeded");
}

// A listening socket on a free loopback port; closed on destruction.
class held_port {
 public:
  held_port() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 4) != 0)
      throw std::runtime_error("cannot hold a port");
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
  }
  ~held_port() { ::close(fd_); }
  held_port(const held_port&) = delete;
  held_port& operator=(const held_port&) = delete;
  [[nodiscard]] unsigned short port() const { return port_; }

 private:
  int fd_ = -1;
  unsigned short port_ = 0;
};

TEST(Durability, AStartThatCannotBindClaimsNothingAndSpendsNoRestartAttempt) {
  cluster c;
  const auto s = c.create_session();
  c.send(s, "Run: sleep 2\nReply with exactly: finished after one restart");
  wait_tool_running(c, s);
  c.kill_server(SIGKILL);

  {
    held_port held;  // what a supervisor with Restart=always meets
    const std::string listen = "127.0.0.1:" + std::to_string(held.port());
    for (int attempt = 0; attempt < 4; ++attempt) {
      const auto r = run_to_exit(c.serve_argv(listen), c.dir() / ("held-" + std::to_string(attempt) + ".log"), 20s);
      EXPECT_EQ(r.status, 7) << "the address in use: " << r.log;
      EXPECT_EQ(r.log.find("recovery took over"), std::string::npos) << r.log;
    }
  }

  c.start_server();
  c.wait_idle(s, 60s);
  const auto msgs = c.messages(s);
  EXPECT_EQ(restart_notices(msgs), 1U) << json::serialize(msgs);
  EXPECT_EQ(count_messages(msgs, "assistant", "finished after one restart"), 1U) << json::serialize(msgs);
  const auto exes = c.executions(s);
  ASSERT_EQ(exes.size(), 1U);
  EXPECT_EQ(exes[0].at("outcome").as_string(), "succeeded");
  // One takeover: one execution.recovered, at attempt 1.
  auto events = c.call("GET", "/v1/sessions/" + s + "/events?limit=10000");
  ASSERT_EQ(events.status, 200u) << events.body;
  std::vector<std::int64_t> attempts;
  for (const auto& e : events.json.at("events").as_array())
    if (e.at("type").as_string() == "execution.recovered") attempts.push_back(e.at("data").at("attempt").as_int64());
  EXPECT_EQ(attempts, std::vector<std::int64_t>{1});
}

// ---- item: the data directory is private ----

mode_t mode_of(const fs::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return 07777;
  return st.st_mode & 07777U;
}

TEST(Durability, TheDataDirectoryAndEverythingInItArePrivateToTheUser) {
  cluster c;
  const auto s = c.create_session();
  c.send(s, "Run: seq 1 40000\nReply with exactly: spilled");  // a large output is spilled to a file
  c.wait_idle(s);
  const fs::path data = c.dir() / "data";
  EXPECT_EQ(mode_of(data), 0700U);
  std::size_t files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(data)) {
    if (entry.is_symlink()) continue;
    const auto m = mode_of(entry.path());
    if (entry.is_directory()) {
      EXPECT_EQ(m & 077U, 0U) << entry.path() << " is " << std::oct << m;
    } else {
      ++files;
      EXPECT_EQ(m & 077U, 0U) << entry.path() << " is " << std::oct << m;
    }
  }
  for (const char* name : {"tether.db", "token", "lock"}) EXPECT_EQ(mode_of(data / name), 0600U) << name;
  EXPECT_GE(files, 3U);

  // A directory left readable by others (an older Tether, a careless
  // copy) is tightened at the next start, with a warning.
  c.kill_server(SIGTERM);
  ::chmod(data.c_str(), 0755);
  ::chmod((data / "tether.db").c_str(), 0644);
  c.start_server();
  EXPECT_EQ(mode_of(data), 0700U);
  EXPECT_EQ(mode_of(data / "tether.db"), 0600U);
  std::ifstream log(c.dir() / "serve-1.log");
  const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("readable by others"), std::string::npos) << text;
}

// ---- the proof: random SIGKILLs under load, through the API ----

// One input a driver means to have answered exactly once.
struct planned {
  std::string session;
  std::string id;
  std::string marker;
  std::string delivery;
  bool acknowledged = false;
};

TEST(ApiDurability, EveryAcknowledgedInputIsAnsweredExactlyOnceAcrossRandomSigkills) {
  const int rounds = env_int("TETHER_API_CRASH_ROUNDS", 12);
  const char* seed_env = std::getenv("TETHER_API_CRASH_SEED");
  const auto seed = seed_env != nullptr ? std::strtoull(seed_env, nullptr, 10) : std::random_device{}();
  std::printf("api crash test: %d rounds, TETHER_API_CRASH_SEED=%llu\n", rounds, static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  constexpr int sessions = 4;
  constexpr int per_round = 6;  // inputs each driver tries to admit per round

  cluster c;
  std::vector<std::string> ids;
  for (int i = 0; i < sessions; ++i) ids.push_back(c.create_session());
  std::vector<planned> all;
  std::mutex all_mu;
  std::size_t retried = 0;
  const auto started = steady::now();

  for (int round = 0; round < rounds; ++round) {
    // Drivers: one per session, inputs back to back until the server dies.
    // Every other round the kill comes right after a 202 of session 0 (its
    // k-th input this round, k random in 1..3), the worst moment for an
    // input whose drain has not started; otherwise after a random delay.
    std::atomic<bool> dead{false};
    std::atomic<bool> trigger{false};
    const bool on_ack = round % 2 == 1;
    const int trigger_at = std::uniform_int_distribution<int>(0, 2)(rng);
    std::vector<std::thread> drivers;
    for (int k = 0; k < sessions; ++k) {
      drivers.emplace_back([&, k] {
        for (int n = 0; n < per_round && !dead; ++n) {
          planned p;
          p.session = ids[static_cast<std::size_t>(k)];
          p.id = "msg_r" + std::to_string(round) + "s" + std::to_string(k) + "n" + std::to_string(n);
          p.marker = "mark-" + p.id;
          p.delivery = "queue";  // one turn per input: each is answered on its own
          std::size_t at = 0;
          {
            std::lock_guard lock(all_mu);
            all.push_back(p);
            at = all.size() - 1;
          }
          const unsigned status = post_input(c, p.session, p.id, "Reply with exactly: " + p.marker, p.delivery);
          if (status == 202 || status == 200) {
            {
              std::lock_guard lock(all_mu);
              all[at].acknowledged = true;
            }
            if (on_ack && k == 0 && n == trigger_at) {
              trigger = true;
              return;
            }
          } else if (status != 0) {
            ADD_FAILURE() << p.id << ": HTTP " << status;
          } else {
            return;  // the server is gone; the main thread retries after the restart
          }
        }
      });
    }
    if (on_ack) {
      const auto limit = steady::now() + 10s;
      while (!trigger && steady::now() < limit) std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(0, 250)(rng)));
    }
    c.server().signal(SIGKILL);
    dead = true;
    c.server().wait();
    for (auto& d : drivers) d.join();
    c.start_server();
    // Whatever was not acknowledged is sent again, exactly: same id, text
    // and delivery. Admitted before the kill: 200 and nothing new; not
    // admitted: 202 now.
    for (auto& p : all) {
      if (p.acknowledged) continue;
      const unsigned status = post_input(c, p.session, p.id, "Reply with exactly: " + p.marker, p.delivery);
      ASSERT_TRUE(status == 200 || status == 202) << p.id << ": HTTP " << status;
      p.acknowledged = true;
      ++retried;
    }
    for (const auto& s : ids) c.wait_idle(s, 60s);
  }

  // Every acknowledged input: its prompt once in the transcript, its answer once.
  std::size_t lost = 0;
  std::size_t duplicated = 0;
  std::map<std::string, json::array> transcripts;
  for (const auto& s : ids) transcripts[s] = c.messages(s);
  for (const auto& p : all) {
    const auto& msgs = transcripts[p.session];
    const auto prompts = count_messages(msgs, "user", "Reply with exactly: " + p.marker);
    const auto answers = count_messages(msgs, "assistant", p.marker);
    if (prompts == 0 || answers == 0) {
      ++lost;
      ADD_FAILURE() << p.id << " lost: " << prompts << " prompt(s), " << answers << " answer(s)";
    } else if (prompts > 1 || answers > 1) {
      ++duplicated;
      ADD_FAILURE() << p.id << " duplicated: " << prompts << " prompt(s), " << answers << " answer(s)";
    }
  }
  const double secs = std::chrono::duration<double>(steady::now() - started).count();
  std::printf(
      "api crash test: %d rounds in %.1f s; %zu acknowledged inputs (%zu retried after a kill); "
      "%zu lost, %zu duplicated\n",
      rounds, secs, all.size(), retried, lost, duplicated);
  EXPECT_EQ(lost, 0U);
  EXPECT_EQ(duplicated, 0U);
  EXPECT_GT(all.size(), static_cast<std::size_t>(rounds));
}

}  // namespace
}  // namespace tether::e2e
