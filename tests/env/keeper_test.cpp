// The keeper of warm leases (src/env/keeper.h) over the SSH kind against a
// real sshd: a session's next turn within keep_warm takes the same lease
// with no acquire; an idle one is stopped (never destroyed) and resumed by
// the next take; one lost while warm is acquired again; one given back
// broken is released at once; stop() releases what is warm.
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/files.h"
#include "support/leases.h"

#include "env/errors.h"
#include "env/keeper.h"
#include "env/ssh/ssh.h"
#include "support/sshd.h"

namespace tether::env {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// The real SSH environment, with its acquire() calls counted.
class counted final : public environment {
 public:
  explicit counted(std::unique_ptr<environment> e) : e_(std::move(e)) {}
  const std::string& name() const override { return e_->name(); }
  std::string_view kind() const override { return e_->kind(); }
  result<std::unique_ptr<lease>> acquire(const lease_request& r) override {
    ++acquires;
    return e_->acquire(r);
  }
  result<void> release(lease& l, release_mode m) override { return e_->release(l, m); }
  result<probe_report> probe(const std::vector<std::string>& programs) override { return e_->probe(programs); }
  int acquires = 0;

 private:
  std::unique_ptr<environment> e_;
};

// What on_released reported, and a wait for the next report.
struct releases {
  struct one {
    std::string key, provider_id, reason;
    bool ok;
  };
  std::mutex m;
  std::condition_variable cv;
  std::vector<one> seen;
  keeper_options options(std::chrono::milliseconds keep_warm) {
    return {.keep_warm = keep_warm,
            .on_released = [this](const std::string& key, const std::string& id, std::string_view reason,
                                  const result<void>& r) {
              std::lock_guard lock(m);
              seen.push_back({key, id, std::string(reason), static_cast<bool>(r)});
              cv.notify_all();
            }};
  }
  one await(std::size_t n) {  // the n-th report (1-based), once it came
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return seen.size() >= n; });
    return seen[n - 1];
  }
  std::size_t count() {
    std::lock_guard lock(m);
    return seen.size();
  }
};

class Keeper : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = test::sshd::start();
    ASSERT_TRUE(s) << s.error().describe();
    server = std::move(*s);
    auto e = ssh::make_environment(server->options());
    ASSERT_TRUE(e) << e.error().describe();
    env = std::make_unique<counted>(std::move(*e));
  }
  std::unique_ptr<test::sshd> server;
  std::unique_ptr<counted> env;
  releases released;
};

TEST_F(Keeper, TheNextTurnWithinKeepWarmTakesTheSameLeaseWithoutAnAcquire) {
  keeper k(*env, released.options(1h));
  std::string id;
  {
    auto first = k.take({.key = "session-w", .labels = {{"session", "session-w"}}});
    ASSERT_TRUE(first) << first.error().describe();
    EXPECT_EQ(first->outcome(), lease_outcome::created);
    EXPECT_FALSE(first->warm());
    id = first->get().provider_id();
    EXPECT_EQ(test::run_in(first->get(), {"sh", "-c", "echo T1 >> log"}).status.code, 0);
  }
  EXPECT_EQ(k.warm_count(), 1U);
  for (const char* line : {"T2", "T3"}) {
    auto next = k.take({.key = "session-w"});
    ASSERT_TRUE(next) << next.error().describe();
    EXPECT_TRUE(next->warm());
    EXPECT_EQ(next->outcome(), lease_outcome::resumed);
    EXPECT_EQ(next->get().provider_id(), id);
    EXPECT_EQ(test::run_in(next->get(), {"sh", "-c", std::string("echo ") + line + " >> log"}).status.code, 0);
    auto again = k.take({.key = "session-w"});  // one turn at a time
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error(), env_errc::invalid);
  }
  EXPECT_EQ(env->acquires, 1);
  EXPECT_EQ(released.count(), 0U);
  auto remote = server->host_path("/home/agent/leases/" + provider_name("session-w") + "/workspace/log");
  EXPECT_EQ(test::slurp(remote), "T1\nT2\nT3\n");
  k.stop();
  const auto r = released.await(1);
  EXPECT_EQ(r.reason, "shutdown");
  EXPECT_EQ(r.provider_id, id);
  EXPECT_TRUE(fs::exists(remote));  // stopped, not destroyed
}

TEST_F(Keeper, AnIdleLeaseIsStoppedThenTheNextTakeResumesIt) {
  keeper k(*env, released.options(50ms));
  std::string id;
  {
    auto first = k.take({.key = "session-i"});
    ASSERT_TRUE(first) << first.error().describe();
    id = first->get().provider_id();
  }
  const auto r = released.await(1);
  EXPECT_EQ(r.reason, "idle");
  EXPECT_EQ(r.key, "session-i");
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(k.warm_count(), 0U);
  auto next = k.take({.key = "session-i"});
  ASSERT_TRUE(next) << next.error().describe();
  EXPECT_FALSE(next->warm());
  EXPECT_EQ(next->outcome(), lease_outcome::resumed);
  EXPECT_EQ(next->get().provider_id(), id);
  EXPECT_EQ(env->acquires, 2);
}

TEST_F(Keeper, ALeaseLostWhileWarmIsReleasedAndAcquiredAgainNamingIt) {
  keeper k(*env, released.options(1h));
  std::string id;
  {
    auto first = k.take({.key = "session-l"});
    ASSERT_TRUE(first) << first.error().describe();
    id = first->get().provider_id();
  }
  fs::remove_all(server->host_path("/home/agent/leases/" + provider_name("session-l")));
  auto next = k.take({.key = "session-l"});
  ASSERT_TRUE(next) << next.error().describe();
  EXPECT_FALSE(next->warm());
  EXPECT_EQ(next->outcome(), lease_outcome::replaced);
  const auto r = released.await(1);
  EXPECT_EQ(r.reason, "lost");
  EXPECT_EQ(r.provider_id, id);
  EXPECT_EQ(env->acquires, 2);
}

TEST_F(Keeper, ALeaseGivenBackBrokenIsReleasedAtOnce) {
  keeper k(*env, released.options(1h));
  {
    auto first = k.take({.key = "session-b"});
    ASSERT_TRUE(first) << first.error().describe();
    first->broken();
  }
  EXPECT_EQ(released.await(1).reason, "broken");  // given back on this thread: done already
  EXPECT_EQ(k.warm_count(), 0U);
  auto next = k.take({.key = "session-b"});
  ASSERT_TRUE(next);
  EXPECT_FALSE(next->warm());
  EXPECT_EQ(env->acquires, 2);
}

TEST_F(Keeper, AFailedAcquireLeavesTheKeyFreeAndAfterStopNothingIsTaken) {
  keeper k(*env, released.options(1h));
  server->kill();
  auto down = k.take({.key = "session-f"});
  ASSERT_FALSE(down);
  EXPECT_EQ(down.error(), env_errc::unreachable) << down.error().describe();
  ASSERT_TRUE(server->restart());
  auto up = k.take({.key = "session-f"});
  ASSERT_TRUE(up) << up.error().describe();
  EXPECT_EQ(up->outcome(), lease_outcome::created);
  k.stop();
  EXPECT_EQ(released.count(), 0U);  // held: released when given back
  auto after = k.take({.key = "session-g"});
  ASSERT_FALSE(after);
  EXPECT_EQ(after.error(), env_errc::invalid);
}

}  // namespace
}  // namespace tether::env
