// The ACP client (make_acp): the mapping of session/update and the prompt's
// result onto events, the permission policy and the workspace confinement
// as pure functions; then the connection against fake agents, a python one
// (fake_acp_agent.py: permissions, fs, hostile paths, crashes, garbage) and
// the node one the runtime's tests use (tests/server/agents/fake_acp_agent.js).
#include "runtime/agent/acp/protocol.h"

#include <fstream>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>

#include "runtime/agent/acp/acp_test_support.h"
#include "runtime/agent/errors.h"
#include "runtime/agent/file_work.h"
#include "runtime/agent/programs.h"

#include "support/paths.h"

namespace tether::runtime::agent {
namespace {

using namespace test;  // NOLINT(google-build-using-namespace)

const fs::path python_agent = fs::path(test_paths::source_dir()) / "tests/runtime/agent/acp/fake_acp_agent.py";
const fs::path node_agent = fs::path(test_paths::source_dir()) / "tests/server/agents/fake_acp_agent.js";

json::object obj(std::string_view text) { return json::parse(text).as_object(); }

void write(const fs::path& p, std::string_view text) { std::ofstream(p) << text; }
std::string read(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), {}};
}

// --- the mapping ---------------------------------------------------------

TEST(acp_mapping, chunks_stream_as_pieces_and_end_as_one_message) {
  acp_turn t;
  t.begin();
  auto a = t.update(obj(R"({"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hel"}})"));
  auto b = t.update(obj(R"({"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"lo"}})"));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(std::get<text_piece>(a[0]).text, "Hel");
  EXPECT_EQ(std::get<text_piece>(b[0]).text, "lo");
  auto end = t.finish(json::parse(R"({"stopReason":"end_turn"})"));
  ASSERT_EQ(end.size(), 2u);
  EXPECT_EQ(std::get<agent_message>(end[0]).text, "Hello");
  EXPECT_TRUE(std::holds_alternative<turn_done>(end[1]));
}

TEST(acp_mapping, a_tool_starts_once_running_with_its_whole_input_and_ends_with_its_text) {
  acp_turn t;
  t.begin();
  (void)t.update(obj(R"({"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"first"}})"));
  EXPECT_TRUE(t.update(obj(R"({"sessionUpdate":"tool_call","toolCallId":"c1","title":"Write","kind":"edit",
                               "status":"pending","rawInput":{}})"))
                  .empty());
  EXPECT_EQ(t.tool_kind("c1"), "edit");
  auto run = t.update(obj(R"({"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"in_progress",
                              "rawInput":{"path":"a.txt"}})"));
  ASSERT_EQ(run.size(), 2u);  // the text before the tool is a message of its own
  EXPECT_EQ(std::get<agent_message>(run[0]).text, "first");
  const auto& start = std::get<tool_start>(run[1]);
  EXPECT_EQ(start.id, "c1");
  EXPECT_EQ(start.tool, "Write");
  EXPECT_EQ(start.input, json::parse(R"({"path":"a.txt"})"));
  auto done = t.update(obj(R"({"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed",
      "content":[{"type":"content","content":{"type":"text","text":"ok"}},{"type":"diff","path":"/a","newText":"x"}]})"));
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(std::get<tool_end>(done[0]).output, "ok");
  EXPECT_TRUE(std::get<tool_end>(done[0]).ok);
  // A repeated completion is not a second end.
  EXPECT_TRUE(t.update(obj(R"({"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed"})")).empty());
}

// claude-agent-acp reports a Bash call pending, asks for permission, and
// reports nothing more until the command is done: the approval is its start.
TEST(acp_mapping, an_approved_pending_tool_starts_with_the_input_it_has_and_only_once) {
  acp_turn t;
  t.begin();
  EXPECT_TRUE(t.approved("unknown").empty());
  (void)t.update(obj(R"({"sessionUpdate":"tool_call","toolCallId":"b","title":"Terminal","kind":"execute",
                         "status":"pending","rawInput":{}})"));
  EXPECT_TRUE(t.update(obj(R"({"sessionUpdate":"tool_call_update","toolCallId":"b","rawInput":{"command":"sleep 9"}})"))
                  .empty());
  auto run = t.approved("b");
  ASSERT_EQ(run.size(), 1u);
  EXPECT_EQ(std::get<tool_start>(run[0]).tool, "Terminal");
  EXPECT_EQ(std::get<tool_start>(run[0]).input, json::parse(R"({"command":"sleep 9"})"));
  EXPECT_TRUE(t.approved("b").empty());
  auto done = t.update(obj(R"({"sessionUpdate":"tool_call_update","toolCallId":"b","status":"completed"})"));
  ASSERT_EQ(done.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<tool_end>(done[0]));
}

TEST(acp_mapping, a_failed_tool_ends_not_ok_with_its_raw_output) {
  acp_turn t;
  t.begin();
  auto evs = t.update(obj(R"({"sessionUpdate":"tool_call","toolCallId":"x","title":"Run","kind":"execute",
                              "status":"failed","rawOutput":{"exit":2}})"));
  ASSERT_EQ(evs.size(), 2u);
  EXPECT_FALSE(std::get<tool_end>(evs[1]).ok);
  EXPECT_EQ(std::get<tool_end>(evs[1]).output, R"({"exit":2})");
}

TEST(acp_mapping, tools_left_unfinished_end_failed_with_the_turn) {
  acp_turn t;
  t.begin();
  (void)t.update(obj(R"({"sessionUpdate":"tool_call","toolCallId":"p","title":"Pending","status":"pending"})"));
  auto end = t.finish(json::parse(R"({"stopReason":"end_turn"})"));
  ASSERT_EQ(end.size(), 3u);
  EXPECT_EQ(std::get<tool_start>(end[0]).id, "p");
  EXPECT_FALSE(std::get<tool_end>(end[1]).ok);
}

TEST(acp_mapping, usage_counts_cache_as_input_and_cost_is_the_growth_during_the_turn) {
  acp_turn t;
  (void)t.update(obj(R"({"sessionUpdate":"usage_update","used":1,"size":9,"cost":{"amount":1.25,"currency":"USD"}})"));
  t.begin();
  (void)t.update(obj(R"({"sessionUpdate":"usage_update","used":5,"size":9,"cost":{"amount":2.0,"currency":"USD"}})"));
  auto end = t.finish(json::parse(R"({"stopReason":"end_turn","usage":{"inputTokens":10,"outputTokens":4,
      "cachedReadTokens":30,"cachedWriteTokens":5,"thoughtTokens":2,"totalTokens":51}})"));
  const auto u = all_of<turn_usage>(end).at(0);
  EXPECT_EQ(u.usage.input_tokens, 45);
  EXPECT_EQ(u.usage.cached_input_tokens, 30);
  EXPECT_EQ(u.usage.output_tokens, 6);
  ASSERT_TRUE(u.agent_cost_usd);
  EXPECT_DOUBLE_EQ(*u.agent_cost_usd, 0.75);
  // A turn with neither reports no usage at all.
  t.begin();
  EXPECT_TRUE(all_of<turn_usage>(t.finish(json::parse(R"({"stopReason":"end_turn"})"))).empty());
}

TEST(acp_mapping, every_stop_reason_but_end_turn_fails_the_turn_naming_it) {
  for (const auto* reason : {"cancelled", "refusal", "max_tokens", "max_turn_requests"}) {
    acp_turn t;
    t.begin();
    auto end = t.finish(json::object{{"stopReason", reason}});
    ASSERT_EQ(end.size(), 1u);
    EXPECT_NE(std::get<turn_failed>(end[0]).message.find(reason), std::string::npos) << reason;
  }
}

TEST(acp_mapping, tethers_question_tool_is_left_to_the_bridge) {
  acp_turn t;
  t.begin();
  EXPECT_TRUE(t.update(obj(R"({"sessionUpdate":"tool_call","toolCallId":"q","title":"mcp__tether__ask_user",
                               "status":"completed"})"))
                  .empty());
  EXPECT_EQ(t.finish(json::parse(R"({"stopReason":"end_turn"})")).size(), 1u);
}

// --- the permission policy ---------------------------------------------------

TEST(acp_permissions, each_policy_picks_its_option_preferring_once) {
  const auto options = json::parse(R"([{"optionId":"aa","kind":"allow_always"},{"optionId":"a","kind":"allow_once"},
                                       {"optionId":"r","kind":"reject_once"},{"optionId":"ra","kind":"reject_always"}])")
                           .as_array();
  EXPECT_EQ(pick_permission(agent_permissions::approve_all, "edit", options), "a");
  EXPECT_EQ(pick_permission(agent_permissions::deny_all, "read", options), "r");
  for (const auto* k : {"read", "search", "fetch", "think"})
    EXPECT_EQ(pick_permission(agent_permissions::approve_reads, k, options), "a") << k;
  for (const auto* k : {"edit", "execute", "delete", "move", "other", ""})
    EXPECT_EQ(pick_permission(agent_permissions::approve_reads, k, options), "r") << k;
  const auto always_only = json::parse(R"([{"optionId":"aa","kind":"allow_always"}])").as_array();
  EXPECT_EQ(pick_permission(agent_permissions::approve_all, "edit", always_only), "aa");
  EXPECT_EQ(pick_permission(agent_permissions::deny_all, "edit", always_only), std::nullopt);
}

// --- fs confinement ------------------------------------------------------------

class acp_confinement : public testing::Test {
 protected:
  void SetUp() override {
    ws_ = fs::canonical(dir_.path()) / "ws";
    fs::create_directories(ws_ / "sub");
    fs::create_directories(dir_.path() / "ws2");
    write(ws_ / "sub" / "a.txt", "one\ntwo\nthree\n");
    write(dir_.path() / "outside.txt", "secret");
    fs::create_symlink(dir_.path() / "outside.txt", ws_ / "out-link");
    fs::create_symlink(dir_.path(), ws_ / "out-dir");
    fs::create_symlink(dir_.path() / "nowhere", ws_ / "dangling");
    fs::create_symlink(ws_ / "sub" / "a.txt", ws_ / "in-link");
  }
  temp_dir dir_;
  fs::path ws_;
};

TEST_F(acp_confinement, paths_inside_the_workspace_are_allowed) {
  EXPECT_EQ(confined_path(ws_, (ws_ / "sub" / "a.txt").string()).value(), ws_ / "sub" / "a.txt");
  EXPECT_EQ(confined_path(ws_, "sub/a.txt").value(), ws_ / "sub" / "a.txt");
  EXPECT_EQ(confined_path(ws_, "new/file.txt").value(), ws_ / "new" / "file.txt");
  EXPECT_EQ(confined_path(ws_, "in-link").value(), ws_ / "sub" / "a.txt");
}

TEST_F(acp_confinement, escapes_are_refused) {
  for (const std::string& p : std::vector<std::string>{"../outside.txt", "sub/../../outside.txt", "sub/../a", "/etc/passwd",
                              (dir_.path() / "ws2" / "x").string(), "out-link", "out-dir/outside.txt", "dangling",
                              "dangling/x", ""}) {
    auto r = confined_path(ws_, p);
    ASSERT_FALSE(r) << p << " was allowed as " << r.value();
    EXPECT_EQ(r.error().code, std::make_error_code(std::errc::permission_denied)) << p;
  }
}

TEST_F(acp_confinement, reads_take_lines_and_writes_need_approve_all) {
  EXPECT_EQ(read_text_file(ws_, "sub/a.txt", 2, 1).value(), "two\n");
  EXPECT_EQ(read_text_file(ws_, "sub/a.txt", 2, std::nullopt).value(), "two\nthree\n");
  EXPECT_EQ(read_text_file(ws_, "sub/a.txt", std::nullopt, std::nullopt).value(), "one\ntwo\nthree\n");
  EXPECT_FALSE(read_text_file(ws_, "missing.txt", std::nullopt, std::nullopt));
  EXPECT_TRUE(write_text_file(ws_, agent_permissions::approve_all, "deep/new.txt", "hi"));
  EXPECT_EQ(read(ws_ / "deep" / "new.txt"), "hi");
  for (auto p : {agent_permissions::approve_reads, agent_permissions::deny_all})
    EXPECT_FALSE(write_text_file(ws_, p, "denied.txt", "no"));
  EXPECT_FALSE(fs::exists(ws_ / "denied.txt"));
  EXPECT_FALSE(write_text_file(ws_, agent_permissions::approve_all, "dangling", "no"));
  EXPECT_FALSE(fs::exists(dir_.path() / "nowhere"));
}

// --- the connection, against the python fake agent ---------------------------------

class acp_fake : public testing::Test {
 protected:
  acp_fake() : s_(make_acp(acp_agent::any)) {}
  void start() {
    ASSERT_TRUE(s_.start(python_agent));
    auto id = s_.open();
    ASSERT_TRUE(id) << id.error().describe();
    EXPECT_EQ(*id, "fake-1");
  }
  acp_session s_;
};

TEST_F(acp_fake, a_reply_maps_to_pieces_one_message_usage_and_done) {
  start();
  auto t = s_.turn("echo hello world");
  ASSERT_TRUE(t.done()) << (t.error ? t.error->describe() : t.failure());
  EXPECT_EQ(all_of<text_piece>(t.events).size(), 2u);
  EXPECT_EQ(messages(t.events), "hello world");
  const auto u = all_of<turn_usage>(t.events).at(0);
  EXPECT_EQ(u.usage.input_tokens, 14);
  EXPECT_EQ(u.usage.cached_input_tokens, 3);
  EXPECT_EQ(u.usage.output_tokens, 7);
  EXPECT_DOUBLE_EQ(u.agent_cost_usd.value_or(0), 0.5);
  EXPECT_FALSE(s_.dialect().can_steer());
  EXPECT_FALSE(s_.run(s_.connection().steer("more")).value());
}

TEST_F(acp_fake, permissions_follow_the_profile) {
  const std::vector<std::tuple<agent_permissions, std::string, std::string>> cases = {
      {agent_permissions::approve_all, "edit", "yes"},  {agent_permissions::deny_all, "read", "no"},
      {agent_permissions::approve_reads, "read", "yes"}, {agent_permissions::approve_reads, "search", "yes"},
      {agent_permissions::approve_reads, "edit", "no"},  {agent_permissions::approve_reads, "execute", "no"},
      {agent_permissions::approve_reads, "delete", "no"}};
  start();
  for (const auto& [policy, kind, chosen] : cases) {
    s_.settings.permissions = policy;
    auto t = s_.turn("permission " + kind);
    ASSERT_TRUE(t.done()) << kind;
    EXPECT_EQ(messages(t.events), chosen) << kind;
    const auto ends = all_of<tool_end>(t.events);
    ASSERT_EQ(ends.size(), 1u);
    EXPECT_EQ(ends[0].ok, chosen == "yes") << kind;
  }
}

TEST_F(acp_fake, the_agents_file_access_stays_in_the_workspace) {
  write(s_.workspace() / "notes.txt", "a\nb\nc\n");
  fs::create_symlink("/etc/hostname", s_.workspace() / "link-out");
  start();
  EXPECT_EQ(messages(s_.turn("read " + (s_.workspace() / "notes.txt").string() + " 2 2").events), "b\nc\n");
  for (const std::string& hostile : std::vector<std::string>{"../x", "/etc/passwd", (s_.workspace() / "link-out").string()}) {
    const auto text = messages(s_.turn("read " + hostile).events);
    EXPECT_EQ(text.rfind("error: ", 0), 0u) << hostile << " read: " << text;
  }
  EXPECT_EQ(messages(s_.turn("write " + (s_.workspace() / "made.txt").string() + " made it").events), "ok");
  EXPECT_EQ(read(s_.workspace() / "made.txt"), "made it");
  EXPECT_EQ(messages(s_.turn("write ../escaped.txt no").events).rfind("error: ", 0), 0u);
  EXPECT_FALSE(fs::exists(s_.workspace().parent_path() / "escaped.txt"));
  s_.settings.permissions = agent_permissions::deny_all;
  EXPECT_EQ(messages(s_.turn("write kept-out.txt no").events).rfind("error: ", 0), 0u);
  EXPECT_FALSE(fs::exists(s_.workspace() / "kept-out.txt"));
  EXPECT_EQ(messages(s_.turn("ask terminal/create").events), "-32601");
}

// The attack of a hostile agent: swap a workspace file for a symlink to a
// secret outside between Tether's check and its open. Each file call opens
// beneath the workspace with no link allowed on the way, so no read returns
// the secret and no write lands in it, however the swaps fall.
TEST_F(acp_fake, a_file_swapped_for_a_symlink_between_check_and_open_never_leaks_or_is_written_through) {
  const auto secret = s_.workspace().parent_path() / "token";
  write(secret, "TOP-SECRET");
  write(s_.workspace() / "f.txt", "inside");
  start();
  const auto path = (s_.workspace() / "f.txt").string();
  EXPECT_EQ(messages(s_.turn("race-read " + path + " " + secret.string() + " 3000").events), "leaked 0 of 3000");
  s_.settings.permissions = agent_permissions::approve_all;
  EXPECT_EQ(messages(s_.turn("race-write " + path + " " + secret.string() + " 300").events), "done 300");
  EXPECT_EQ(read(secret), "TOP-SECRET") << "a write went through the symlink";
}

// A FIFO in the workspace is refused at once, for writes and reads alike:
// an open would block a thread until someone opened the other end.
TEST_F(acp_fake, a_fifo_in_the_workspace_is_refused_without_blocking) {
  s_.settings.permissions = agent_permissions::approve_all;
  start();
  const auto t = s_.turn("fifo " + (s_.workspace() / "pipe").string(), 30s);
  ASSERT_TRUE(t.done()) << (t.error ? t.error->describe() : t.failure());
  const auto text = messages(t.events);
  EXPECT_NE(text.find("write: error: "), std::string::npos) << text;
  EXPECT_NE(text.find("read: error: "), std::string::npos) << text;
  EXPECT_NE(text.find("not a regular file"), std::string::npos) << text;
  EXPECT_EQ(file_work::pending(), 0U) << "no file request is left waiting";
}

TEST_F(acp_fake, a_tool_maps_to_start_and_end_and_an_unfinished_one_fails) {
  start();
  auto t = s_.turn("tool");
  ASSERT_TRUE(t.done());
  const auto starts = all_of<tool_start>(t.events);
  const auto ends = all_of<tool_end>(t.events);
  ASSERT_EQ(starts.size(), 2u);
  EXPECT_EQ(starts[0].input, json::parse(R"({"path":"x.txt"})"));
  ASSERT_EQ(ends.size(), 2u);
  EXPECT_TRUE(ends[0].ok);
  EXPECT_EQ(ends[0].output, "wrote it");
  EXPECT_FALSE(ends[1].ok);
  EXPECT_EQ(messages(t.events), "after");
}

TEST_F(acp_fake, a_loaded_session_continues_without_its_replay) {
  start();
  ASSERT_TRUE(s_.turn("echo one").done());
  auto again = s_.open("fake-1");
  ASSERT_TRUE(again) << again.error().describe();
  auto t = s_.turn("echo two");
  ASSERT_TRUE(t.done());
  EXPECT_EQ(messages(t.events), "two");  // not "REPLAYED"
  auto unknown = s_.open("fake-99");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error(), agent_errc::resume_refused);
  EXPECT_NE(unknown.error().message.find("-32002"), std::string::npos) << unknown.error().message;
}

TEST_F(acp_fake, an_agent_without_load_session_refuses_a_resume) {
  s_.env["FAKE_ACP_NO_LOAD"] = "1";
  ASSERT_TRUE(s_.start(python_agent));
  auto r = s_.open("fake-1");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), agent_errc::resume_refused);
}

TEST_F(acp_fake, cancel_ends_a_running_turn) {
  start();
  ASSERT_TRUE(s_.start_turn("wait"));
  auto first = s_.next();
  ASSERT_TRUE(first);
  EXPECT_EQ(std::get<text_piece>(first->at(0)).text, "waiting");
  s_.cancel();
  auto t = s_.rest_of_turn();
  EXPECT_NE(t.failure().find("cancelled"), std::string::npos) << t.failure();
  EXPECT_TRUE(s_.turn("echo after").done());
}

TEST_F(acp_fake, other_stop_reasons_and_errors_fail_the_turn) {
  start();
  EXPECT_NE(s_.turn("refuse").failure().find("refusal"), std::string::npos);
  EXPECT_NE(s_.turn("fail").failure().find("the model is gone"), std::string::npos);
  EXPECT_TRUE(s_.turn("echo still here").done());
}

TEST_F(acp_fake, an_agent_dying_mid_turn_ends_next_with_rpc_closed) {
  start();
  auto t = s_.turn("crash");
  ASSERT_TRUE(t.error);
  EXPECT_EQ(*t.error, agent_errc::rpc_closed);
  EXPECT_EQ(all_of<text_piece>(t.events).at(0).text, "about to crash");  // what came before is delivered
  EXPECT_FALSE(s_.start_turn("echo x"));
}

TEST_F(acp_fake, garbage_on_stdout_ends_next_with_protocol) {
  start();
  auto t = s_.turn("garbage");
  ASSERT_TRUE(t.error);
  EXPECT_EQ(*t.error, agent_errc::protocol);
}

TEST_F(acp_fake, close_returns_while_a_turn_runs) {
  start();
  ASSERT_TRUE(s_.start_turn("wait"));
  ASSERT_TRUE(s_.next());
  s_.stop();  // bounded inside
}

// --- the node fake agent of the runtime's tests -------------------------------------

class acp_node_fake : public testing::Test {
 protected:
  acp_node_fake() : s_(make_acp(acp_agent::any)) {}
  acp_session s_;
};

TEST_F(acp_node_fake, echoes_recalls_across_a_new_process_and_reports_usage) {
  ASSERT_TRUE(s_.start(node_agent));
  auto id = s_.open();
  ASSERT_TRUE(id) << id.error().describe();
  auto t = s_.turn("echo alpha");
  ASSERT_TRUE(t.done());
  EXPECT_EQ(messages(t.events), "alpha");
  const auto u = all_of<turn_usage>(t.events).at(0);
  EXPECT_EQ(u.usage.input_tokens, 3);   // ceil(10 / 4)
  EXPECT_EQ(u.usage.output_tokens, 2);  // ceil(5 / 4)
  ASSERT_TRUE(s_.turn("echo beta").done());
  s_.stop();

  ASSERT_TRUE(s_.start(node_agent, *id));  // a new process
  auto resumed = s_.open(*id);
  ASSERT_TRUE(resumed) << resumed.error().describe();
  auto r = s_.turn("recall");
  ASSERT_TRUE(r.done());
  EXPECT_EQ(messages(r.events), "echo alpha | echo beta");
}

TEST_F(acp_node_fake, slow_turns_cancel_and_crashes_close_the_connection) {
  ASSERT_TRUE(s_.start(node_agent));
  ASSERT_TRUE(s_.open());
  auto slow = s_.turn("slow 50");
  ASSERT_TRUE(slow.done());
  EXPECT_EQ(messages(slow.events), "slept 50");
  ASSERT_TRUE(s_.start_turn("slow 60000"));
  s_.cancel();
  EXPECT_NE(s_.rest_of_turn().failure().find("cancelled"), std::string::npos);
  auto crash = s_.turn("crash");
  ASSERT_TRUE(crash.error);
  EXPECT_EQ(*crash.error, agent_errc::rpc_closed);
  auto line = s_.run(s_.proc().read_line(process::stream::err), 10s);
  ASSERT_TRUE(line && *line);
  EXPECT_EQ(**line, "fake agent: crashing");
}

TEST_F(acp_node_fake, a_hung_agent_still_closes_in_time) {
  ASSERT_TRUE(s_.start(node_agent));
  ASSERT_TRUE(s_.open());
  ASSERT_TRUE(s_.start_turn("hang"));
  s_.stop();  // close() bounded inside, even though the agent never answers
}

TEST(acp_programs, the_acp_kind_is_only_ever_the_profiles_command) {
  auto none = find("acp");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error(), agent_errc::not_found);
  auto given = find("acp", {.command = python_agent.string()});
  ASSERT_TRUE(given) << given.error().message;
  EXPECT_EQ(given->where, found_in::command);
  EXPECT_EQ(make_acp(acp_agent::any)->program(), "acp");
  EXPECT_EQ(make_acp(acp_agent::codex)->program(), "codex-acp");
  EXPECT_EQ(make_acp(acp_agent::claude)->program(), "claude-agent-acp");
  EXPECT_EQ(make_acp(acp_agent::opencode)->program(), "opencode");
}

}  // namespace
}  // namespace tether::runtime::agent
