// Tasks, plans and projects through `tether serve` (docs/architecture.md §6), with the
// scripted model as a separate `tether mock-llm` process: the plan handoff,
// work modes, the agent's work tools, a restart while a plan waits, and what
// the API refuses.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

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
  return c.wait_for("/v1/tasks/" + task, [&](const json::value& v) { return str(v.at("task"), "status") == status; });
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

// A bare repository dir/NAME.git whose branch BRANCH holds README = TEXT
// (made with git from this machine; the URL is a local path).
std::string bare_repo(const std::filesystem::path& dir, const std::string& name, const std::string& branch,
                      const std::string& text) {
  const auto src = dir / ("src-" + name);
  const auto bare = dir / (name + ".git");
  const std::string cmd = "set -e; git init -q -b " + branch + " '" + src.string() + "' && cd '" + src.string() +
                          "' && printf '%s' '" + text +
                          "' > README && git add README && git -c user.name=t "
                          "-c user.email=t@example.com commit -qm init && git clone -q --bare '" +
                          src.string() + "' '" + bare.string() + "'";
  if (std::system(cmd.c_str()) != 0) throw std::runtime_error("cannot make the repository " + name);
  return bare.string();
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The last preparation of the task: {session:{decision,reasons,…}, workspace:{…}, steps}.
json::value last_preparation(cluster& c, const std::string& task) {
  const auto d = detail(c, task);
  const auto& list = d.at("preparations").as_array();
  if (list.empty()) throw std::runtime_error("no preparation");
  return list.back();
}

std::string decision(const json::value& prep, std::string_view side) { return str(prep.at(side), "decision"); }
std::vector<std::string> reasons(const json::value& prep, std::string_view side) {
  std::vector<std::string> out;
  for (const auto& r : prep.at(side).at("reasons").as_array()) out.emplace_back(r.as_string());
  return out;
}

// Sends and waits until the task's session is idle again.
void say(cluster& c, const std::string& task, const std::string& session, const std::string& text) {
  auto r = c.call("POST", "/v1/tasks/" + task + "/messages", json::object{{"text", text}});
  if (r.status != 202) throw std::runtime_error("message: " + std::to_string(r.status) + " " + r.body);
  c.wait_idle(session);
}

// The planning script: a draft with two numbered steps, then (after the
// rejection) a revision with three whose steps the implementation follows.
const std::string planning_script =
    "Tool: write_plan {\"content\":\"1. parse the input\\n2. print it\\nDRAFT-PLAN\"}\n"
    "Tool: request_plan_approval {}\n"
    "Tool: write_plan {\"content\":\"1. Write file done.txt: implemented\\n2. Tool: finish "
    "{\\\"status\\\":\\\"done\\\","
    "\\\"summary\\\":\\\"all three steps\\\"}\\n3. Reply with exactly: DONE-MARKER\\nREVISED-PLAN\"}\n"
    "Tool: request_plan_approval {}\n"
    "Reply with exactly: PLANNED";

TEST(Work, APlanIsRevisedThenAcceptedAndTheImplementationStartsInAFreshContext) {
  cluster c;
  const auto t =
      new_task(c, json::object{{"title", "print the input"}, {"mode", "planning"}, {"message", planning_script}});
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
  // The turn has ended waiting (the interaction is recorded a moment before
  // the turn returns; a kill in that moment is another case: the restart
  // settles the call as interrupted).
  c.wait_idle(str(t, "session"));
  c.kill_server(SIGKILL);
  c.start_server();
  const auto again = wait_confirmation(c, id);
  EXPECT_EQ(str(again, "id"), str(waiting, "id")) << "the same confirmation, still pending";
  auto approved =
      c.call("POST", "/v1/interactions/" + str(waiting, "id") + "/answer", json::object{{"accepted", true}});
  ASSERT_EQ(approved.status, 200U) << approved.body;
  c.wait_idle(str(t, "session"));
  EXPECT_EQ(c.last_answer(str(t, "session")), "AFTER-RESTART");
  EXPECT_EQ(str(detail(c, id).at("task"), "accepted_plan"), str(waiting.at("payload"), "revision_id"));
}

TEST(Work, AskModeAnswersWithoutAnyToolThatChangesFiles) {
  cluster c;
  const auto t = new_task(
      c, json::object{{"title", "a question"}, {"mode", "ask"}, {"message", "Reply with exactly: ASK-MARKER"}});
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
  const auto repo = bare_repo(c.dir(), "api", "main", "the api");
  auto p = c.call("POST", "/v1/projects", json::object{{"name", "api"}, {"repositories", json::array{repo}}});
  ASSERT_EQ(p.status, 201U) << p.body;
  const std::string project = str(p.json.at("project"), "id");
  const std::string child_message = "Tool: finish {\\\"status\\\":\\\"done\\\",\\\"summary\\\":\\\"child done\\\"}";
  const std::string script =
      "Tool: list_projects {}\n"
      "Tool: create_task {\"title\":\"the child\",\"project_id\":\"" +
      project + "\",\"message\":\"" + child_message +
      "\"}\n"
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

TEST(Work, TheWorkspaceHoldsEveryRepositoryAtItsBranchAndIsReusedRefreshedOrReplaced) {
  cluster c;
  const auto api = bare_repo(c.dir(), "api", "main", "api on main");
  const auto web = bare_repo(c.dir(), "web", "dev", "web on dev");
  auto p = c.call("POST", "/v1/projects",
                  json::object{{"name", "shop"},
                               {"repositories", json::array{json::object{{"url", api}, {"branch", "main"}},
                                                            json::object{{"url", web}, {"branch", "dev"}}}},
                               {"setup", json::array{"echo one >> setup.log"}}});
  ASSERT_EQ(p.status, 201U) << p.body;
  const std::string project = str(p.json.at("project"), "id");
  const auto t = new_task(
      c, json::object{{"title", "in a workspace"}, {"project_id", project}, {"message", "Reply with exactly: FIRST"}});
  const std::string id = str(t, "id");
  const std::string session = str(t, "session");
  c.wait_idle(session);
  const auto ws = std::filesystem::path(str(c.session(session), "workspace"));
  EXPECT_EQ(read_file(ws / "api" / "README"), "api on main");
  EXPECT_EQ(read_file(ws / "web" / "README"), "web on dev");
  EXPECT_EQ(read_file(ws / "setup.log"), "one\n");
  auto first = last_preparation(c, id);
  EXPECT_EQ(decision(first, "session"), "fresh");
  EXPECT_EQ(decision(first, "workspace"), "create");
  EXPECT_TRUE(first.at("session").at("before").is_null());
  for (const char* cat : {"runtime", "model", "instructions", "task_overrides", "workspace_config", "secrets"})
    EXPECT_TRUE(std::string_view(str(first.at("session").at("now"), cat)).starts_with("v1:sha256:")) << cat;

  say(c, id, session, "Reply with exactly: SECOND");
  auto second = last_preparation(c, id);
  EXPECT_EQ(decision(second, "session"), "reuse");
  EXPECT_EQ(decision(second, "workspace"), "reuse");
  EXPECT_EQ(read_file(ws / "setup.log"), "one\n") << "nothing ran again";
  EXPECT_EQ(second.at("session").at("before"), first.at("session").at("now"));

  auto setup = c.call("PATCH", "/v1/projects/" + project,
                      json::object{{"setup", json::array{"echo one >> setup.log", "echo two >> setup.log"}}});
  ASSERT_EQ(setup.status, 200U) << setup.body;
  say(c, id, session, "Reply with exactly: THIRD");
  auto third = last_preparation(c, id);
  EXPECT_EQ(decision(third, "workspace"), "refresh");
  EXPECT_EQ(reasons(third, "workspace"), std::vector<std::string>{"lifecycle_commands"});
  EXPECT_EQ(decision(third, "session"), "reuse");
  EXPECT_EQ(read_file(ws / "setup.log"), "one\none\ntwo\n") << "the setup ran again in the same workspace";

  const auto docs = bare_repo(c.dir(), "docs", "main", "the docs");
  auto repos = c.call("PATCH", "/v1/projects/" + project,
                      json::object{{"repositories", json::array{json::object{{"url", api}, {"branch", "main"}},
                                                                json::object{{"url", docs}}}}});
  ASSERT_EQ(repos.status, 200U) << repos.body;
  say(c, id, session, "Reply with exactly: FOURTH");
  auto fourth = last_preparation(c, id);
  EXPECT_EQ(decision(fourth, "workspace"), "replace");
  EXPECT_EQ(reasons(fourth, "workspace"), std::vector<std::string>{"repositories"});
  EXPECT_TRUE(std::filesystem::exists(ws / "docs" / "README"));
  EXPECT_FALSE(std::filesystem::exists(ws / "web")) << "the old checkout is gone";
  EXPECT_EQ(c.last_answer(session), "FOURTH");
}

TEST(Work, AChangedModelOrInstructionsResetsTheTaskSessionWithThoseReasons) {
  cluster c;
  const auto t = new_task(c, json::object{{"title", "fresh"}, {"message", "Remember the phrase: OLD-CONTEXT"}});
  const std::string id = str(t, "id");
  const std::string session = str(t, "session");
  c.wait_idle(session);
  say(c, id, session, "Recall the phrase.");
  EXPECT_EQ(c.last_answer(session), "OLD-CONTEXT") << "an unchanged configuration reuses the session";
  EXPECT_EQ(decision(last_preparation(c, id), "session"), "reuse");

  // The same profile, another model and instructions: a restart with the new configuration.
  const auto cfg = c.dir() / "tether.toml";
  std::string text = read_file(cfg);
  text.replace(text.find("model = \"scripted\""), 18, "model = \"scripted-2\"");
  text += "instructions = \"Be brief.\"\n";
  std::ofstream(cfg) << text;
  c.kill_server(SIGTERM);
  c.start_server();
  say(c, id, session, "Recall the phrase.");
  const auto prep = last_preparation(c, id);
  EXPECT_EQ(decision(prep, "session"), "reset");
  EXPECT_EQ(reasons(prep, "session"), (std::vector<std::string>{"model", "instructions"}));
  EXPECT_EQ(decision(prep, "workspace"), "reuse");
  EXPECT_EQ(c.last_answer(session), "NO_PHRASE") << "the new context has none of the old messages";
  EXPECT_EQ(c.session(session).at("generation").as_int64(), 1);
}

TEST(Work, AnAgentCannotHaveTetherCloneALocalRepositoryOutsideTheWorkspaceRoots) {
  cluster c;
  const auto outside = bare_repo(c.dir(), "secret", "main", "not for agents");
  const std::string script =
      "Tool: create_project {\"name\":\"grab\",\"repositories\":[\"" + outside + "\"]}\nReply with exactly: TRIED";
  const auto t = new_task(c, json::object{{"title", "grab"}, {"message", script}});
  c.wait_idle(str(t, "session"));
  EXPECT_EQ(c.last_answer(str(t, "session")), "TRIED");
  bool refused = false;
  for (const auto& m : c.messages(str(t, "session")))
    if (str(m, "role") == "tool" && str(m, "text").find("only under the server's workspace roots") != std::string::npos)
      refused = true;
  EXPECT_TRUE(refused) << "the create_project call failed naming the rule";
  EXPECT_TRUE(c.call("GET", "/v1/projects").json.at("projects").as_array().empty());
}

// One message of an agent made 40 tasks in 10 s, and children of children
// grow as 50^n: a tree stops at four levels below its root and at 200 tasks.
TEST(Work, ChildTasksStopAtFourLevelsAndTwoHundredTasksUnderOneRoot) {
  cluster c;
  const std::string root = str(new_task(c, json::object{{"title", "root"}}), "id");
  std::string parent = root;
  for (int level = 1; level <= 4; ++level)
    parent =
        str(new_task(c, json::object{{"title", "level " + std::to_string(level)}, {"parent_task_id", parent}}), "id");
  auto deeper = c.call("POST", "/v1/tasks", json::object{{"title", "level 5"}, {"parent_task_id", parent}});
  EXPECT_EQ(deeper.status, 400U) << deeper.body;
  EXPECT_NE(deeper.body.find("levels below its root"), std::string::npos) << deeper.body;
  for (int i = 0; i < 196; ++i)
    new_task(c, json::object{{"title", "wide " + std::to_string(i)}, {"parent_task_id", root}});
  auto over = c.call("POST", "/v1/tasks", json::object{{"title", "one too many"}, {"parent_task_id", root}});
  EXPECT_EQ(over.status, 400U) << over.body;
  EXPECT_NE(over.body.find("200 tasks below it"), std::string::npos) << over.body;
  auto listed = c.call("GET", "/v1/tasks?parent_task_id=" + root + "&limit=1000");
  ASSERT_EQ(listed.status, 200U) << listed.body;
  EXPECT_EQ(listed.json.at("tasks").as_array().size(), 197U) << "1 chain + 196 wide children of the root";
  // Another root starts a tree of its own.
  const std::string other = str(new_task(c, json::object{{"title", "other root"}}), "id");
  EXPECT_EQ(c.call("POST", "/v1/tasks", json::object{{"title", "fine"}, {"parent_task_id", other}}).status, 201U);
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
  auto r2 =
      c.call("POST", "/v1/tasks/" + id + "/plan", json::object{{"content", "1. two"}, {"base_revision_id", rev1}});
  ASSERT_EQ(r2.status, 201U) << r2.body;
  auto stale =
      c.call("POST", "/v1/tasks/" + id + "/plan", json::object{{"content", "1. three"}, {"base_revision_id", rev1}});
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
  EXPECT_EQ(
      c.call("POST", "/v1/projects", json::object{{"name", "web"}, {"repositories", json::array{"/srv/w2"}}}).status,
      409U);
  EXPECT_EQ(c.call("POST", "/v1/projects",
                   json::object{{"name", "evil"}, {"repositories", json::array{"--upload-pack=touch /tmp/pwned"}}})
                .status,
            400U);
  EXPECT_EQ(c.call("POST", "/v1/projects", json::object{{"name", "none"}, {"repositories", json::array{}}}).status,
            400U);
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
