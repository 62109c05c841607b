// Which work tools an agent gets by its task's mode, and what a call of one
// it is not offered returns (work/agent_tools.h). The tools' effects are
// tested through tether serve (tests/server/work_test.cpp).
#include "work/agent_tools.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

namespace tether::work {
namespace {

std::vector<std::string> names(const toolbox& b) {
  std::vector<std::string> out;
  for (const auto& t : b.work) out.push_back(t.name);
  return out;
}

store::task_row task_in(model::work_mode mode, bool plan_accepted = false) {
  store::task_row t;
  t.id = task_id::generate();
  t.mode = mode;
  if (plan_accepted) t.accepted_plan = revision_id::generate();
  return t;
}

TEST(AgentTools, TheModeDecidesTheToolsAndWhetherFilesMayChange) {
  const auto standard = tools_for(task_in(model::work_mode::standard));
  EXPECT_FALSE(standard.read_only);
  EXPECT_EQ(names(standard),
            (std::vector<std::string>{"update_task", "create_task", "list_projects", "create_project", "finish"}));
  const auto planning = tools_for(task_in(model::work_mode::planning));
  EXPECT_TRUE(planning.read_only);
  EXPECT_EQ(names(planning),
            (std::vector<std::string>{"write_plan", "request_plan_approval", "update_task", "list_projects"}));
  const auto accepted = tools_for(task_in(model::work_mode::planning, true));
  EXPECT_FALSE(accepted.read_only) << "the implementation of an accepted plan changes files";
  EXPECT_EQ(names(accepted), names(standard));
  const auto ask = tools_for(task_in(model::work_mode::ask));
  EXPECT_TRUE(ask.read_only);
  EXPECT_EQ(names(ask), (std::vector<std::string>{"list_projects", "finish"}));
  const auto ro = read_only_tools();
  for (const char* writer : {"write", "edit", "bash"})
    EXPECT_EQ(std::find(ro.begin(), ro.end(), writer), ro.end()) << writer;
}

TEST(AgentTools, EveryToolHasAClosedSchema) {
  for (const auto mode : {model::work_mode::standard, model::work_mode::planning, model::work_mode::ask})
    for (const auto& t : tools_for(task_in(mode)).work) {
      EXPECT_TRUE(is_work_tool(t.name)) << t.name;
      EXPECT_FALSE(t.description.empty()) << t.name;
      EXPECT_EQ(t.parameters.at("type"), "object") << t.name;
      EXPECT_EQ(t.parameters.at("additionalProperties"), false) << t.name;
    }
  EXPECT_FALSE(is_work_tool("bash"));
}

TEST(AgentTools, AToolTheModeDoesNotOfferFailsNamingTheMode) {
  boost::asio::io_context io;
  agent_tools tools;  // unbound: the refusal comes before any work is looked up
  auto f = boost::asio::co_spawn(io, tools.run(task_in(model::work_mode::ask), "create_task", nullptr),
                                 boost::asio::use_future);
  io.run();
  const auto out = f.get();
  EXPECT_EQ(out.what, work_tool_outcome::status::failed);
  EXPECT_NE(out.content.find("not available to a task in ask mode"), std::string::npos) << out.content;
  boost::asio::io_context io2;
  auto g = boost::asio::co_spawn(io2, tools.run(task_in(model::work_mode::standard), "finish", nullptr),
                                 boost::asio::use_future);
  io2.run();
  EXPECT_NE(g.get().content.find("not ready"), std::string::npos) << "an unbound toolset refuses, never crashes";
}

}  // namespace
}  // namespace tether::work
