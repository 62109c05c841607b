// Tasks, plans and projects through `tether serve` (DESIGN §6), with the
// scripted model as a separate `tether mock-llm` process: the plan handoff,
// work modes, the agent's work tools, a restart while a plan waits, and what
// the API refuses.
#include <gtest/gtest.h>

#include "server/harness.h"

namespace tether::e2e {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

std::string str(const json::value& v, std::string_view key) {
  const auto* p = v.as_object().if_contains(key);
  return p != nullptr && p->is_string() ? std::string(p->as_string()) : std::string();
}

// A task with a first message; returns the task object.
json::object new_task(cluster& c, json::object body) {
  auto r = c.call("POST", "/v1/tasks", body);
  if (r.status != 201) throw std::runtime_error("POST /v1/tasks: " + std::to_string(r.status) + " " + r.body);
  return r.json.at("task").as_object();
}

json::value detail(cluster& c, const std::string& task) {
  auto r = c.call("GET", "/v1/tasks/" + task);
  if (r.status != 200) throw std::runtime_error("GET task: " + r.body);
  return r.json;
}

// Waits until the task has an open confirmation other than `not_this`; returns it.
json::object wait_confirmation(cluster& c, const std::string& task, const std::string& not_this = "") {
  auto d = c.wait_for("/v1/tasks/" + task, [&](const json::value& v) {
    for (const auto& i : v.at("interactions").as_array())
      if (str(i, "kind") == "confirmation" && str(i, "id") != not_this) return true;
    return false;
  });
  for (const auto& i : d.at("interactions").as_array())
    if (str(i, "kind") == "confirmation" && str(i, "id") != not_this) return i.as_object();
  throw std::runtime_error("no confirmation");
}

json::value wait_status(cluster& c, const std::string& task, const std::string& status) {
  return c.wait_for("/v1/tasks/" + task,
                    [&](const json::value& v) { return str(v.at("task"), "status") == status; });
}

// Every text a recorded chat-completions request carries (messages and tool results).
std::string request_text(const json::value& request) { return json::serialize(request.at("body").at("messages")); }

std::vector<std::string> tool_names(const json::value& request) {
  std::vector<std::string> out;
  const auto* tools = request.at("body").as_object().if_contains("tools");
  if (tools == nullptr) return out;
  for (const auto& t : tools->as_array()) out.emplace_back(t.at("function").at("name").as_string());
  return out;
}

bool has(const std::vector<std::string>& v, std::string_view s) { return std::find(v.begin(), v.end(), s) != v.end(); }

// The planning script: a draft with two numbered steps, then (after the
// rejection) a revision with three whose steps the implementation follows.
const std::string planning_script =
    "Tool: write_plan {\"content\":\"1. parse the input\\n2. print it\\nDRAFT-PLAN\"}\n"
    "Tool: request_plan_approval {}\n"
    "Tool: write_plan {\"content\":\"1. Write file done.txt: implemented\\n2. Tool: finish {\\\"status\\\":\\\"done\\\","
    "\\\"summary\\\":\\\"all three steps\\\"}\\n3. Reply with exactly: DONE-MARKER\\nREVISED-PLAN\"}\n"
    "Tool: request_plan_approval {}\n"
    "Reply with exactly: PLANNED";

TEST(Work, APlanIsRevisedThenAcceptedAndTheImplementationStartsInAFreshContext) {
  cluster c;
  const auto t = new_task(c, json::object{{"title", "print the input"}, {"mode", "planning"}, {"message", planning_script}});
  const std::string id = str(t, "id");
  const std::string session = str(t, "session");
  EXPECT_EQ(str(t, "status"), "in_progress") << "the first message started it";

  const auto first = wait_confirmation(c, id);
  const auto& p1 = first.at("payload");
  EXPECT_EQ(p1.at("number").as_int64(), 1);
  EXPECT_NE(str(p1, "content").find("DRAFT-PLAN"), std::string::npos);
  EXPECT_NE(str(p1, "content").find("2. print it"), std::string::npos);
  EXPECT_EQ(str(p1, "content").find("3."), std::string::npos) << "the draft has exactly two steps";
  // While the plan waits, the agent was offered no tool that changes files.
  const auto asked = c.model_requests();
  ASSERT_FALSE(asked.empty());
  const auto offered = tool_names(asked.back());
  EXPECT_TRUE(has(offered, "write_plan"));
  EXPECT_TRUE(has(offered, "read"));
  EXPECT_FALSE(has(offered, "write"));
  EXPECT_FALSE(has(offered, "bash"));

  auto rejected = c.call("POST", "/v1/tasks/" + id + "/reject", json::object{{"reason", "it needs a third step"}});
  ASSERT_EQ(rejected.status, 200U) << rejected.body;
  const auto second = wait_confirmation(c, id, str(first, "id"));
  EXPECT_NE(str(second, "id"), str(first, "id")) << "a new confirmation";
  const auto& p2 = second.at("payload");
  EXPECT_EQ(p2.at("number").as_int64(), 2);
  EXPECT_NE(str(p2, "revision_id"), str(p1, "revision_id"));
  EXPECT_NE(str(p2, "content").find("REVISED-PLAN"), std::string::npos);
  // The agent heard the reason.
  EXPECT_NE(request_text(c.model_requests().back()).find("it needs a third step"), std::string::npos);

  const auto before = c.model_requests().size();
  auto approved = c.call("POST", "/v1/tasks/" + id + "/approve", json::object{});
  ASSERT_EQ(approved.status, 200U) << approved.body;
  const auto done = wait_status(c, id, "done");
  c.wait_idle(session);
  EXPECT_EQ(c.last_answer(session), "DONE-MARKER");
  EXPECT_EQ(str(done.at("task"), "accepted_plan"), str(p2, "revision_id"));
  EXPECT_FALSE(done.at("task").at("completed_at").is_null());
  const auto& plan = done.at("plan").as_array();
  ASSERT_EQ(plan.size(), 2U);
  EXPECT_FALSE(plan[0].at("accepted").as_bool());
  EXPECT_TRUE(plan[1].at("accepted").as_bool());
  EXPECT_EQ(str(plan[1], "base_revision_id"), str(plan[0], "id"));
  const auto& comments = done.at("comments").as_array();
  ASSERT_EQ(comments.size(), 1U);
  EXPECT_EQ(str(comments[0], "text"), "all three steps");
  EXPECT_EQ(str(comments[0], "author"), "agent");
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(str(c.session(session), "workspace")) / "done.txt"));

  // The implementation ran in a fresh context: every request after the
  // approval carries the accepted plan and none of the draft.
  const auto all = c.model_requests();
  ASSERT_GT(all.size(), before);
  for (std::size_t i = before; i < all.size(); ++i) {
    const auto text = request_text(all[i]);
    EXPECT_EQ(text.find("DRAFT-PLAN"), std::string::npos) << "request " << i;
    EXPECT_EQ(text.find("it needs a third step"), std::string::npos) << "request " << i;
    EXPECT_NE(text.find("REVISED-PLAN"), std::string::npos) << "request " << i;
    EXPECT_TRUE(has(tool_names(all[i]), "write")) << "the implementation may change files";
  }
  EXPECT_EQ(c.session(session).at("generation").as_int64(), 1);
}

TEST(Work, APlanWaitingForApprovalSurvivesAKillAndIsApprovedAfterTheRestart) {
  cluster c;
  const std::string script =
      "Tool: write_plan {\"content\":\"1. Reply with exactly: AFTER-RESTART\"}\nTool: request_plan_approval {}";
  const auto t = new_task(c, json::object{{"title", "survive"}, {"mode", "planning"}, {"message", script}});
  const std::string id = str(t, "id");
  const auto waiting = wait_confirmation(c, id);
  c.kill_server(SIGKILL);
  c.start_server();
  const auto again = wait_confirmation(c, id);
  EXPECT_EQ(str(again, "id"), str(waiting, "id")) << "the same confirmation, still pending";
  auto approved = c.call("POST", "/v1/interactions/" + str(waiting, "id") + "/answer", json::object{{"accepted", true}});
  ASSERT_EQ(approved.status, 200U) << approved.body;
  c.wait_idle(str(t, "session"));
  EXPECT_EQ(c.last_answer(str(t, "session")), "AFTER-RESTART");
  EXPECT_EQ(str(detail(c, id).at("task"), "accepted_plan"), str(waiting.at("payload"), "revision_id"));
}

TEST(Work, AskModeAnswersWithoutAnyToolThatChangesFiles) {
  cluster c;
  const auto t = new_task(c, json::object{
                                 {"title", "a question"},
                                 {"mode", "ask"},
                                 {"message", "Reply with exactly: ASK-MARKER"}});
  c.wait_idle(str(t, "session"));
  EXPECT_EQ(c.last_answer(str(t, "session")), "ASK-MARKER");
  const auto requests = c.model_requests();
  ASSERT_FALSE(requests.empty());
  const auto offered = tool_names(requests.front());
  for (const char* writer : {"write", "edit", "bash", "create_task", "create_project"})
    EXPECT_FALSE(has(offered, writer)) << writer;
  EXPECT_TRUE(has(offered, "read"));
  const auto ws = std::filesystem::path(str(c.session(str(t, "session")), "workspace"));
  EXPECT_TRUE(std::filesystem::is_empty(ws)) << "no file changed";
}

TEST(Work, TheAgentCreatesAChildTaskInTheExistingProjectAndItRunsToDone) {
  cluster c;
  auto p = c.call("POST", "/v1/projects",
                  json::object{{"name", "api"}, {"repositories", json::array{"https://git.example/team/api.git"}}});
  ASSERT_EQ(p.status, 201U) << p.body;
  const std::string project = str(p.json.at("project"), "id");
  const std::string child_message = "Tool: finish {\\\"status\\\":\\\"done\\\",\\\"summary\\\":\\\"child done\\\"}";
  const std::string script = "Tool: list_projects {}\n"
                             "Tool: create_task {\"title\":\"the child\",\"project_id\":\"" + project +
                             "\",\"message\":\"" + child_message + "\"}\n"
                             "Reply with exactly: PARENT-DONE";
  const auto t = new_task(c, json::object{{"title", "the parent"}, {"message", script}});
  c.wait_idle(str(t, "session"));
  EXPECT_EQ(c.last_answer(str(t, "session")), "PARENT-DONE");
  auto children = c.wait_for("/v1/tasks?parent_task_id=" + str(t, "id"), [](const json::value& v) {
    const auto& list = v.at("tasks").as_array();
    return list.size() == 1 && str(list[0], "status") == "done";
  });
  const auto& child = children.at("tasks").as_array()[0];
  EXPECT_EQ(str(child, "project_id"), project);
  EXPECT_EQ(str(child, "created_by"), "agent");
  auto projects = c.call("GET", "/v1/projects");
  EXPECT_EQ(projects.json.at("projects").as_array().size(), 1U) << "no new project";
  // The list_projects result the agent saw named the project.
  bool listed = false;
  for (const auto& m : c.messages(str(t, "session")))
    if (str(m, "role") == "tool" && str(m, "text").find(project) != std::string::npos) listed = true;
  EXPECT_TRUE(listed);
}

TEST(Work, TheApiRefusesStaleWritesBadMovesAndUnknownIds) {
  cluster c;
  const auto t = new_task(c, json::object{{"title", "refusals"}});
  const std::string id = str(t, "id");
  EXPECT_EQ(str(t, "status"), "todo");

  // Plans: written against the latest revision only.
  auto r1 = c.call("POST", "/v1/tasks/" + id + "/plan", json::object{{"content", "1. one"}});
  ASSERT_EQ(r1.status, 201U) << r1.body;
  const std::string rev1 = str(r1.json.at("revision"), "id");
  auto no_base = c.call("POST", "/v1/tasks/" + id + "/plan", json::object{{"content", "1. two"}});
  EXPECT_EQ(no_base.status, 409U) << no_base.body;
  auto r2 = c.call("POST", "/v1/tasks/" + id + "/plan", json::object{{"content", "1. two"}, {"base_revision_id", rev1}});
  ASSERT_EQ(r2.status, 201U) << r2.body;
  auto stale = c.call("POST", "/v1/tasks/" + id + "/plan", json::object{{"content", "1. three"}, {"base_revision_id", rev1}});
  EXPECT_EQ(stale.status, 409U) << stale.body;

  // Status: only allowed transitions.
  auto skip = c.call("PATCH", "/v1/tasks/" + id, json::object{{"status", "done"}});
  EXPECT_EQ(skip.status, 400U) << skip.body;
  auto moved = c.call("PATCH", "/v1/tasks/" + id, json::object{{"status", "in_progress"}, {"priority", 5}});
  ASSERT_EQ(moved.status, 200U) << moved.body;
  EXPECT_EQ(str(moved.json.at("task"), "status"), "in_progress");
  EXPECT_EQ(moved.json.at("task").at("priority").as_int64(), 5);
  auto bogus = c.call("PATCH", "/v1/tasks/" + id, json::object{{"status", "finished"}});
  EXPECT_EQ(bogus.status, 400U);

  // Nothing waits for approval; a rejection needs a reason.
  EXPECT_EQ(c.call("POST", "/v1/tasks/" + id + "/approve", json::object{}).status, 409U);
  EXPECT_EQ(c.call("POST", "/v1/tasks/" + id + "/reject", json::object{}).status, 400U);

  // Unknown ids, unknown fields, unknown projects.
  EXPECT_EQ(c.call("GET", "/v1/tasks/tsk_nosuchtask").status, 404U);
  EXPECT_EQ(c.call("GET", "/v1/tasks/not-a-task").status, 404U);
  EXPECT_EQ(c.call("POST", "/v1/tasks", json::object{{"title", "x"}, {"colour", "red"}}).status, 400U);
  EXPECT_EQ(c.call("POST", "/v1/tasks", json::object{{"description", "no title"}}).status, 400U);
  EXPECT_EQ(c.call("POST", "/v1/tasks", json::object{{"title", "x"}, {"project_id", "prj_nosuch"}}).status, 404U);
  EXPECT_EQ(c.call("POST", "/v1/tasks/" + id + "/messages", json::object{}).status, 400U);
  EXPECT_EQ(c.call_raw("POST", "/v1/tasks", "{\"title\": ", {{"Content-Type", "application/json"}}).status, 400U);

  // Projects: unique names, checked repositories, optimistic revisions.
  auto p = c.call("POST", "/v1/projects", json::object{{"name", "web"}, {"repositories", json::array{"/srv/web"}}});
  ASSERT_EQ(p.status, 201U) << p.body;
  const std::string pid = str(p.json.at("project"), "id");
  EXPECT_EQ(c.call("POST", "/v1/projects", json::object{{"name", "web"}, {"repositories", json::array{"/srv/w2"}}}).status,
            409U);
  EXPECT_EQ(c.call("POST", "/v1/projects",
                   json::object{{"name", "evil"}, {"repositories", json::array{"--upload-pack=touch /tmp/pwned"}}})
                .status,
            400U);
  EXPECT_EQ(c.call("POST", "/v1/projects", json::object{{"name", "none"}, {"repositories", json::array{}}}).status, 400U);
  auto renamed = c.call("PATCH", "/v1/projects/" + pid, json::object{{"description", "the site"}, {"revision", 1}});
  ASSERT_EQ(renamed.status, 200U) << renamed.body;
  EXPECT_EQ(renamed.json.at("project").at("revision").as_int64(), 2);
  EXPECT_EQ(c.call("PATCH", "/v1/projects/" + pid, json::object{{"description", "again"}, {"revision", 1}}).status,
            409U);
  EXPECT_EQ(c.call("GET", "/v1/projects/prj_nosuch").status, 404U);
  auto in_project = c.call("PATCH", "/v1/tasks/" + id, json::object{{"project_id", pid}});
  ASSERT_EQ(in_project.status, 200U) << in_project.body;
  auto listed = c.call("GET", "/v1/tasks?project_id=" + pid);
  ASSERT_EQ(listed.status, 200U);
  ASSERT_EQ(listed.json.at("tasks").as_array().size(), 1U);
  EXPECT_EQ(c.call("GET", "/v1/tasks?status=nope").status, 400U);
}

}  // namespace
}  // namespace tether::e2e
