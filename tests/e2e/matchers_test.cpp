#include "e2e/matchers.h"

#include <gtest/gtest.h>

namespace tether::e2e {
namespace {

const template_values values{"a1b2c3d4e5f6-1", "core.native.local.basic"};
const std::string marker = "MARK-a1b2c3d4e5f6-1";

observed_message user(std::string text) { return {"user", std::move(text), ""}; }
observed_message assistant(std::string text, std::string run) { return {"assistant", std::move(text), std::move(run)}; }

observed_run run(std::string id, std::string outcome = "succeeded", std::int64_t in = 10, std::int64_t out = 5) {
  observed_run r;
  r.id = std::move(id);
  r.outcome = std::move(outcome);
  r.input_tokens = in;
  r.output_tokens = out;
  r.usage_reported = in + out > 0;
  return r;
}

matcher_spec spec(matcher_kind k) {
  matcher_spec m;
  m.kind = k;
  return m;
}
matcher_spec text_spec(matcher_kind k, std::string text, std::int64_t count = 0) {
  auto m = spec(k);
  m.text = std::move(text);
  m.count = count;
  return m;
}

matcher_result judge(const matcher_spec& m, const observation& o) {
  auto results = evaluate({m}, o, values);
  EXPECT_EQ(results.size(), 1U);
  return results.empty() ? matcher_result{} : results.front();
}

bool mentions(const std::string& text, std::string_view word) { return text.find(word) != std::string::npos; }

// ---- normalization and display ----

TEST(normalize, crlf_whitespace_runs_and_edges_collapse) {
  EXPECT_EQ(normalize("  a\r\nb \t\t c  \n"), "a b c");
  EXPECT_EQ(normalize("line1\r\nline2\r\n"), "line1 line2");
  EXPECT_EQ(normalize(" \n\t "), "");
  EXPECT_EQ(normalize("exact"), "exact");
}

TEST(trim_for_display, short_text_is_unchanged) {
  EXPECT_EQ(trim_for_display("hello", 5), "hello");
  EXPECT_EQ(trim_for_display("hello", 400), "hello");
}

TEST(trim_for_display, cuts_at_a_utf8_boundary_with_an_ellipsis) {
  const std::string e_acute = "\xC3\xA9";  // é, two bytes
  const std::string text = e_acute + e_acute + e_acute;
  EXPECT_EQ(trim_for_display(text, 3), e_acute + "…");  // byte 3 is inside the second é
  EXPECT_EQ(trim_for_display(text, 4), e_acute + e_acute + "…");
  EXPECT_EQ(trim_for_display("abcdef", 3), "abc…");
  const std::string euro = "\xE2\x82\xAC";  // €, three bytes
  EXPECT_EQ(trim_for_display("a" + euro + "b", 3), "a…");
}

// ---- message_exact ----

TEST(message_exact, passes_on_the_last_runs_final_assistant_text_after_normalizing) {
  observation o;
  o.runs = {run("r1"), run("r2")};
  o.messages = {user("say it"), assistant("first", "r1"), user("again"), assistant("thinking", "r2"),
                assistant("  " + marker + "\r\n", "r2")};
  auto r = judge(text_spec(matcher_kind::message_exact, "{marker}"), o);
  EXPECT_TRUE(r.passed) << r.why;
  EXPECT_TRUE(r.why.empty());
  EXPECT_EQ(r.kind, "message_exact");
  EXPECT_EQ(r.description, "message_exact \"" + marker + "\"");
  EXPECT_EQ(r.expected, marker);
  EXPECT_EQ(r.actual, marker);
}

TEST(message_exact, uses_the_last_run_that_has_an_assistant_message) {
  observation o;
  o.runs = {run("r1"), run("r2", "failed")};  // r2 produced nothing
  o.messages = {assistant(marker, "r1"), user("more")};
  EXPECT_TRUE(judge(text_spec(matcher_kind::message_exact, "{marker}"), o).passed);
}

TEST(message_exact, an_earlier_match_does_not_count) {
  observation o;
  o.runs = {run("r1"), run("r2")};
  o.messages = {assistant(marker, "r1"), assistant("something else", "r2")};
  auto r = judge(text_spec(matcher_kind::message_exact, "{marker}"), o);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.actual, "something else");
  EXPECT_TRUE(mentions(r.why, "differs")) << r.why;
}

TEST(message_exact, more_text_around_the_marker_fails) {
  observation o;
  o.runs = {run("r1")};
  o.messages = {assistant("Sure! " + marker, "r1")};
  auto r = judge(text_spec(matcher_kind::message_exact, "{marker}"), o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(mentions(r.why, "contains the text")) << r.why;
}

TEST(message_exact, no_assistant_message_fails) {
  observation o;
  o.messages = {user("hello")};
  auto r = judge(text_spec(matcher_kind::message_exact, "{marker}"), o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(mentions(r.why, "no assistant message")) << r.why;
}

TEST(message_exact, a_template_that_does_not_expand_fails_with_the_reason) {
  observation o;
  o.messages = {assistant("x", "r1")};
  auto r = judge(text_spec(matcher_kind::message_exact, "{markr}"), o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(mentions(r.why, "{markr}")) << r.why;
  EXPECT_TRUE(mentions(r.description, "message_exact")) << r.description;
}

TEST(message_exact, a_long_text_is_trimmed_in_the_description) {
  observation o;
  o.messages = {assistant(std::string(500, 'x'), "r1")};
  auto r = judge(text_spec(matcher_kind::message_exact, std::string(500, 'y')), o);
  EXPECT_FALSE(r.passed);
  EXPECT_LT(r.description.size(), 80U);
  EXPECT_TRUE(mentions(r.description, "…"));
  EXPECT_EQ(r.actual, std::string(400, 'x') + "…");
}

// ---- message_occurrences ----

TEST(message_occurrences, counts_non_overlapping_occurrences_across_messages) {
  observation o;
  o.messages = {assistant("aaaa", "r1"), user("aa aa aa"), assistant("x aa", "r2")};
  auto r = judge(text_spec(matcher_kind::message_occurrences, "aa", 3), o);
  EXPECT_TRUE(r.passed) << r.why << " " << r.actual;
  auto wrong = judge(text_spec(matcher_kind::message_occurrences, "aa", 4), o);
  EXPECT_FALSE(wrong.passed);
  EXPECT_TRUE(mentions(wrong.why, "3 time(s)")) << wrong.why;
  EXPECT_TRUE(mentions(wrong.actual, "3")) << wrong.actual;
}

TEST(message_occurrences, aaaa_contains_aa_twice) {
  observation o;
  o.messages = {assistant("aaaa", "r1")};
  EXPECT_TRUE(judge(text_spec(matcher_kind::message_occurrences, "aa", 2), o).passed);
  EXPECT_FALSE(judge(text_spec(matcher_kind::message_occurrences, "aa", 3), o).passed);
}

TEST(message_occurrences, a_text_spanning_two_messages_does_not_count) {
  observation o;
  o.messages = {assistant("MARK1-", "r1"), assistant("a1b2c3d4e5f6-1", "r1")};
  EXPECT_TRUE(judge(text_spec(matcher_kind::message_occurrences, "{marker1}", 0), o).passed);
}

TEST(message_occurrences, whitespace_is_normalized_on_both_sides) {
  observation o;
  o.messages = {assistant("one\r\n  two", "r1")};
  EXPECT_TRUE(judge(text_spec(matcher_kind::message_occurrences, "one\ntwo", 1), o).passed);
}

// ---- message_ordered ----

matcher_spec ordered(std::vector<std::string> texts) {
  auto m = spec(matcher_kind::message_ordered);
  m.texts = std::move(texts);
  return m;
}

TEST(message_ordered, passes_when_texts_occur_in_order_across_messages) {
  observation o;
  o.messages = {assistant("first MARK1-a1b2c3d4e5f6-1", "r1"), user("MARK2-a1b2c3d4e5f6-1"),
                assistant("then MARK2-a1b2c3d4e5f6-1", "r2")};
  auto r = judge(ordered({"{marker1}", "{marker2}"}), o);
  EXPECT_TRUE(r.passed) << r.why;
  EXPECT_TRUE(mentions(r.description, "message_ordered")) << r.description;
}

TEST(message_ordered, out_of_order_fails) {
  observation o;
  o.messages = {assistant("MARK2-a1b2c3d4e5f6-1 then MARK1-a1b2c3d4e5f6-1", "r1")};
  auto r = judge(ordered({"{marker1}", "{marker2}"}), o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(mentions(r.why, "does not occur after")) << r.why;
}

TEST(message_ordered, a_missing_text_fails_naming_it) {
  observation o;
  o.messages = {assistant("MARK1-a1b2c3d4e5f6-1", "r1")};
  auto r = judge(ordered({"{marker1}", "{marker3}"}), o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(mentions(r.why, "MARK3-a1b2c3d4e5f6-1")) << r.why;
  EXPECT_TRUE(mentions(r.why, "does not occur in")) << r.why;
}

TEST(message_ordered, each_text_is_found_after_the_end_of_the_previous) {
  observation o;
  o.messages = {assistant("abc", "r1")};
  EXPECT_FALSE(judge(ordered({"abc", "c"}), o).passed);
  EXPECT_TRUE(judge(ordered({"ab", "c"}), o).passed);
}

TEST(message_ordered, a_template_that_does_not_expand_fails) {
  observation o;
  o.messages = {assistant("x", "r1")};
  auto r = judge(ordered({"x", "{oops}"}), o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(mentions(r.why, "{oops}")) << r.why;
}

// ---- message_absent ----

TEST(message_absent, passes_when_no_assistant_message_has_the_text) {
  observation o;
  o.messages = {user("NO_PHRASE"), assistant("all good", "r1")};
  auto r = judge(text_spec(matcher_kind::message_absent, "NO_PHRASE"), o);
  EXPECT_TRUE(r.passed) << r.why;
}

TEST(message_absent, fails_naming_the_message_that_has_it) {
  observation o;
  o.messages = {assistant("fine", "r1"), assistant("oops NO_PHRASE here", "r2")};
  auto r = judge(text_spec(matcher_kind::message_absent, "NO_PHRASE"), o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(mentions(r.why, "message 2 of 2")) << r.why;
  EXPECT_EQ(r.actual, "oops NO_PHRASE here");
}

// ---- file_exact ----

matcher_spec file(std::string path, std::string content) {
  auto m = spec(matcher_kind::file_exact);
  m.path = std::move(path);
  m.content = std::move(content);
  return m;
}

TEST(file_exact, passes_on_the_exact_bytes) {
  observation o;
  o.files["notes.txt"] = "T1-a1b2c3d4e5f6-1\nT2-a1b2c3d4e5f6-1\n";
  auto r = judge(file("notes.txt", "T1-{nonce}\nT2-{nonce}\n"), o);
  EXPECT_TRUE(r.passed) << r.why;
  EXPECT_EQ(r.description, "file_exact notes.txt");
  EXPECT_EQ(r.expected, "T1-a1b2c3d4e5f6-1\\nT2-a1b2c3d4e5f6-1\\n");
}

TEST(file_exact, a_missing_file_fails_as_missing) {
  observation o;
  auto r = judge(file("notes.txt", "x"), o);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.actual, "(missing)");
  EXPECT_TRUE(mentions(r.why, "does not exist")) << r.why;
}

TEST(file_exact, different_bytes_fail_without_normalizing) {
  observation o;
  o.files["notes.txt"] = "T1\r\nT2\r\n";
  auto r = judge(file("notes.txt", "T1\nT2\n"), o);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.actual, "T1\\r\\nT2\\r\\n");
  EXPECT_TRUE(mentions(r.why, "differ")) << r.why;
  EXPECT_TRUE(mentions(r.why, "byte 2")) << r.why;
}

TEST(file_exact, an_empty_file_matches_empty_content) {
  observation o;
  o.files["empty"] = "";
  EXPECT_TRUE(judge(file("empty", ""), o).passed);
}

TEST(files_to_collect, lists_each_file_matcher_path_once) {
  const std::vector<matcher_spec> specs{file("a.txt", ""), text_spec(matcher_kind::message_exact, "x"),
                                        file("b/c.txt", ""), file("a.txt", "y")};
  EXPECT_EQ(files_to_collect(specs, values), (std::vector<std::string>{"a.txt", "b/c.txt"}));
}

// A path is a template like every other string of a matcher: `{marker}` in
// it names the cell's file, both where the runner collects it and where the
// matcher looks.
TEST(file_exact, the_path_is_expanded_like_the_content) {
  const auto m = file("out/{marker}.txt", "{marker}\n");
  EXPECT_EQ(files_to_collect({m}, values), (std::vector<std::string>{"out/" + marker + ".txt"}));
  observation o;
  o.files["out/" + marker + ".txt"] = marker + "\n";
  const auto r = judge(m, o);
  EXPECT_TRUE(r.passed) << r.why;
  EXPECT_EQ(r.description, "file_exact out/" + marker + ".txt");
  observation literal;  // the unexpanded name is not the file it means
  literal.files["out/{marker}.txt"] = marker + "\n";
  EXPECT_FALSE(judge(m, literal).passed);
}

TEST(file_exact, a_path_that_does_not_expand_fails_its_matcher) {
  const auto m = file("{nope}.txt", "x");
  EXPECT_TRUE(files_to_collect({m}, values).empty());
  const auto r = judge(m, observation{});
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(mentions(r.why, "does not expand")) << r.why;
}

// ---- runs and state ----

matcher_spec status_spec(matcher_kind k, std::string status) {
  auto m = spec(k);
  m.status = std::move(status);
  return m;
}

TEST(run_status, passes_when_every_run_has_the_outcome) {
  observation o;
  o.runs = {run("r1"), run("r2")};
  EXPECT_TRUE(judge(status_spec(matcher_kind::run_status, "succeeded"), o).passed);
}

TEST(run_status, one_other_outcome_fails_naming_the_run) {
  observation o;
  o.runs = {run("r1"), run("r2", "failed")};
  auto r = judge(status_spec(matcher_kind::run_status, "succeeded"), o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(mentions(r.why, "run 2 of 2 (r2) is failed")) << r.why;
  EXPECT_EQ(r.actual, "succeeded, failed");
}

TEST(run_status, zero_runs_fail) {
  observation o;
  auto r = judge(status_spec(matcher_kind::run_status, "succeeded"), o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(mentions(r.why, "no run")) << r.why;
}

TEST(run_status, an_open_run_shows_as_open) {
  observation o;
  o.runs = {run("r1", "")};
  auto r = judge(status_spec(matcher_kind::run_status, "succeeded"), o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(mentions(r.why, "(open)")) << r.why;
}

TEST(run_status, with_a_run_index_judges_only_that_run) {
  observation o;
  o.runs = {run("r1", "interrupted"), run("r2")};
  auto m = status_spec(matcher_kind::run_status, "interrupted");
  m.run = 1;
  auto r = judge(m, o);
  EXPECT_TRUE(r.passed) << r.why;
  EXPECT_EQ(r.description, "run_status interrupted (run 1)");
  m.run = 2;
  r = judge(m, o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(mentions(r.why, "run 2 of 2 (r2) is succeeded")) << r.why;
  m.run = 3;
  r = judge(m, o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(mentions(r.why, "no run 3")) << r.why;
}

TEST(run_count, compares_the_number_of_runs) {
  observation o;
  o.runs = {run("r1"), run("r2"), run("r3")};
  auto m = spec(matcher_kind::run_count);
  m.count = 3;
  EXPECT_TRUE(judge(m, o).passed);
  m.count = 2;
  auto r = judge(m, o);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.expected, "2");
  EXPECT_EQ(r.actual, "3");
  EXPECT_TRUE(mentions(r.why, "3 run(s)")) << r.why;
}

TEST(session_status, compares_the_final_status) {
  observation o;
  o.session_status = "idle";
  EXPECT_TRUE(judge(status_spec(matcher_kind::session_status, "idle"), o).passed);
  auto r = judge(status_spec(matcher_kind::session_status, "waiting"), o);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.description, "session_status waiting");
  EXPECT_TRUE(mentions(r.why, "idle")) << r.why;
}

TEST(interaction_status, judges_the_last_interaction) {
  observation o;
  o.interactions = {{"i1", "pending"}, {"i2", "answered"}};
  EXPECT_TRUE(judge(status_spec(matcher_kind::interaction_status, "answered"), o).passed);
  o.interactions = {{"i1", "answered"}, {"i2", "pending"}};
  auto r = judge(status_spec(matcher_kind::interaction_status, "answered"), o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(mentions(r.why, "pending")) << r.why;
}

TEST(interaction_status, no_interaction_fails) {
  observation o;
  auto r = judge(status_spec(matcher_kind::interaction_status, "answered"), o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(mentions(r.why, "no interaction")) << r.why;
}

matcher_spec value_spec(matcher_kind k, std::string value) {
  auto m = spec(k);
  m.value = std::move(value);
  return m;
}

TEST(runtime, compares_what_ran_the_session_when_it_had_no_run) {
  observation o;
  o.runtime = "native";
  EXPECT_TRUE(judge(value_spec(matcher_kind::runtime, "native"), o).passed);
  auto r = judge(value_spec(matcher_kind::runtime, "other"), o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(mentions(r.why, "native")) << r.why;
}

TEST(runtime, every_run_must_have_run_the_runtime_whatever_the_session_says) {
  observation o;
  o.runtime = "codex";  // the latest run's
  o.runs.push_back(observed_run{.id = "exe_1", .runtime = "native"});
  o.runs.push_back(observed_run{.id = "exe_2", .runtime = "codex"});
  auto r = judge(value_spec(matcher_kind::runtime, "codex"), o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(mentions(r.why, "exe_1")) << r.why;
  EXPECT_EQ(r.actual, "native, codex");
  o.runs[0].runtime = "codex";
  EXPECT_TRUE(judge(value_spec(matcher_kind::runtime, "codex"), o).passed);
}

TEST(runtime, the_runtime_template_checks_the_profiles_own_runtime) {
  observation o;
  o.runs.push_back(observed_run{.id = "exe_1", .runtime = "claude-print"});
  const auto m = value_spec(matcher_kind::runtime, "{runtime}");
  auto agent = evaluate({m}, o, template_values{"a1b2c3d4e5f6-1", "core.claude-print.local.basic", "claude-print"});
  ASSERT_EQ(agent.size(), 1U);
  EXPECT_TRUE(agent[0].passed) << agent[0].why;
  EXPECT_EQ(agent[0].expected, "claude-print");
  // The same case on a native profile expects native: a claude-print run fails it.
  auto native = evaluate({m}, o, template_values{"a1b2c3d4e5f6-1", "core.native.local.basic", "native"});
  ASSERT_EQ(native.size(), 1U);
  EXPECT_FALSE(native[0].passed);
  EXPECT_TRUE(mentions(native[0].why, "claude-print")) << native[0].why;
}

TEST(environment, compares_the_environment_id) {
  observation o;
  o.environment = "local";
  EXPECT_TRUE(judge(value_spec(matcher_kind::environment, "local"), o).passed);
  auto r = judge(value_spec(matcher_kind::environment, "docker"), o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(mentions(r.why, "local")) << r.why;
}

TEST(usage_reported, passes_when_every_run_reported_tokens) {
  observation o;
  o.runs = {run("r1"), run("r2", "succeeded", 0, 3)};
  EXPECT_TRUE(judge(spec(matcher_kind::usage_reported), o).passed);
}

TEST(usage_reported, one_run_without_usage_fails) {
  observation o;
  o.runs = {run("r1"), run("r2", "succeeded", 0, 0)};
  auto r = judge(spec(matcher_kind::usage_reported), o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(mentions(r.why, "run 2 of 2 (r2)")) << r.why;
  EXPECT_EQ(r.actual, "1 of 2 run(s) reported usage");
}

TEST(usage_reported, a_usage_object_with_zero_tokens_fails) {
  observation o;
  o.runs = {run("r1", "succeeded", 0, 0)};
  o.runs[0].usage_reported = true;
  EXPECT_FALSE(judge(spec(matcher_kind::usage_reported), o).passed);
}

TEST(usage_reported, zero_runs_fail) {
  observation o;
  auto r = judge(spec(matcher_kind::usage_reported), o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(mentions(r.why, "no run")) << r.why;
}

// ---- agent processes ----

observed_run served(std::string id, std::int64_t pid, std::int64_t started_ms = 1000) {
  auto r = run(std::move(id));
  r.agent_process = observed_process{pid, started_ms};
  return r;
}

matcher_spec same_process(std::vector<std::int64_t> runs = {}) {
  auto m = spec(matcher_kind::same_agent_process);
  m.runs = std::move(runs);
  return m;
}

// ---- agent sessions ----

observed_run bound(std::string id, std::string agent_session) {
  auto r = run(std::move(id));
  r.agent_session = std::move(agent_session);
  return r;
}

matcher_spec resumed(std::vector<std::int64_t> runs = {}) {
  auto m = spec(matcher_kind::agent_session_resumed);
  m.runs = std::move(runs);
  return m;
}

TEST(agent_session_resumed, passes_when_every_run_continued_one_agent_session_without_a_replayed_transcript) {
  observation o;
  o.runs = {bound("r1", "th-1"), bound("r2", "th-1")};
  o.transcript_replayed = false;
  auto r = judge(resumed({1, 2}), o);
  EXPECT_TRUE(r.passed) << r.why;
  EXPECT_EQ(r.description, "agent_session_resumed (runs 1, 2)");
  EXPECT_EQ(r.actual, "run 1: th-1, run 2: th-1");
}

TEST(agent_session_resumed, a_new_agent_session_a_replayed_transcript_or_an_unavailable_state_fails) {
  observation o;
  o.runs = {bound("r1", "th-1"), bound("r2", "th-2")};
  o.transcript_replayed = false;
  auto r = judge(resumed(), o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(mentions(r.why, "run 2 (r2) ran agent session th-2, not th-1 like run 1")) << r.why;

  o.runs[1].agent_session = "th-1";
  o.transcript_replayed = true;
  r = judge(resumed(), o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(mentions(r.why, "transcript")) << r.why;

  o.transcript_replayed.reset();
  EXPECT_FALSE(judge(resumed(), o).passed) << "requests not observed: nothing is shown";

  o.transcript_replayed = false;
  o.agent_state_unavailable = {"restoring the state saved at seq 7 failed"};
  r = judge(resumed(), o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(mentions(r.why, "seq 7")) << r.why;

  observation native;
  native.runs = {run("r1"), run("r2")};
  native.transcript_replayed = false;
  r = judge(resumed(), native);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(mentions(r.why, "run 1 (r1) bound no agent session")) << r.why;
}

TEST(same_agent_process, passes_when_one_pid_served_every_run) {
  observation o;
  o.runs = {served("r1", 41), served("r2", 41), served("r3", 41)};
  auto r = judge(same_process(), o);
  EXPECT_TRUE(r.passed) << r.why;
  EXPECT_EQ(r.description, "same_agent_process");
  EXPECT_EQ(r.actual, "run 1: pid 41 (started 1000), run 2: pid 41 (started 1000), run 3: pid 41 (started 1000)");
}

TEST(same_agent_process, a_second_pid_fails_naming_the_run) {
  observation o;
  o.runs = {served("r1", 41), served("r2", 41), served("r3", 77)};
  auto r = judge(same_process(), o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(mentions(r.why, "run 3 (r3) was served by pid 77, not pid 41 like run 1")) << r.why;
}

TEST(same_agent_process, judges_only_the_runs_it_names) {
  observation o;  // three turns in one process, then a restart and a new one
  o.runs = {served("r1", 41), served("r2", 41), served("r3", 41), served("r4", 90)};
  auto r = judge(same_process({1, 2, 3}), o);
  EXPECT_TRUE(r.passed) << r.why;
  EXPECT_EQ(r.description, "same_agent_process (runs 1, 2, 3)");
  EXPECT_FALSE(judge(same_process(), o).passed);
  r = judge(same_process({2, 4}), o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(mentions(r.why, "run 4 (r4) was served by pid 90, not pid 41 like run 2")) << r.why;
}

TEST(same_agent_process, a_named_run_that_was_not_observed_fails) {
  observation o;
  o.runs = {served("r1", 41), served("r2", 41)};
  auto r = judge(same_process({1, 3}), o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(mentions(r.why, "no run 3")) << r.why;
}

TEST(same_agent_process, a_run_without_a_process_fails) {
  observation o;
  o.runs = {served("r1", 41), run("r2")};  // run() has no agent process, as a native run
  auto r = judge(same_process(), o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(mentions(r.why, "run 2 (r2) was served by no agent process")) << r.why;
  EXPECT_TRUE(mentions(r.actual, "run 2: (none)")) << r.actual;
}

TEST(same_agent_process, zero_runs_fail) {
  observation o;
  auto r = judge(same_process(), o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(mentions(r.why, "no run")) << r.why;
}

TEST(same_agent_process, one_run_with_a_process_passes) {
  observation o;
  o.runs = {served("r1", 41)};
  EXPECT_TRUE(judge(same_process(), o).passed);
}

TEST(new_agent_process, passes_when_the_last_pid_served_no_earlier_run) {
  observation o;
  o.runs = {served("r1", 41), served("r2", 41), served("r3", 90, 5000)};
  auto r = judge(spec(matcher_kind::new_agent_process), o);
  EXPECT_TRUE(r.passed) << r.why;
  EXPECT_EQ(r.description, "new_agent_process");
  EXPECT_TRUE(mentions(r.actual, "run 3: pid 90 (started 5000)")) << r.actual;
}

TEST(new_agent_process, the_last_pid_serving_any_earlier_run_fails) {
  observation o;
  o.runs = {served("r1", 41), served("r2", 90), served("r3", 41)};
  auto r = judge(spec(matcher_kind::new_agent_process), o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(mentions(r.why, "the last run (r3) was served by pid 41, which also served run 1 (r1)")) << r.why;
}

TEST(new_agent_process, earlier_runs_without_a_process_are_skipped) {
  observation o;
  o.runs = {run("r1"), served("r2", 41), served("r3", 90)};
  EXPECT_TRUE(judge(spec(matcher_kind::new_agent_process), o).passed);
}

TEST(new_agent_process, needs_an_earlier_run_with_a_process) {
  observation o;
  o.runs = {served("r1", 41)};
  auto r = judge(spec(matcher_kind::new_agent_process), o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(mentions(r.why, "1 run(s) were observed")) << r.why;
  o.runs = {run("r1"), served("r2", 41)};
  r = judge(spec(matcher_kind::new_agent_process), o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(mentions(r.why, "no earlier run was served by an agent process")) << r.why;
}

TEST(new_agent_process, a_last_run_without_a_process_fails) {
  observation o;
  o.runs = {served("r1", 41), run("r2")};
  auto r = judge(spec(matcher_kind::new_agent_process), o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(mentions(r.why, "the last run (r2) was served by no agent process")) << r.why;
}

TEST(evaluate, returns_one_result_per_matcher_in_order) {
  observation o;
  o.runs = {run("r1")};
  o.messages = {assistant(marker, "r1")};
  o.session_status = "idle";
  auto results = evaluate({text_spec(matcher_kind::message_exact, "{marker}"), spec(matcher_kind::usage_reported),
                           status_spec(matcher_kind::session_status, "running")},
                          o, values);
  ASSERT_EQ(results.size(), 3U);
  EXPECT_EQ(results[0].kind, "message_exact");
  EXPECT_TRUE(results[0].passed);
  EXPECT_EQ(results[1].kind, "usage_reported");
  EXPECT_TRUE(results[1].passed);
  EXPECT_EQ(results[2].kind, "session_status");
  EXPECT_FALSE(results[2].passed);
  EXPECT_FALSE(results[2].why.empty());
}

// ---- the environment matchers ----

observed_lease lease(std::string outcome, std::string provider_id = "ssh://agent@127.0.0.9:22/l/tether-session-1") {
  observed_lease l;
  l.environment = "box";
  l.provider_id = std::move(provider_id);
  l.outcome = std::move(outcome);
  return l;
}

matcher_spec outcomes_spec(std::vector<std::string> outcomes) {
  auto m = spec(matcher_kind::lease_outcomes);
  m.texts = std::move(outcomes);
  return m;
}

TEST(lease_outcomes, passes_on_exactly_those_outcomes_in_order) {
  observation o;
  o.leases = {lease("created"), lease("resumed"), lease("resumed")};
  const auto r = judge(outcomes_spec({"created", "resumed", "resumed"}), o);
  EXPECT_TRUE(r.passed) << r.why;
  EXPECT_EQ(r.actual, "created, resumed, resumed");
}

TEST(lease_outcomes, fails_on_another_order_another_count_or_no_lease) {
  observation o;
  o.leases = {lease("created"), lease("created"), lease("resumed")};
  auto r = judge(outcomes_spec({"created", "resumed", "resumed"}), o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(mentions(r.why, "lease 2 was created, not resumed")) << r.why;
  o.leases = {lease("created"), lease("resumed")};
  r = judge(outcomes_spec({"created", "resumed", "resumed"}), o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(mentions(r.why, "2 lease(s) were acquired, not 3")) << r.why;
  o.leases.clear();
  r = judge(outcomes_spec({"created"}), o);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.actual, "(none)");
}

TEST(same_lease, passes_when_every_lease_has_one_provider_id) {
  observation o;
  o.leases = {lease("created"), lease("resumed"), lease("resumed")};
  EXPECT_TRUE(judge(spec(matcher_kind::same_lease), o).passed);
}

TEST(same_lease, fails_on_two_provider_ids_or_none) {
  observation o;
  o.leases = {lease("created"), lease("replaced", "ssh://agent@127.0.0.9:22/l/other")};
  auto r = judge(spec(matcher_kind::same_lease), o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(mentions(r.why, "2 provider ids")) << r.why;
  EXPECT_TRUE(mentions(r.actual, "/l/other")) << r.actual;
  o.leases.clear();
  r = judge(spec(matcher_kind::same_lease), o);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.why, "no lease was acquired");
}

TEST(file_absent, passes_only_when_the_file_was_not_found) {
  auto m = spec(matcher_kind::file_absent);
  m.path = "ran-{nonce}.txt";
  observation o;
  auto r = judge(m, o);
  EXPECT_TRUE(r.passed) << r.why;
  EXPECT_EQ(r.description, "file_absent \"ran-a1b2c3d4e5f6-1.txt\"");
  o.files["ran-a1b2c3d4e5f6-1.txt"] = "once\n";
  r = judge(m, o);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.actual, "present (5 bytes)");
  // The runner collects it like file_exact's.
  EXPECT_EQ(files_to_collect({m}, values), std::vector<std::string>{"ran-a1b2c3d4e5f6-1.txt"});
}

}  // namespace
}  // namespace tether::e2e
