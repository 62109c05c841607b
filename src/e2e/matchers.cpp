#include "e2e/matchers.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tether::e2e {

namespace {

constexpr std::size_t description_limit = 40;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

std::string in_quotes(std::string_view text, std::size_t limit = description_limit) {
  return "\"" + trim_for_display(text, limit) + "\"";
}

// \n, \r, \t and \ escaped, so a file's bytes show on one line.
std::string escaped(std::string_view bytes) {
  std::string out;
  for (const char c : bytes) {
    switch (c) {
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\\':
        out += "\\\\";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::size_t count_occurrences(std::string_view haystack, std::string_view needle) {
  std::size_t n = 0;
  for (auto at = haystack.find(needle); at != std::string_view::npos; at = haystack.find(needle, at + needle.size()))
    ++n;
  return n;
}

std::vector<std::string> assistant_texts(const observation& o) {
  std::vector<std::string> out;
  for (const auto& m : o.messages)
    if (m.role == "assistant") out.push_back(normalize(m.text));
  return out;
}

// The last assistant message of the last run (in start order) that has one.
// A message whose run the observation does not list still counts when no
// listed run has one, so a partial observation does not hide the reply.
const observed_message* final_assistant_message(const observation& o) {
  for (auto run = o.runs.rbegin(); run != o.runs.rend(); ++run) {
    for (auto m = o.messages.rbegin(); m != o.messages.rend(); ++m)
      if (m->role == "assistant" && m->run_id == run->id) return &*m;
  }
  for (auto m = o.messages.rbegin(); m != o.messages.rend(); ++m)
    if (m->role == "assistant") return &*m;
  return nullptr;
}

matcher_result start(const matcher_spec& spec, std::string description) {
  matcher_result r;
  r.kind = std::string(to_string(spec.kind));
  r.description = std::move(description);
  return r;
}

matcher_result& fail(matcher_result& r, std::string why) {
  r.passed = false;
  r.why = std::move(why);
  return r;
}

matcher_result& pass(matcher_result& r) {
  r.passed = true;
  r.why.clear();
  return r;
}

// A spec with a template that did not expand (each of its strings is shown as written).
matcher_result not_expanded(const matcher_spec& spec, const tether::error& e) {
  std::string raw = spec.kind == matcher_kind::file_exact || spec.kind == matcher_kind::file_absent ? spec.path + ": " + spec.content : spec.text + spec.value;
  for (const auto& t : spec.texts) raw += (raw.empty() ? "" : " · ") + t;
  auto r = start(spec, fmt::format("{} {}", to_string(spec.kind), in_quotes(raw)));
  r.expected = trim_for_display(raw);
  return fail(r, "the template does not expand: " + e.message);
}

// ---- message matchers ----

matcher_result message_exact(const matcher_spec& spec, const observation& o, const std::string& text) {
  const std::string expected = normalize(text);
  auto r = start(spec, fmt::format("message_exact {}", in_quotes(expected)));
  r.expected = trim_for_display(expected);
  const auto* m = final_assistant_message(o);
  if (m == nullptr) return fail(r, "no assistant message was observed");
  const std::string actual = normalize(m->text);
  r.actual = trim_for_display(actual);
  if (actual == expected) return pass(r);
  if (actual.find(expected) != std::string::npos)
    return fail(r, "the final assistant message contains the text but is not exactly it");
  return fail(r, "the final assistant message differs from the expected text");
}

matcher_result message_occurrences(const matcher_spec& spec, const observation& o, const std::string& text) {
  const std::string needle = normalize(text);
  auto r = start(spec, fmt::format("message_occurrences {} = {}", in_quotes(needle), spec.count));
  r.expected = fmt::format("{} occurrence(s) of {}", spec.count, in_quotes(needle, 400));
  if (needle.empty()) return fail(r, "the text to count is empty");
  std::size_t n = 0;
  for (const auto& t : assistant_texts(o)) n += count_occurrences(t, needle);
  r.actual = fmt::format("{} occurrence(s)", n);
  if (static_cast<std::int64_t>(n) == spec.count) return pass(r);
  return fail(r, fmt::format("the text occurs {} time(s) in the assistant messages, not {}", n, spec.count));
}

std::string ordered_description(const std::vector<std::string>& needles) {
  std::vector<std::string> parts;
  parts.reserve(needles.size());
  for (const auto& n : needles) parts.push_back(in_quotes(n));
  return fmt::format("message_ordered [{}]", fmt::join(parts, ", "));
}

matcher_result message_ordered(const matcher_spec& spec, const observation& o, const std::vector<std::string>& texts) {
  std::vector<std::string> needles;
  needles.reserve(texts.size());
  for (const auto& t : texts) needles.push_back(normalize(t));
  auto r = start(spec, ordered_description(needles));
  r.expected = trim_for_display(fmt::format("{}", fmt::join(needles, " … ")));
  const std::string all = fmt::format("{}", fmt::join(assistant_texts(o), "\n"));
  r.actual = trim_for_display(all);
  std::size_t from = 0;
  for (std::size_t i = 0; i < needles.size(); ++i) {
    if (needles[i].empty()) return fail(r, fmt::format("text {} is empty", i + 1));
    const auto at = all.find(needles[i], from);
    if (at != std::string::npos) {
      from = at + needles[i].size();
      continue;
    }
    if (i == 0 || all.find(needles[i]) == std::string::npos)
      return fail(r, fmt::format("{} does not occur in the assistant messages", in_quotes(needles[i])));
    return fail(r, fmt::format("{} does not occur after {}", in_quotes(needles[i]), in_quotes(needles[i - 1])));
  }
  return pass(r);
}

matcher_result message_absent(const matcher_spec& spec, const observation& o, const std::string& text) {
  const std::string needle = normalize(text);
  auto r = start(spec, fmt::format("message_absent {}", in_quotes(needle)));
  r.expected = "no occurrence of " + in_quotes(needle, 400);
  r.actual = "no occurrence";
  if (needle.empty()) return fail(r, "the text to look for is empty");
  const auto texts = assistant_texts(o);
  for (std::size_t i = 0; i < texts.size(); ++i) {
    if (texts[i].find(needle) == std::string::npos) continue;
    r.actual = trim_for_display(texts[i]);
    return fail(r, fmt::format("the text occurs in assistant message {} of {}", i + 1, texts.size()));
  }
  return pass(r);
}

// ---- files ----

std::size_t first_difference(std::string_view a, std::string_view b) {
  return static_cast<std::size_t>(std::mismatch(a.begin(), a.end(), b.begin(), b.end()).first - a.begin());
}

matcher_result file_exact(const matcher_spec& spec, const observation& o, const std::string& content) {
  auto r = start(spec, fmt::format("file_exact {}", spec.path));
  r.expected = trim_for_display(escaped(content));
  const auto it = o.files.find(spec.path);
  if (it == o.files.end()) {
    r.actual = "(missing)";
    return fail(r, fmt::format("the workspace file {} does not exist", spec.path));
  }
  r.actual = trim_for_display(escaped(it->second));
  if (it->second == content) return pass(r);
  return fail(r, fmt::format("the file's bytes differ from the expected content ({} bytes vs {}, first difference at "
                             "byte {})",
                             it->second.size(), content.size(), first_difference(it->second, content)));
}

// ---- runs and state ----

std::string outcome_name(const observed_run& run) { return run.outcome.empty() ? "(open)" : run.outcome; }

matcher_result nth_run_status(const matcher_spec& spec, const observation& o) {
  auto r = start(spec, fmt::format("run_status {} (run {})", spec.status, spec.run));
  r.expected = fmt::format("run {} {}", spec.run, spec.status);
  const auto n = static_cast<std::size_t>(spec.run);
  if (o.runs.size() < n) {
    r.actual = fmt::format("{} run(s)", o.runs.size());
    return fail(r, fmt::format("only {} run(s) were observed, so there is no run {}", o.runs.size(), spec.run));
  }
  const auto& run = o.runs[n - 1];
  r.actual = outcome_name(run);
  if (run.outcome == spec.status) return pass(r);
  return fail(r, fmt::format("run {} of {} ({}) is {}", n, o.runs.size(), run.id, outcome_name(run)));
}

matcher_result run_status(const matcher_spec& spec, const observation& o) {
  if (spec.run > 0) return nth_run_status(spec, o);
  auto r = start(spec, fmt::format("run_status {}", spec.status));
  r.expected = "every run " + spec.status;
  std::vector<std::string> outcomes;
  for (const auto& run : o.runs) outcomes.push_back(outcome_name(run));
  r.actual = o.runs.empty() ? "no runs" : trim_for_display(fmt::format("{}", fmt::join(outcomes, ", ")));
  if (o.runs.empty()) return fail(r, "no run was observed");
  for (std::size_t i = 0; i < o.runs.size(); ++i) {
    if (o.runs[i].outcome == spec.status) continue;
    return fail(r, fmt::format("run {} of {} ({}) is {}", i + 1, o.runs.size(), o.runs[i].id, outcome_name(o.runs[i])));
  }
  return pass(r);
}

matcher_result run_count(const matcher_spec& spec, const observation& o) {
  auto r = start(spec, fmt::format("run_count {}", spec.count));
  r.expected = std::to_string(spec.count);
  r.actual = std::to_string(o.runs.size());
  if (static_cast<std::int64_t>(o.runs.size()) == spec.count) return pass(r);
  return fail(r, fmt::format("{} run(s) were observed, not {}", o.runs.size(), spec.count));
}

// A matcher that compares one observed string with the spec's.
matcher_result equals(const matcher_spec& spec, const std::string& wanted, const std::string& seen,
                      std::string_view subject) {
  auto r = start(spec, fmt::format("{} {}", to_string(spec.kind), wanted));
  r.expected = wanted;
  r.actual = trim_for_display(seen.empty() ? "(none)" : seen);
  if (seen == wanted) return pass(r);
  return fail(r, fmt::format("{} is {}, not {}", subject, seen.empty() ? "(none)" : seen, wanted));
}

// What actually ran: every run's runtime (the session's, when there was no
// run), never the profile's word for it.
matcher_result runtime_ran(const matcher_spec& spec, const std::string& wanted, const observation& o) {
  if (o.runs.empty()) return equals(spec, wanted, o.runtime, "the session's runtime");
  auto r = start(spec, fmt::format("runtime {}", wanted));
  r.expected = wanted;
  std::vector<std::string> seen;
  for (const auto& run : o.runs)
    if (std::find(seen.begin(), seen.end(), run.runtime) == seen.end()) seen.push_back(run.runtime);
  std::string actual;
  for (const auto& s : seen) actual += (actual.empty() ? "" : ", ") + (s.empty() ? std::string("(none)") : s);
  r.actual = trim_for_display(actual);
  for (const auto& run : o.runs)
    if (run.runtime != wanted)
      return fail(r,
                  fmt::format("run {} ran {}, not {}", run.id, run.runtime.empty() ? "(none)" : run.runtime, wanted));
  return pass(r);
}

matcher_result interaction_status(const matcher_spec& spec, const observation& o) {
  if (!o.interactions.empty())
    return equals(spec, spec.status, o.interactions.back().status, "the last interaction's status");
  auto r = start(spec, fmt::format("interaction_status {}", spec.status));
  r.expected = spec.status;
  r.actual = "no interactions";
  return fail(r, "no interaction was observed");
}

matcher_result usage_reported(const matcher_spec& spec, const observation& o) {
  auto r = start(spec, "usage_reported");
  r.expected = "token usage on every run";
  std::size_t with_usage = 0;
  for (const auto& run : o.runs)
    if (run.usage_reported && run.input_tokens + run.output_tokens > 0) ++with_usage;
  r.actual = fmt::format("{} of {} run(s) reported usage", with_usage, o.runs.size());
  if (o.runs.empty()) return fail(r, "no run was observed");
  for (std::size_t i = 0; i < o.runs.size(); ++i) {
    const auto& run = o.runs[i];
    if (run.usage_reported && run.input_tokens + run.output_tokens > 0) continue;
    return fail(r, fmt::format("run {} of {} ({}) reported no token usage", i + 1, o.runs.size(), run.id));
  }
  return pass(r);
}

// ---- agent processes ----

std::string process_name(const observed_run& run) {
  if (!run.agent_process) return "(none)";
  return fmt::format("pid {} (started {})", run.agent_process->pid, run.agent_process->started_ms);
}

// Each run's process, "run N: pid P", joined (for `actual`).
std::string processes_seen(const observation& o, const std::vector<std::size_t>& which) {
  std::vector<std::string> parts;
  parts.reserve(which.size());
  for (const auto i : which)
    if (i < o.runs.size()) parts.push_back(fmt::format("run {}: {}", i + 1, process_name(o.runs[i])));
  return trim_for_display(fmt::format("{}", fmt::join(parts, ", ")));
}

// The runs a matcher with `runs` judges (0-based; all when it names none),
// and its description: "KIND" or "KIND (runs 1, 2)".
std::vector<std::size_t> judged_runs(const matcher_spec& spec, const observation& o) {
  std::vector<std::size_t> which;
  if (spec.runs.empty())
    for (std::size_t i = 0; i < o.runs.size(); ++i) which.push_back(i);
  for (const auto n : spec.runs) which.push_back(static_cast<std::size_t>(n - 1));
  return which;
}
std::string described_with_runs(std::string_view kind, const matcher_spec& spec) {
  return spec.runs.empty() ? std::string(kind) : fmt::format("{} (runs {})", kind, fmt::join(spec.runs, ", "));
}

matcher_result same_agent_process(const matcher_spec& spec, const observation& o) {
  const auto which = judged_runs(spec, o);
  auto r = start(spec, described_with_runs("same_agent_process", spec));
  r.expected = spec.runs.empty() ? "every run served by one agent process"
                                 : fmt::format("runs {} served by one agent process", fmt::join(spec.runs, ", "));
  r.actual = o.runs.empty() ? "no runs" : processes_seen(o, which);
  if (o.runs.empty()) return fail(r, "no run was observed");
  const observed_run* first = nullptr;
  for (const auto i : which) {
    if (i >= o.runs.size())
      return fail(r, fmt::format("only {} run(s) were observed, so there is no run {}", o.runs.size(), i + 1));
    const auto& run = o.runs[i];
    if (!run.agent_process) return fail(r, fmt::format("run {} ({}) was served by no agent process", i + 1, run.id));
    if (first == nullptr) first = &run;
    if (run.agent_process->pid != first->agent_process->pid)
      return fail(r, fmt::format("run {} ({}) was served by pid {}, not pid {} like run {}", i + 1, run.id,
                                 run.agent_process->pid, first->agent_process->pid, which.front() + 1));
  }
  return pass(r);
}

matcher_result agent_session_resumed(const matcher_spec& spec, const observation& o) {
  const auto which = judged_runs(spec, o);
  auto r = start(spec, described_with_runs("agent_session_resumed", spec));
  r.expected = "one agent session of the program's own, resumed by every run, no transcript replayed";
  std::vector<std::string> seen;
  for (const auto i : which)
    if (i < o.runs.size())
      seen.push_back(fmt::format("run {}: {}", i + 1, o.runs[i].agent_session.empty() ? "(none)" : o.runs[i].agent_session));
  r.actual = trim_for_display(fmt::format("{}", fmt::join(seen, ", ")));
  if (o.runs.empty()) return fail(r, "no run was observed");
  const observed_run* first = nullptr;
  for (const auto i : which) {
    if (i >= o.runs.size())
      return fail(r, fmt::format("only {} run(s) were observed, so there is no run {}", o.runs.size(), i + 1));
    const auto& run = o.runs[i];
    if (run.agent_session.empty()) return fail(r, fmt::format("run {} ({}) bound no agent session", i + 1, run.id));
    if (first == nullptr) first = &run;
    if (run.agent_session != first->agent_session)
      return fail(r, fmt::format("run {} ({}) ran agent session {}, not {} like run {}", i + 1, run.id,
                                 run.agent_session, first->agent_session, which.front() + 1));
  }
  if (!o.agent_state_unavailable.empty())
    return fail(r, "the agent's state was unavailable: " + trim_for_display(o.agent_state_unavailable.front()));
  if (!o.transcript_replayed) return fail(r, "the scripted model's requests were not observed");
  if (*o.transcript_replayed) return fail(r, "a request to the model carried the transcript rendered for a new agent session");
  return pass(r);
}

matcher_result new_agent_process(const matcher_spec& spec, const observation& o) {
  auto r = start(spec, "new_agent_process");
  r.expected = "the last run served by an agent process no earlier run had";
  std::vector<std::size_t> all;
  for (std::size_t i = 0; i < o.runs.size(); ++i) all.push_back(i);
  r.actual = o.runs.empty() ? "no runs" : processes_seen(o, all);
  if (o.runs.size() < 2)
    return fail(r, fmt::format("{} run(s) were observed; a new process needs an earlier run", o.runs.size()));
  const auto& last = o.runs.back();
  if (!last.agent_process) return fail(r, fmt::format("the last run ({}) was served by no agent process", last.id));
  bool compared = false;
  for (std::size_t i = 0; i + 1 < o.runs.size(); ++i) {
    const auto& run = o.runs[i];
    if (!run.agent_process) continue;
    compared = true;
    if (run.agent_process->pid == last.agent_process->pid)
      return fail(r, fmt::format("the last run ({}) was served by pid {}, which also served run {} ({})", last.id,
                                 last.agent_process->pid, i + 1, run.id));
  }
  if (!compared) return fail(r, "no earlier run was served by an agent process to compare with");
  return pass(r);
}

// ---- dispatch ----

matcher_result judge_text(const matcher_spec& spec, const observation& o) {
  switch (spec.kind) {
    case matcher_kind::message_exact:
      return message_exact(spec, o, spec.text);
    case matcher_kind::message_occurrences:
      return message_occurrences(spec, o, spec.text);
    case matcher_kind::message_absent:
      return message_absent(spec, o, spec.text);
    default:
      return file_exact(spec, o, spec.content);
  }
}

// Judges `raw` with every template of it expanded.
matcher_result judge(const matcher_spec& raw, const observation& o, const template_values& values) {
  auto expanded = expand_matcher(raw, values);
  if (!expanded) return not_expanded(raw, expanded.error());
  const matcher_spec& spec = *expanded;
  switch (spec.kind) {
    case matcher_kind::message_exact:
    case matcher_kind::message_occurrences:
    case matcher_kind::message_absent:
    case matcher_kind::file_exact:
      return judge_text(spec, o);
    case matcher_kind::message_ordered:
      return message_ordered(spec, o, spec.texts);
    case matcher_kind::run_status:
      return run_status(spec, o);
    case matcher_kind::run_count:
      return run_count(spec, o);
    case matcher_kind::session_status:
      return equals(spec, spec.status, o.session_status, "the session's status");
    case matcher_kind::interaction_status:
      return interaction_status(spec, o);
    case matcher_kind::environment:
      return equals(spec, spec.value, o.environment, "the environment");
    case matcher_kind::runtime:
      return runtime_ran(spec, spec.value, o);
    case matcher_kind::usage_reported:
      return usage_reported(spec, o);
    case matcher_kind::same_agent_process:
      return same_agent_process(spec, o);
    case matcher_kind::new_agent_process:
      return new_agent_process(spec, o);
    case matcher_kind::agent_session_resumed:
      return agent_session_resumed(spec, o);
    case matcher_kind::task_status:
    case matcher_kind::plan_revisions:
    case matcher_kind::project_count:
    case matcher_kind::workspace_repos:
    case matcher_kind::freshness_decision:
    case matcher_kind::context_absent:
    case matcher_kind::workspace_files:
      return judge_work(spec, o);
    case matcher_kind::file_absent:
    case matcher_kind::lease_outcomes:
    case matcher_kind::same_lease:
      return judge_env(spec, o);
  }
  auto r = start(spec, "unknown matcher");
  return fail(r, "unknown matcher kind");
}

}  // namespace

std::string normalize(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool pending_space = false;
  for (const char c : text) {
    if (is_space(c)) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out += ' ';
    pending_space = false;
    out += c;
  }
  return out;
}

std::string trim_for_display(std::string_view text, std::size_t limit) {
  if (text.size() <= limit) return std::string(text);
  std::size_t cut = limit;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0U) == 0x80U) --cut;
  return std::string(text.substr(0, cut)) + "…";
}

std::vector<matcher_result> evaluate(const std::vector<matcher_spec>& matchers, const observation& o,
                                     const template_values& values) {
  std::vector<matcher_result> out;
  out.reserve(matchers.size());
  for (const auto& spec : matchers) out.push_back(judge(spec, o, values));
  return out;
}

std::vector<std::string> files_to_collect(const std::vector<matcher_spec>& matchers, const template_values& values) {
  std::vector<std::string> out;
  for (const auto& m : matchers) {
    if (m.kind != matcher_kind::file_exact && m.kind != matcher_kind::file_absent) continue;
    auto path = expand(m.path, values);  // one that does not expand fails its matcher instead
    if (path && std::find(out.begin(), out.end(), *path) == out.end()) out.push_back(std::move(*path));
  }
  return out;
}

}  // namespace tether::e2e
