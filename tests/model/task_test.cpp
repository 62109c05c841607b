#include "model/task.h"

#include <gtest/gtest.h>

#include <array>
#include <set>
#include <utility>

#include <boost/json.hpp>

#include "util/errors.h"

namespace tether::model {
namespace {

using enum task_status;

constexpr std::array<task_status, 7> every{backlog, todo, in_progress, in_review, done, blocked, cancelled};

TEST(TaskStatus, NamesRoundTripAndUnknownNamesAreRefused) {
  for (const auto s : every) EXPECT_EQ(parse_task_status(to_string(s)), s) << to_string(s);
  EXPECT_FALSE(parse_task_status("in-progress"));
  EXPECT_FALSE(parse_task_status(""));
  EXPECT_FALSE(parse_task_status("Done"));
  for (const auto m : {work_mode::standard, work_mode::ask, work_mode::planning})
    EXPECT_EQ(parse_work_mode(to_string(m)), m);
  EXPECT_FALSE(parse_work_mode("plan"));
}

// Exactly the table of the header: every pair is checked, allowed or not.
TEST(TaskStatus, OnlyTheTablesTransitionsAreAllowed) {
  const std::set<std::pair<task_status, task_status>> allowed{
      {backlog, todo},          {backlog, cancelled},      {todo, in_progress},      {todo, backlog},
      {todo, blocked},          {todo, cancelled},         {in_progress, in_review}, {in_progress, done},
      {in_progress, blocked},   {in_progress, todo},       {in_progress, cancelled}, {in_review, done},
      {in_review, in_progress}, {in_review, blocked},      {in_review, cancelled},   {blocked, todo},
      {blocked, in_progress},   {blocked, cancelled},      {done, todo},             {cancelled, backlog}};
  for (const auto from : every)
    for (const auto to : every) {
      const auto r = check_transition(from, to);
      EXPECT_EQ(r.has_value(), allowed.contains({from, to})) << to_string(from) << " -> " << to_string(to);
    }
}

TEST(TaskStatus, ARefusalSaysWhatIsAllowed) {
  auto r = check_transition(backlog, done);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), util_errc::invalid_argument);
  EXPECT_EQ(r.error().message, "a task in backlog cannot go to done (it may go to todo, cancelled)");
  auto same = check_transition(todo, todo);
  ASSERT_FALSE(same);
  EXPECT_EQ(same.error().message, "the task is already todo (it may go to in_progress, backlog, blocked, cancelled)");
}

TEST(TaskStatus, TransitionsStampTheirTimes) {
  EXPECT_TRUE(stamp(todo, in_progress).set_started);
  EXPECT_FALSE(stamp(todo, blocked).set_started);
  const auto finished = stamp(in_review, done);
  EXPECT_TRUE(finished.set_completed);
  EXPECT_FALSE(finished.clear_completed);
  EXPECT_TRUE(stamp(done, todo).clear_completed);
  EXPECT_TRUE(stamp(todo, cancelled).set_cancelled);
  EXPECT_TRUE(stamp(cancelled, backlog).clear_cancelled);
  EXPECT_FALSE(stamp(backlog, todo).set_completed);
}

TEST(ProjectRepositories, NamesComeFromTheUrlAndTheFirstIsPrimary) {
  auto repos = repositories_from_json(boost::json::parse(
      R"(["https://git.example/team/api.git", {"url": "/srv/web/", "branch": "dev"}, {"url": "git@host:x/tools"}])"));
  ASSERT_TRUE(repos) << repos.error().message;
  ASSERT_EQ(repos->size(), 3U);
  EXPECT_EQ((*repos)[0].name, "api");
  EXPECT_TRUE((*repos)[0].primary);
  EXPECT_EQ((*repos)[1].name, "web");
  EXPECT_EQ((*repos)[1].branch, "dev");
  EXPECT_FALSE((*repos)[1].primary);
  EXPECT_EQ((*repos)[2].name, "tools");
  auto back = repositories_from_json(to_json(*repos));
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, *repos);
}

TEST(ProjectRepositories, HostileOrAmbiguousEntriesAreRefusedNamingTheEntry) {
  const char* bad[] = {
      R"([])",
      R"({"url": "x"})",
      R"([{"url": "-oProxyCommand=evil"}])",
      R"([{"url": "/a", "name": "../up"}])",
      R"([{"url": "/a/x"}, {"url": "/b/x"}])",
      R"([{"url": "/a", "branch": "--force"}])",
      R"([{"url": "/a", "primary": true}, {"url": "/b", "primary": true}])",
      R"([{"url": "/a", "token": "s3cret"}])",
      R"([{"url": 7}])",
      R"([3])",
  };
  for (const char* text : bad) {
    auto r = repositories_from_json(boost::json::parse(text));
    ASSERT_FALSE(r) << text;
    EXPECT_EQ(r.error(), util_errc::invalid_argument) << text;
  }
  auto named = repositories_from_json(boost::json::parse(R"([{"url": "/a"}, {"url": "/b", "name": "a"}])"));
  ASSERT_FALSE(named);
  EXPECT_NE(named.error().message.find("repositories[1]"), std::string::npos) << named.error().message;
}

}  // namespace
}  // namespace tether::model
