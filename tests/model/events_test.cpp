#include "model/events.h"

#include <limits>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "model/errors.h"

namespace tether::model {
namespace {

namespace json = boost::json;

// ---- field-by-field equality, one overload per payload type ----
bool same(const session_created& a, const session_created& b) {
  return a.title == b.title && a.workspace == b.workspace && a.profile == b.profile;
}
bool same(const session_updated& a, const session_updated& b) { return a.title == b.title; }
bool same(const session_reset& a, const session_reset& b) { return a.generation == b.generation; }
bool same(const session_forked& a, const session_forked& b) { return a == b; }
bool same(const input_admitted& a, const input_admitted& b) {
  return a.input == b.input && a.prompt == b.prompt && a.delivery == b.delivery && a.resume == b.resume;
}
bool same(const input_promoted& a, const input_promoted& b) { return a.input == b.input && a.execution == b.execution; }
bool same(const input_cancelled& a, const input_cancelled& b) { return a.input == b.input && a.reason == b.reason; }
bool same(const input_returned& a, const input_returned& b) {
  return a.input == b.input && a.execution == b.execution && a.reason == b.reason && a.returns == b.returns;
}
bool same(const execution_started& a, const execution_started& b) {
  return a.execution == b.execution && a.node == b.node && a.runtime == b.runtime;
}
bool same(const execution_recovered& a, const execution_recovered& b) {
  return a.execution == b.execution && a.node == b.node && a.attempt == b.attempt;
}
bool same(const execution_finished& a, const execution_finished& b) {
  return a.execution == b.execution && a.outcome == b.outcome && a.reason == b.reason && a.error == b.error &&
         a.usage == b.usage;
}
bool same(const step_started& a, const step_started& b) { return a.execution == b.execution && a.step == b.step; }
bool same(const step_ended& a, const step_ended& b) { return a.finish == b.finish && a.usage == b.usage; }
bool same(const step_failed& a, const step_failed& b) { return a.error == b.error; }
bool same(const step_retry_scheduled& a, const step_retry_scheduled& b) {
  return a.attempt == b.attempt && a.at_ms == b.at_ms && a.error == b.error;
}
bool same(const text_delta& a, const text_delta& b) { return a.text == b.text; }
bool same(const text_ended& a, const text_ended& b) { return a.message == b.message && a.text == b.text; }
bool same(const reasoning_delta& a, const reasoning_delta& b) { return a.text == b.text; }
bool same(const reasoning_ended& a, const reasoning_ended& b) { return a.text == b.text; }
bool same(const tool_called& a, const tool_called& b) {
  return a.call == b.call && a.tool == b.tool && a.input == b.input && a.kind == b.kind;
}
bool same(const tool_progress& a, const tool_progress& b) { return a.call == b.call && a.text == b.text; }
bool same(const tool_succeeded& a, const tool_succeeded& b) {
  return a.call == b.call && a.content == b.content && a.output_path == b.output_path;
}
bool same(const tool_failed& a, const tool_failed& b) { return a.call == b.call && a.error == b.error; }
bool same(const interaction_requested& a, const interaction_requested& b) {
  return a.interaction == b.interaction && a.call == b.call && a.kind == b.kind && a.payload == b.payload;
}
bool same(const interaction_resolved& a, const interaction_resolved& b) {
  return a.interaction == b.interaction && a.status == b.status && a.result == b.result;
}
bool same(const runtime_bound& a, const runtime_bound& b) {
  return a.runtime == b.runtime && a.external_session_id == b.external_session_id && a.generation == b.generation &&
         a.last_seen_seq == b.last_seen_seq && a.state == b.state;
}
bool same(const synthetic& a, const synthetic& b) { return a.text == b.text && a.reason == b.reason; }
bool same(const compaction_ended& a, const compaction_ended& b) {
  return a.summary == b.summary && a.kept_from_seq == b.kept_from_seq;
}

bool same(const env_lease_requested& a, const env_lease_requested& b) { return a == b; }
bool same(const env_lease_acquired& a, const env_lease_acquired& b) { return a == b; }
bool same(const env_lease_released& a, const env_lease_released& b) { return a == b; }
bool same(const env_workspace_synced& a, const env_workspace_synced& b) { return a == b; }
bool same(const agent_state_saved& a, const agent_state_saved& b) { return a == b; }
bool same(const agent_state_unavailable& a, const agent_state_unavailable& b) { return a == b; }
bool same(const task_created& a, const task_created& b) { return a == b; }
bool same(const task_updated& a, const task_updated& b) { return a == b; }
bool same(const task_status_changed& a, const task_status_changed& b) { return a == b; }
bool same(const task_commented& a, const task_commented& b) { return a == b; }
bool same(const document_revised& a, const document_revised& b) { return a == b; }
bool same(const document_accepted& a, const document_accepted& b) { return a == b; }
bool same(const task_prepared& a, const task_prepared& b) { return a == b; }

bool same_payload(const payload& a, const payload& b) {
  if (a.index() != b.index()) return false;
  return std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        return same(x, std::get<T>(b));
      },
      a);
}

const usage some_usage{.input_tokens = 1200,
                       .output_tokens = 340,
                       .cached_input_tokens = 1000,
                       .cost_usd = 0.0042,
                       .cost_status = "estimated"};

// One sample of every payload type with every field set to a non-default value.
std::vector<payload> full_samples() {
  const auto exe = execution_id::trusted("exe_01HZX");
  const auto call = call_id::trusted("call_abc-1");
  return {
      session_created{.title = "fix the build", .workspace = "/srv/ws/1", .profile = "default"},
      session_updated{.title = "renamed \xc3\xa9"},
      session_reset{.generation = 3},
      input_admitted{
          .input = input_id::trusted("msg_1"), .prompt = "hello\nworld", .delivery = delivery::queue, .resume = false},
      input_promoted{.input = input_id::trusted("msg_1"), .execution = exe},
      input_cancelled{.input = input_id::trusted("msg_2"), .reason = "user"},
      input_returned{.input = input_id::trusted("msg_1"), .execution = exe, .reason = "storage_failed", .returns = 2},
      execution_started{.execution = exe, .node = "node-a", .runtime = "codex"},
      execution_recovered{.execution = exe, .node = "node-b", .attempt = 4},
      execution_finished{
          .execution = exe, .outcome = outcome::interrupted, .reason = "user", .error = "stopped", .usage = some_usage},
      step_started{.execution = exe, .step = 7},
      step_ended{.finish = "tool_calls", .usage = some_usage},
      step_failed{.error = "rate limited"},
      step_retry_scheduled{.attempt = 2, .at_ms = 1'700'000'123'456, .error = "server error"},
      text_delta{.text = "par"},
      text_ended{.message = message_id::trusted("msg_assistant_1"), .text = "done \xf0\x9f\x98\x80"},
      reasoning_delta{.text = "thinking"},
      reasoning_ended{.text = "thought"},
      tool_called{.call = call,
                  .tool = "bash",
                  .input = json::parse(R"({"command":"ls","n":[1,2.5,null]})"),
                  .kind = tool_kind::agent},
      tool_progress{.call = call, .text = "50%"},
      tool_succeeded{.call = call, .content = "a\nb", .output_path = "/tmp/out.txt"},
      tool_failed{.call = call, .error = "exit 1"},
      interaction_requested{.interaction = interaction_id::trusted("int_q1"),
                            .call = call,
                            .kind = "question",
                            .payload = json::parse(R"({"question":"which?","options":["a","b"]})")},
      interaction_resolved{.interaction = interaction_id::trusted("int_q1"),
                           .status = "answered",
                           .result = json::parse(R"({"answer":"a"})")},
      runtime_bound{.runtime = "codex",
                    .external_session_id = "thread-123",
                    .generation = 2,
                    .last_seen_seq = 17,
                    .state = R"({"model":"gpt-5"})"},
      synthetic{.text = "Tether restarted; the previous turn was interrupted.", .reason = "restart"},
      compaction_ended{.summary = "so far: …", .kept_from_seq = 42},
      env_lease_requested{.environment = "box",
                          .key = "session-ses_1",
                          .provider_name = "tether-session-ses_1-0a1b2c3d",
                          .labels = json::parse(R"({"session":"ses_1"})").as_object()},
      env_lease_acquired{.environment = "box",
                         .provider_id = "ssh://agent@h:22/srv/tether/tether-session-ses_1-0a1b2c3d",
                         .outcome = "resumed",
                         .warm = true,
                         .workspace = "/srv/tether/tether-session-ses_1-0a1b2c3d/workspace"},
      env_lease_released{.environment = "box", .provider_id = "sbx-1", .reason = "idle"},
      env_workspace_synced{.direction = "down",
                           .tree_sha256 = std::string(64, 'a'),
                           .bytes = 10485760,
                           .entries = 72,
                           .dropped = 1,
                           .cleared = 2},
      agent_state_saved{.kind = "claude-print",
                        .agent_session = "5f0c-agent",
                        .generation = 2,
                        .workspace = "/srv/data/workspaces/ses_1",
                        .manifest = {state_file{".claude/projects/-srv-data/5f0c-agent.jsonl",
                                                (1 << 20) + 5,
                                                0600,
                                                {std::string(64, 'a'), std::string(64, 'b')}},
                                     state_file{"empty.txt", 0, 0644, {}}},
                        .bytes = (1 << 20) + 5,
                        .stored = 9000},
      agent_state_unavailable{.kind = "codex", .agent_session = "th_1", .reason = "restore failed"},
      session_forked{.from = session_id::generate(), .fork = session_id::generate(), .at = 12, .snapshot = "abc"},
      task_created{.task = task_id::trusted("tsk_1"),
                   .title = "fix the build",
                   .description = "on arm64",
                   .status = task_status::backlog,
                   .mode = work_mode::planning,
                   .priority = 3,
                   .project = project_id::trusted("prj_1"),
                   .parent = task_id::trusted("tsk_0"),
                   .actor = "agent"},
      task_updated{.title = "t",
                   .description = "d",
                   .priority = -1,
                   .mode = work_mode::ask,
                   .project = project_id::trusted("prj_2"),
                   .actor = "user"},
      task_status_changed{.from = task_status::in_progress, .to = task_status::done, .actor = "agent", .reason = "ok"},
      task_commented{.comment = comment_id::trusted("cmt_1"), .author = "user", .text = "looks good"},
      document_revised{.document = "plan",
                       .revision = revision_id::trusted("rev_2"),
                       .base = revision_id::trusted("rev_1"),
                       .content = "1. a\n2. b",
                       .author = "agent"},
      document_accepted{.document = "plan", .revision = revision_id::trusted("rev_2"), .actor = "user"},
      task_prepared{.record = json::parse(R"({"session":{"decision":"reset","reasons":["model"]}})").as_object()},
  };
}

result<payload> round_trip(const payload& p) {
  // Through text, as the store does.
  const auto text = json::serialize(encode(p));
  return decode(type_name(p), type_version(p), json::parse(text).as_object());
}

TEST(catalogue, samples_cover_every_payload_type) {
  std::set<std::size_t> indices;
  for (const auto& p : full_samples()) indices.insert(p.index());
  EXPECT_EQ(indices.size(), std::variant_size_v<payload>);
}

TEST(catalogue, every_type_round_trips_encode_decode_with_equal_fields) {
  for (const auto& p : full_samples()) {
    auto back = round_trip(p);
    ASSERT_TRUE(back) << type_name(p) << ": " << back.error().describe();
    EXPECT_TRUE(same_payload(p, *back)) << type_name(p) << " " << json::serialize(encode(p));
  }
}

TEST(catalogue, optional_fields_left_empty_round_trip_as_empty) {
  const std::vector<payload> minimal = {
      execution_finished{.execution = execution_id::trusted("exe_1"), .outcome = outcome::succeeded},
      tool_succeeded{.call = call_id::trusted("call_1"), .content = "x"},
      interaction_requested{.interaction = interaction_id::trusted("int_1"), .kind = "plan_confirmation"},
      session_created{},
  };
  for (const auto& p : minimal) {
    auto back = round_trip(p);
    ASSERT_TRUE(back) << type_name(p) << ": " << back.error().describe();
    EXPECT_TRUE(same_payload(p, *back)) << type_name(p);
  }
  EXPECT_FALSE(encode(minimal[0]).contains("reason"));
  EXPECT_FALSE(encode(minimal[1]).contains("output_path"));
  EXPECT_FALSE(encode(minimal[2]).contains("call_id"));
}

TEST(catalogue, type_names_are_unique_and_known) {
  std::set<std::string> names;
  for (const auto& p : full_samples()) {
    EXPECT_TRUE(names.insert(std::string(type_name(p))).second) << type_name(p);
    EXPECT_TRUE(is_known_type(type_name(p)));
    // execution.started is at version 3 (runtime, then model); input.admitted
    // (resume), tool.called (kind) and runtime.bound (generation,
    // last_seen_seq, state) at 2; every other type is at 1.
    const std::set<std::string_view> second = {"input.admitted", "tool.called", "runtime.bound"};
    const int expected = type_name(p) == "execution.started" ? 3 : second.contains(type_name(p)) ? 2 : 1;
    EXPECT_EQ(type_version(p), expected) << type_name(p);
  }
  EXPECT_FALSE(is_known_type("no.such.type"));
  EXPECT_FALSE(is_known_type(""));
  EXPECT_FALSE(is_known_type("input.admitted "));
}

TEST(catalogue, deltas_and_progress_are_ephemeral_everything_else_durable) {
  const std::set<std::string> ephemeral = {"text.delta", "reasoning.delta", "tool.progress"};
  for (const auto& p : full_samples()) {
    const auto expected = ephemeral.contains(std::string(type_name(p))) ? durability::ephemeral : durability::durable;
    EXPECT_EQ(type_durability(p), expected) << type_name(p);
  }
}

TEST(catalogue, core_names_match_the_design) {
  EXPECT_EQ(type_name(input_admitted{}), "input.admitted");
  EXPECT_EQ(type_name(execution_finished{}), "execution.finished");
  EXPECT_EQ(type_name(tool_called{}), "tool.called");
  EXPECT_EQ(type_name(synthetic{}), "synthetic");
  EXPECT_EQ(type_name(session_reset{}), "session.reset");
}

TEST(decode, unknown_type_is_undecodable) {
  auto r = decode("input.teleported", 1, json::object{{"input_id", "msg_1"}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), model_errc::undecodable);
  EXPECT_NE(r.error().message.find("input.teleported"), std::string::npos);
}

TEST(decode, unsupported_version_is_undecodable) {
  const auto data = encode(input_admitted{.input = input_id::trusted("msg_1"), .prompt = "p"});
  for (int v : {0, 3, -1, 1000}) {
    auto r = decode("input.admitted", v, data);
    ASSERT_FALSE(r) << v;
    EXPECT_EQ(r.error(), model_errc::undecodable) << v;
  }
  EXPECT_TRUE(decode("input.admitted", 1, data));
  EXPECT_TRUE(decode("input.admitted", 2, data));
  EXPECT_FALSE(decode("session.created", 2, encode(session_created{})));
}

TEST(decode, a_version_1_admission_reads_as_resume_true_as_the_api_defaulted) {
  // A row written before `resume` was recorded: its payload has no such key.
  const auto v1 = json::parse(R"({"input_id":"msg_1","prompt":"p","delivery":"queue"})").as_object();
  auto r = decode("input.admitted", 1, v1);
  ASSERT_TRUE(r) << r.error().describe();
  const auto& a = std::get<input_admitted>(*r);
  EXPECT_TRUE(a.resume);
  EXPECT_EQ(a.delivery, delivery::queue);
}

TEST(decode, a_version_2_admission_keeps_resume_false_and_requires_the_field) {
  const auto data = encode(input_admitted{.input = input_id::trusted("msg_1"), .prompt = "p", .resume = false});
  EXPECT_EQ(data.at("resume"), false);
  auto r = decode("input.admitted", 2, data);
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_FALSE(std::get<input_admitted>(*r).resume);

  auto missing = data;
  missing.erase("resume");
  EXPECT_FALSE(decode("input.admitted", 2, missing));
  auto mistyped = data;
  mistyped["resume"] = "no";
  EXPECT_FALSE(decode("input.admitted", 2, mistyped));
}

TEST(decode, a_version_1_execution_start_ran_the_native_runtime) {
  const auto v1 = json::parse(R"({"execution_id":"exe_1","node":"n/1"})").as_object();
  auto r = decode("execution.started", 1, v1);
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_EQ(std::get<execution_started>(*r).runtime, "native");
  EXPECT_FALSE(decode("execution.started", 2, v1)) << "version 2 records its runtime";
}

TEST(decode, an_execution_start_before_version_3_names_no_model) {
  const auto v2 = json::parse(R"({"execution_id":"exe_1","node":"n/1","runtime":"codex"})").as_object();
  auto r = decode("execution.started", 2, v2);
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_EQ(std::get<execution_started>(*r).model, "");
  const auto encoded = encode(execution_started{execution_id::trusted("exe_1"), "n/1", "native", "gpt-x at https://api.openai.com/v1"});
  auto back = decode("execution.started", 3, encoded);
  ASSERT_TRUE(back) << back.error().describe();
  EXPECT_EQ(std::get<execution_started>(*back).model, "gpt-x at https://api.openai.com/v1");
}

TEST(decode, a_version_1_tool_call_reads_its_hosted_flag_as_its_kind) {
  auto hosted = decode("tool.called", 1, json::parse(R"({"call_id":"call_1","name":"web","hosted":true})").as_object());
  ASSERT_TRUE(hosted) << hosted.error().describe();
  EXPECT_EQ(std::get<tool_called>(*hosted).kind, tool_kind::hosted);
  auto local = decode("tool.called", 1, json::parse(R"({"call_id":"call_1","name":"bash"})").as_object());
  ASSERT_TRUE(local) << local.error().describe();
  EXPECT_EQ(std::get<tool_called>(*local).kind, tool_kind::local);
}

TEST(decode, a_version_2_tool_call_names_a_known_kind) {
  const auto data = encode(tool_called{.call = call_id::trusted("call_1"), .tool = "x", .kind = tool_kind::agent});
  EXPECT_EQ(data.at("kind"), "agent");
  EXPECT_FALSE(data.contains("hosted"));
  auto unknown = data;
  unknown["kind"] = "remote";
  EXPECT_FALSE(decode("tool.called", 2, unknown));
  auto missing = data;
  missing.erase("kind");
  EXPECT_FALSE(decode("tool.called", 2, missing));
}

TEST(decode, a_version_1_binding_reads_with_no_generation_and_re_encodes_without_one) {
  const auto v1 = json::parse(R"({"runtime":"codex","external_session_id":"t-1"})").as_object();
  auto old = decode("runtime.bound", 1, v1);
  ASSERT_TRUE(old) << old.error().describe();
  const auto& b = std::get<runtime_bound>(*old);
  EXPECT_FALSE(b.generation.has_value());
  EXPECT_EQ(b.external_session_id, "t-1");
  EXPECT_FALSE(encode(b).contains("generation"));
  auto again = decode("runtime.bound", 2, encode(b));
  ASSERT_TRUE(again) << "what decodes re-encodes at the current version";
  EXPECT_FALSE(std::get<runtime_bound>(*again).generation.has_value());
}

TEST(decode, a_binding_state_larger_than_16_kib_does_not_decode) {
  runtime_bound b{.runtime = "codex", .generation = 0};
  b.state.assign(runtime_bound::max_state_bytes, 'x');
  EXPECT_TRUE(decode("runtime.bound", 2, encode(b)));
  b.state.push_back('x');
  auto r = decode("runtime.bound", 2, encode(b));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("16384"), std::string::npos) << r.error().message;
}

TEST(enums, tool_kind_names_round_trip) {
  for (auto k : {tool_kind::local, tool_kind::hosted, tool_kind::agent}) EXPECT_EQ(parse_tool_kind(to_string(k)), k);
  EXPECT_FALSE(parse_tool_kind("Hosted"));
}

TEST(decode, missing_required_field_is_undecodable) {
  const auto samples = full_samples();
  auto sample_of = [&](std::string_view name) {
    for (const auto& p : samples)
      if (type_name(p) == name) return p;
    ADD_FAILURE() << name;
    return samples.front();
  };
  const std::vector<std::pair<std::string_view, const char*>> required = {
      {"input.admitted", "input_id"},
      {"input.admitted", "prompt"},
      {"input.admitted", "delivery"},
      {"input.promoted", "input_id"},
      {"input.promoted", "execution_id"},
      {"execution.started", "execution_id"},
      {"execution.started", "node"},
      {"execution.finished", "outcome"},
      {"execution.finished", "execution_id"},
      {"execution.recovered", "attempt"},
      {"step.started", "step"},
      {"text.ended", "text"},
      {"tool.called", "call_id"},
      {"tool.called", "name"},
      {"tool.failed", "error"},
      {"interaction.requested", "kind"},
      {"interaction.resolved", "status"},
      {"synthetic", "text"},
      {"compaction.ended", "kept_from_seq"},
      {"env.lease.requested", "key"},
      {"env.lease.acquired", "provider_id"},
      {"env.lease.acquired", "outcome"},
      {"env.lease.released", "reason"},
      {"env.workspace.synced", "tree_sha256"},
      {"env.workspace.synced", "direction"},
      {"session.updated", "title"},
  };
  for (const auto& [type, field] : required) {
    auto data = encode(sample_of(type));
    ASSERT_TRUE(data.erase(field)) << type << "." << field;
    auto r = decode(type, 1, data);
    ASSERT_FALSE(r) << type << " without " << field;
    EXPECT_EQ(r.error(), model_errc::undecodable);
    EXPECT_NE(r.error().message.find(field), std::string::npos) << r.error().message;
  }
}

TEST(decode, mistyped_field_is_undecodable) {
  const std::vector<std::tuple<std::string_view, json::object>> cases = {
      {"input.admitted", {{"input_id", "msg_1"}, {"prompt", 5}, {"delivery", "steer"}}},
      {"input.admitted", {{"input_id", 12}, {"prompt", "p"}, {"delivery", "steer"}}},
      {"input.admitted", {{"input_id", "ses_1"}, {"prompt", "p"}, {"delivery", "steer"}}},  // wrong id kind
      {"input.admitted", {{"input_id", "msg_a b"}, {"prompt", "p"}, {"delivery", "steer"}}},
      {"input.admitted", {{"input_id", "msg_1"}, {"prompt", "p"}, {"delivery", "later"}}},
      {"input.admitted", {{"input_id", "msg_1"}, {"prompt", "p"}, {"delivery", true}}},
      {"step.started", {{"execution_id", "exe_1"}, {"step", "seven"}}},
      {"step.started", {{"execution_id", "exe_1"}, {"step", 1.5}}},
      {"step.started", {{"execution_id", "exe_1"}, {"step", 18446744073709551615ULL}}},
      {"tool.called", {{"call_id", "call_1"}, {"name", "bash"}, {"hosted", "yes"}}},
      {"execution.finished", {{"execution_id", "exe_1"}, {"outcome", "exploded"}}},
      {"execution.finished", {{"execution_id", "exe_1"}, {"outcome", "succeeded"}, {"usage", 5}}},
      {"execution.finished",
       {{"execution_id", "exe_1"}, {"outcome", "succeeded"}, {"usage", {{"input_tokens", "many"}}}}},
      {"step.ended", {{"finish", json::array{"stop"}}}},
      {"session.updated", {{"title", json::object{}}}},
  };
  for (const auto& [type, data] : cases) {
    auto r = decode(type, 1, data);
    ASSERT_FALSE(r) << type << " " << json::serialize(data);
    EXPECT_EQ(r.error(), model_errc::undecodable);
  }
}

TEST(decode, any_field_removed_or_replaced_never_crashes) {
  // Hostile stored rows: every field of every sample, removed or replaced by
  // each JSON kind. The result is a payload or undecodable, nothing else.
  const std::vector<json::value> replacements = {
      nullptr, true, -1, 18446744073709551615ULL, 0.5, "", "x", json::array{1}, json::object{{"k", 1}}};
  for (const auto& p : full_samples()) {
    const auto base = encode(p);
    for (const auto& field : base) {
      auto without = base;
      without.erase(field.key());
      auto r = decode(type_name(p), 1, without);
      if (!r) {
        EXPECT_EQ(r.error(), model_errc::undecodable);
      }
      for (const auto& v : replacements) {
        auto changed = base;
        changed[field.key()] = v;
        auto r2 = decode(type_name(p), 1, changed);
        if (!r2) {
          EXPECT_EQ(r2.error(), model_errc::undecodable) << type_name(p) << "." << field.key();
        }
      }
    }
    auto r = decode(type_name(p), 1, json::object{});
    if (!r) {
      EXPECT_EQ(r.error(), model_errc::undecodable);
    }
  }
}

TEST(decode, undecodable_has_its_own_category) {
  const std::error_code c = model_errc::undecodable;
  EXPECT_STREQ(c.category().name(), "model");
  EXPECT_EQ(c.message(), "undecodable event");
}

TEST(to_json, has_the_public_event_shape) {
  event e{.id = event_id::trusted("evt_1"),
          .session = session_id::trusted("ses_1"),
          .seq = event_seq{5},
          .time = 1'700'000'000'123,
          .body = input_admitted{.input = input_id::trusted("msg_9"), .prompt = "hi", .delivery = delivery::steer}};
  const auto j = to_json(e);
  EXPECT_EQ(j.size(), 7U);
  EXPECT_EQ(j.at("id"), "evt_1");
  EXPECT_EQ(j.at("session_id"), "ses_1");
  EXPECT_EQ(j.at("seq").as_int64(), 5);
  EXPECT_EQ(j.at("type"), "input.admitted");
  EXPECT_EQ(j.at("version").as_int64(), 2);
  EXPECT_EQ(j.at("time").as_int64(), 1'700'000'000'123);
  const auto& data = j.at("data").as_object();
  EXPECT_EQ(data.at("input_id"), "msg_9");
  EXPECT_EQ(data.at("prompt"), "hi");
  EXPECT_EQ(data.at("delivery"), "steer");
  EXPECT_EQ(e.type(), "input.admitted");
  ASSERT_NE(e.as<input_admitted>(), nullptr);
  EXPECT_EQ(e.as<tool_called>(), nullptr);
}

TEST(to_json, data_equals_encode) {
  for (const auto& p : full_samples()) {
    event e{.id = event_id::trusted("evt_x"), .session = session_id::trusted("ses_x"), .seq = event_seq{1}, .body = p};
    EXPECT_EQ(to_json(e).at("data"), json::value(encode(p))) << type_name(p);
  }
}

TEST(enums, delivery_and_outcome_names_round_trip) {
  for (auto d : {delivery::steer, delivery::queue}) EXPECT_EQ(parse_delivery(to_string(d)), d);
  for (auto o : {outcome::succeeded, outcome::failed, outcome::interrupted, outcome::waiting})
    EXPECT_EQ(parse_outcome(to_string(o)), o);
  EXPECT_FALSE(parse_delivery("Steer"));
  EXPECT_FALSE(parse_outcome(""));
}

TEST(usage, adds_fieldwise) {
  usage u{.input_tokens = 1, .output_tokens = 2, .cached_input_tokens = 3};
  u += usage{.input_tokens = 10, .output_tokens = 20, .cached_input_tokens = 30};
  EXPECT_EQ(u, (usage{.input_tokens = 11, .output_tokens = 22, .cached_input_tokens = 33}));
}

// Found by fuzz/events (fuzz/regressions/events/usage-sum-overflow): stored
// token counts near the int64 bounds made the sum undefined behaviour.
TEST(usage, a_sum_past_the_bounds_stops_at_them) {
  const auto huge = std::numeric_limits<std::int64_t>::max() - 10;
  usage u{.input_tokens = huge, .output_tokens = -huge, .cached_input_tokens = 5};
  u += usage{.input_tokens = huge, .output_tokens = -huge, .cached_input_tokens = 6};
  EXPECT_EQ(u.input_tokens, std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(u.output_tokens, std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(u.cached_input_tokens, 11);
}

TEST(usage, costs_add_and_an_unpriced_part_makes_the_sum_partial) {
  usage u{.cost_usd = 0.5, .cost_status = "reported"};
  u += usage{.cost_usd = 0.25, .cost_status = "reported"};
  EXPECT_EQ(u.cost_usd, 0.75);
  EXPECT_EQ(u.cost_status, "reported");
  u += usage{.cost_usd = 0.25, .cost_status = "estimated"};
  EXPECT_EQ(u.cost_status, "estimated");
  u += usage{.input_tokens = 5, .cost_status = "unpriced"};
  EXPECT_EQ(u.cost_usd, 1.0) << "an unpriced step adds no cost, never a zero that looks like a price";
  EXPECT_EQ(u.cost_status, "partial");
}

TEST(usage, nothing_priced_keeps_the_cost_empty) {
  usage u{.input_tokens = 1, .cost_status = "unpriced"};
  u += usage{.input_tokens = 2, .cost_status = "unpriced"};
  EXPECT_FALSE(u.cost_usd.has_value());
  EXPECT_EQ(u.cost_status, "unpriced");
}

// An infinite cost would be written as `Infinity`, which is not JSON and
// would not read back: it is left out of the event.
TEST(usage, a_cost_that_is_not_finite_is_not_encoded) {
  step_ended e{.finish = "stop",
               .usage = usage{.input_tokens = 3, .cost_usd = std::numeric_limits<double>::infinity(),
                              .cost_status = "reported"},
               .agent_cost_usd = std::numeric_limits<double>::quiet_NaN()};
  const auto o = encode(payload{e});
  const auto text = boost::json::serialize(o);
  boost::system::error_code ec;
  (void)boost::json::parse(text, ec);
  EXPECT_FALSE(ec) << text;
  EXPECT_FALSE(o.at("usage").as_object().contains("cost_usd")) << text;
  EXPECT_FALSE(o.contains("agent_cost_usd")) << text;
  EXPECT_EQ(o.at("usage").at("input_tokens").as_int64(), 3);
}

}  // namespace
}  // namespace tether::model

namespace tether::model {
namespace {

// A number past a double's range parses as infinity (there is none in JSON
// text): a stored usage holding one is refused, since it could never be
// written back (found by fuzz.events: {"cost_usd": 99E9004}).
TEST(catalogue, a_cost_past_a_doubles_range_is_refused_not_decoded_as_infinity) {
  const auto parsed = boost::json::parse(R"({"input_tokens": 1, "cost_usd": 99E9004})");
  ASSERT_TRUE(parsed.is_object());
  auto u = decode_usage(parsed);
  ASSERT_FALSE(u.has_value());
  EXPECT_NE(u.error().message.find("not a finite number"), std::string::npos) << u.error().message;
  // A finite cost still decodes and round-trips.
  auto fine = decode_usage(boost::json::parse(R"({"input_tokens": 1, "cost_usd": 0.25})"));
  ASSERT_TRUE(fine.has_value());
  EXPECT_EQ(*decode_usage(encode_usage(*fine)), *fine);
}

TEST(decode, a_lease_outcome_or_a_sync_direction_that_is_not_known_is_undecodable) {
  auto acquired = encode(env_lease_acquired{.environment = "e", .provider_id = "p", .outcome = "created"});
  acquired["outcome"] = "borrowed";
  auto a = decode("env.lease.acquired", 1, acquired);
  ASSERT_FALSE(a);
  EXPECT_NE(a.error().message.find("outcome"), std::string::npos);
  auto synced = encode(env_workspace_synced{.direction = "up", .tree_sha256 = "x"});
  synced["direction"] = "sideways";
  EXPECT_FALSE(decode("env.workspace.synced", 1, synced));
  auto requested = encode(env_lease_requested{.environment = "e", .key = "k", .provider_name = "n"});
  requested["labels"] = json::object{{"session", 7}};
  EXPECT_FALSE(decode("env.lease.requested", 1, requested));
}

TEST(decode, an_agent_state_manifest_must_stay_in_the_home_and_its_chunks_must_hold_its_size) {
  const auto with = [](std::string path, std::int64_t size, std::vector<std::string> chunks) {
    return encode(agent_state_saved{.kind = "codex",
                                    .agent_session = "th",
                                    .manifest = {state_file{std::move(path), size, 0600, std::move(chunks)}}});
  };
  const std::string sha(64, 'c');
  EXPECT_TRUE(decode("agent.state.saved", 1, with(".codex/sessions/a.jsonl", 10, {sha})));
  for (const std::string path : {"../x", "/etc/passwd", "a/../../x", "a/./b", "a//b", "", "a/"})
    EXPECT_FALSE(decode("agent.state.saved", 1, with(path, 10, {sha}))) << path;
  EXPECT_FALSE(decode("agent.state.saved", 1, with("a", 10, {"not-a-sha"})));
  EXPECT_FALSE(decode("agent.state.saved", 1, with("a", 10, {std::string(64, 'C')}))) << "lowercase hex only";
  EXPECT_FALSE(decode("agent.state.saved", 1, with("a", (1 << 20) + 1, {sha}))) << "one chunk holds at most 1 MiB";
  EXPECT_FALSE(decode("agent.state.saved", 1, with("a", 10, {sha, sha}))) << "a chunk too many";
  EXPECT_FALSE(decode("agent.state.saved", 1, with("a", 0, {sha})));
  EXPECT_FALSE(decode("agent.state.saved", 1, with("a", -1, {})));
}

}  // namespace
}  // namespace tether::model
