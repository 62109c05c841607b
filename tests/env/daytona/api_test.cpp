// The Daytona REST client (src/env/daytona/api.h) against the Daytona fake
// (tests/support/daytona): sandboxes, commands, sessions, files, how each
// failure is classified, and that every route it calls is one Daytona
// publishes (spec-routes.json beside this file).
#include <chrono>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <thread>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "env/daytona/api.h"
#include "support/daytona/fake_daytona.h"
#include "support/paths.h"

namespace tether::env::daytona {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

class DaytonaApi : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(fake.start()); }
  api client() { return api({.api_url = fake.api_url(), .api_key = "fake-daytona-key", .timeout = 30s}); }
  // The command's record once it has an exit code (read until then; the
  // test's limit ends a wait that never comes).
  static session_command finished(api& a, const sandbox_info& s, const std::string& session, const std::string& id) {
    for (;;) {
      auto c = a.command(s, session, id);
      if (!c || c->exit_code) return c ? *c : session_command{};
      std::this_thread::sleep_for(20ms);
    }
  }
  test::daytona::fake_daytona fake;
};

TEST_F(DaytonaApi, ASandboxIsMadeWithQuotaSafeLifecycleFoundByNameAndLabelsStoppedStartedAndDeleted) {
  auto a = client();
  auto s = a.create({.name = "tether-session-1", .labels = {{"tether-key", "session-1"}, {"tether", "1"}}});
  ASSERT_TRUE(s) << s.error().describe();
  EXPECT_EQ(s->state, "started");
  EXPECT_EQ(s->auto_stop, 15);
  EXPECT_EQ(s->auto_archive, 60);
  EXPECT_EQ(s->auto_delete, 7 * 24 * 60);
  ASSERT_TRUE(a.create({.name = "other", .labels = {{"tether-key", "session-2"}}}));

  auto by_name = a.get("tether-session-1");
  ASSERT_TRUE(by_name && *by_name);
  EXPECT_EQ((*by_name)->id, s->id);
  auto labelled = a.list({{"tether-key", "session-1"}});
  ASSERT_TRUE(labelled);
  ASSERT_EQ(labelled->size(), 1U);
  EXPECT_EQ(labelled->front().id, s->id);
  EXPECT_EQ(labelled->front().labels.at("tether"), "1");

  auto stopped = a.stop(s->id);
  ASSERT_TRUE(stopped);
  EXPECT_EQ(stopped->state, "stopped");
  EXPECT_EQ(fake.state_of(s->id), "stopped");
  auto archived = a.archive(s->id);
  ASSERT_TRUE(archived);
  EXPECT_EQ(archived->state, "archived");
  auto started = a.start(s->id);
  ASSERT_TRUE(started);
  EXPECT_EQ(started->state, "started");
  ASSERT_TRUE(a.remove(s->id));
  auto gone = a.get(s->id);
  ASSERT_TRUE(gone);
  EXPECT_FALSE(*gone);
  EXPECT_EQ(fake.sandboxes(), 1U);
}

TEST_F(DaytonaApi, CommandsSessionsAndFilesRunInTheSandbox) {
  auto a = client();
  auto s = a.create({.name = "work"});
  ASSERT_TRUE(s);
  auto r = a.execute(*s, "echo hi; pwd; echo err >&2; exit 2", 30s);
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_EQ(r->exit_code, 2);
  EXPECT_EQ(r->output, "hi\n/home/daytona\nerr\n");

  const std::string bytes = std::string("binary\0bytes\xff", 13);
  ASSERT_TRUE(a.upload(*s, "/home/daytona/dir/f.bin", bytes));
  auto st = a.info(*s, "/home/daytona/dir/f.bin");
  ASSERT_TRUE(st && *st);
  EXPECT_EQ((*st)->size, bytes.size());
  EXPECT_FALSE((*st)->directory);
  auto dir = a.info(*s, "/home/daytona/dir");
  ASSERT_TRUE(dir && *dir);
  EXPECT_TRUE((*dir)->directory);
  auto none = a.info(*s, "/home/daytona/none");
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none);
  auto back = a.download(*s, "/home/daytona/dir/f.bin");
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, bytes);
  EXPECT_EQ(a.download(*s, "/home/daytona/none").error(), env_errc::not_found);

  ASSERT_TRUE(a.create_session(*s, "tether"));
  auto id = a.run_async(*s, "tether", "read line; echo \"got $line\"; exit 5");
  ASSERT_TRUE(id) << id.error().describe();
  ASSERT_TRUE(a.input(*s, "tether", *id, "typed\n"));
  const auto done = finished(a, *s, "tether", *id);
  ASSERT_TRUE(done.exit_code);
  EXPECT_EQ(*done.exit_code, 5);
  auto all = a.session_commands(*s, "tether");
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 1U);
  EXPECT_EQ(all->front().id, *id);
  EXPECT_EQ(a.input(*s, "tether", *id, "late\n").error(), env_errc::lost);  // it has ended
  EXPECT_EQ(a.session_commands(*s, "nope").error(), env_errc::not_found);
}

TEST_F(DaytonaApi, EachFailureIsClassified) {
  auto a = client();
  auto wrong = api({.api_url = fake.api_url(), .api_key = "not-the-key"});
  EXPECT_EQ(wrong.create({.name = "x"}).error(), env_errc::refused);
  fake.set_faults({.fail_next = 1});
  auto busy = a.create({.name = "busy"});
  ASSERT_FALSE(busy);
  EXPECT_EQ(busy.error(), env_errc::unreachable);
  EXPECT_NE(busy.error().message.find("503"), std::string::npos) << busy.error().message;
  EXPECT_EQ(busy.error().message.find("fake-daytona-key"), std::string::npos) << "the key is never in a message";
  auto s = a.create({.name = "busy"});
  ASSERT_TRUE(s);
  EXPECT_EQ(a.create({.name = "busy"}).error(), env_errc::failed);  // the name is taken
  ASSERT_TRUE(a.stop(s->id));
  EXPECT_EQ(a.execute(*s, "true", 5s).error(), env_errc::lost);  // a stopped sandbox has no toolbox
  EXPECT_EQ(a.stop(s->id).error(), env_errc::failed);              // not started
  auto nobody = api({.api_url = "http://127.0.0.1:1/api", .api_key = "k", .timeout = 5s});
  EXPECT_EQ(nobody.get("x").error(), env_errc::unreachable);
}

TEST_F(DaytonaApi, ACreateThatAnsweredNothingLeftASandboxThatItsNameFinds) {
  auto a = client();
  fake.set_faults({.create_silently = true});
  auto lost = a.create({.name = "tether-session-9", .labels = {{"tether-key", "session-9"}}});
  ASSERT_FALSE(lost);
  EXPECT_EQ(lost.error(), env_errc::unreachable) << lost.error().describe();
  auto found = a.get("tether-session-9");
  ASSERT_TRUE(found && *found) << "the create committed although its answer never came";
  auto labelled = a.list({{"tether-key", "session-9"}});
  ASSERT_TRUE(labelled);
  EXPECT_EQ(labelled->size(), 1U);
}

TEST_F(DaytonaApi, EveryRouteTheClientCallsIsOneDaytonaPublishes) {
  auto a = client();
  auto s = a.create({.name = "routes", .labels = {{"k", "v"}}, .image = "debian:12", .cpu = 2, .memory = 4, .disk = 8});
  ASSERT_TRUE(s);
  ASSERT_TRUE(a.get(s->id));
  ASSERT_TRUE(a.list({{"k", "v"}}));
  ASSERT_TRUE(a.execute(*s, "true", 5s));
  ASSERT_TRUE(a.create_session(*s, "x"));
  auto id = a.run_async(*s, "x", "cat");
  ASSERT_TRUE(id);
  ASSERT_TRUE(a.input(*s, "x", *id, "a"));
  ASSERT_TRUE(a.command(*s, "x", *id));
  ASSERT_TRUE(a.session_commands(*s, "x"));
  ASSERT_TRUE(a.upload(*s, "f", "1"));
  ASSERT_TRUE(a.download(*s, "f"));
  ASSERT_TRUE(a.info(*s, "f"));
  ASSERT_TRUE(a.stop(s->id));
  ASSERT_TRUE(a.archive(s->id));
  ASSERT_TRUE(a.start(s->id));
  ASSERT_TRUE(a.remove(s->id));

  std::ifstream in(std::string(test_paths::source_dir()) + "/tests/env/daytona/spec-routes.json");
  const auto spec = json::parse(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
  std::set<std::string> published;
  for (const auto& r : spec.at("routes").as_array()) {
    published.insert(std::string(r.at("method").as_string()) + " " + std::string(r.at("path").as_string()));
  }
  const auto called = fake.requests();
  std::set<std::string> distinct(called.begin(), called.end());
  EXPECT_GE(distinct.size(), 15U);
  for (const auto& route : distinct) EXPECT_TRUE(published.contains(route)) << route << " is not in Daytona's specification";
}

}  // namespace
}  // namespace tether::env::daytona
