#include "mock/script.h"

#include <set>
#include <utility>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "mock/tools.h"

namespace tether::mock {

namespace json = boost::json;

namespace {

bool has_directive(const message& m) { return !parse_directives(m.text).empty(); }

// A user message typed as such (not a client's reminder beside tool results).
bool typed_user_message(const message& m) { return m.role == role::user && !m.beside_tool_results; }

std::size_t progress(const conversation& c, std::size_t instruction) {
  std::size_t count = 0;
  std::set<std::string> answered_calls;
  for (std::size_t i = instruction + 1; i < c.messages.size(); ++i) {
    if (c.messages[i].role != role::tool_result) continue;
    ++count;
    answered_calls.insert(c.messages[i].call_id);
  }
  // A call without a result, answered by a later user message instead.
  for (std::size_t i = instruction + 1; i < c.messages.size(); ++i) {
    if (c.messages[i].role != role::assistant) continue;
    for (const auto& call : c.messages[i].calls) {
      if (call.id.empty() || answered_calls.contains(call.id)) continue;
      for (std::size_t j = i + 1; j < c.messages.size(); ++j)
        if (typed_user_message(c.messages[j])) {
          ++count;
          break;
        }
    }
  }
  return count;
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) {
    if (p.empty()) continue;
    if (!out.empty()) out += ", ";
    out += p;
  }
  return out;
}

std::optional<std::string> non_empty(std::string s) {
  if (s.empty()) return std::nullopt;
  return s;
}

// "answered: Blue" → "Blue"; "Blue" → "Blue".
std::string strip_answered(std::string_view text) {
  auto t = trim(text);
  if (starts_with_nocase(t, "answered:")) t = trim(t.substr(9));
  return std::string(t);
}

using option_labels = std::vector<std::pair<std::string, std::string>>;  // id → label

// The options of the question a question-tool call asked.
option_labels asked_options(const tool_call& call) {
  option_labels out;
  boost::system::error_code ec;
  const auto v = json::parse(call.arguments, ec);
  if (ec || !v.is_object()) return out;
  const json::object* q = &v.as_object();
  if (const auto* qs = q->if_contains("questions");
      qs != nullptr && qs->is_array() && !qs->as_array().empty() && qs->as_array().front().is_object())
    q = &qs->as_array().front().as_object();
  const auto* opts = q->if_contains("options");
  if (opts == nullptr || !opts->is_array()) return out;
  for (const auto& o : opts->as_array()) {
    if (o.is_string()) {
      out.emplace_back(option_id(o.as_string()), std::string(o.as_string()));
    } else if (o.is_object()) {
      const auto* label = o.as_object().if_contains("label");
      const auto* id = o.as_object().if_contains("id");
      if (label == nullptr || !label->is_string()) continue;
      out.emplace_back(id != nullptr && id->is_string() ? std::string(id->as_string()) : option_id(label->as_string()),
                       std::string(label->as_string()));
    }
  }
  return out;
}

std::vector<std::string> strings_of(const json::value* v) {
  std::vector<std::string> out;
  if (v == nullptr) return out;
  if (v->is_string()) out.emplace_back(v->as_string());
  if (v->is_array())
    for (const auto& x : v->as_array())
      if (x.is_string()) out.emplace_back(x.as_string());
  return out;
}

std::optional<std::string> answer_from_json_object(const json::object& o, const option_labels& options) {
  if (const auto* answers = o.if_contains("answers")) {
    std::vector<std::string> parts;
    if (answers->is_array()) {
      for (const auto& a : answers->as_array()) {
        if (!a.is_object()) continue;
        const auto& ao = a.as_object();
        auto labels = strings_of(ao.if_contains("labels"));
        if (labels.empty()) {
          for (const auto& id : strings_of(ao.if_contains("option_ids"))) {
            std::string label = id;
            for (const auto& [oid, olabel] : options)
              if (oid == id) label = olabel;
            labels.push_back(std::move(label));
          }
        }
        if (labels.empty()) labels = strings_of(ao.if_contains("other_text"));
        if (labels.empty()) labels = strings_of(ao.if_contains("answer"));
        parts.push_back(join(labels));
      }
    } else if (answers->is_object()) {
      for (const auto& [question, answer] : answers->as_object()) parts.push_back(join(strings_of(&answer)));
    }
    return non_empty(join(parts));
  }
  if (auto a = strings_of(o.if_contains("answer")); !a.empty()) return non_empty(join(a));
  if (auto l = strings_of(o.if_contains("labels")); !l.empty()) return non_empty(join(l));
  return std::nullopt;
}

// Claude's AskUserQuestion result: …"QUESTION"="ANSWER"…
std::vector<std::string> quoted_pairs(std::string_view text) {
  std::vector<std::string> out;
  for (std::size_t pos = text.find("\"=\""); pos != std::string_view::npos; pos = text.find("\"=\"", pos + 3)) {
    const auto start = pos + 3;
    const auto end = text.find('"', start);
    if (end == std::string_view::npos) break;
    out.emplace_back(text.substr(start, end - start));
  }
  return out;
}

// The text of MCP-style content blocks ([{"type":"text","text":…}]), if `v` is such a list.
std::optional<std::string> content_text(const json::value& v) {
  if (!v.is_array() || v.as_array().empty()) return std::nullopt;
  std::string out;
  for (const auto& block : v.as_array()) {
    const auto* t = block.is_object() ? block.as_object().if_contains("text") : nullptr;
    if (t == nullptr || !t->is_string()) return std::nullopt;
    if (!out.empty()) out.push_back('\n');
    out.append(t->as_string());
  }
  return out;
}

// Codex hands an MCP tool's result to the model under a header of its own:
// "Wall time: 0.0054 seconds\nOutput:\n…"; the result is what follows.
std::string_view without_codex_header(std::string_view text) {
  if (!text.starts_with("Wall time:")) return text;
  constexpr std::string_view marker = "\nOutput:\n";
  const auto at = text.find(marker);
  return at == std::string_view::npos ? text : text.substr(at + marker.size());
}

std::optional<std::string> answer_from_result(const std::string& raw, const option_labels& options) {
  const std::string text(without_codex_header(raw));
  boost::system::error_code ec;
  const auto v = json::parse(text, ec);
  if (!ec && v.is_object()) {
    // An MCP CallToolResult: {"content":[{"type":"text","text":…}], …}
    if (const auto* content = v.as_object().if_contains("content"))
      if (auto inner = content_text(*content)) return answer_from_result(*inner, options);
    return answer_from_json_object(v.as_object(), options);
  }
  if (!ec && v.is_string()) return answer_from_result(std::string(v.as_string()), options);
  if (!ec)
    if (auto inner = content_text(v)) return answer_from_result(*inner, options);
  if (auto pairs = quoted_pairs(text); !pairs.empty()) return non_empty(join(pairs));
  return non_empty(strip_answered(text));
}

// Every "{{answer}}" in the strings of `v` replaced by `answer`.
void put_answer(json::value& v, const std::string& answer) {
  if (v.is_string()) {
    std::string text(v.as_string());
    for (auto at = text.find("{{answer}}"); at != std::string::npos; at = text.find("{{answer}}", at + answer.size()))
      text.replace(at, 10, answer);
    v = text;
  } else if (v.is_array()) {
    for (auto& e : v.as_array()) put_answer(e, answer);
  } else if (v.is_object()) {
    for (auto& kv : v.as_object()) put_answer(kv.value(), answer);
  }
}

action_outcome perform(const conversation& c, const directive& d) {
  switch (d.kind) {
    case directive_kind::run:
      return shell_call(c, d.text);
    case directive_kind::write_file:
      return write_call(c, d.path, d.text);
    case directive_kind::append_line:
      return shell_call(c, "printf '%s\\n' " + shell_quote(d.text) + " >> " + shell_quote(d.path));
    case directive_kind::ask:
      return question_call(c, d.text, d.items);
    case directive_kind::plan:
      return plan_call(c, d.items);
    case directive_kind::tool: {
      if (json::serialize(d.input).find("{{answer}}") == std::string::npos) return named_call(c, d.name, d.input);
      const auto answer = latest_answer(c);
      if (!answer) return std::string("WAITING_FOR_ANSWER");  // text is no progress: the next request tries again
      json::value input = d.input;
      put_answer(input, *answer);
      return named_call(c, d.name, input);
    }
    case directive_kind::wait_for_file: {
      const auto p = shell_quote(d.path);
      shell_hints hints;
      hints.long_wait = true;
      return shell_call(
          c, "i=0; while [ ! -e " + p + " ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done; [ -e " + p + " ]",
          hints);
    }
    default:
      return std::string("mock: not an action");
  }
}

}  // namespace

std::uint64_t stable_hash(std::string_view s) {
  std::uint64_t h = 1469598103934665603ULL;
  for (const unsigned char ch : s) {
    h ^= ch;
    h *= 1099511628211ULL;
  }
  return h;
}

std::optional<std::size_t> latest_instruction(const conversation& c) {
  for (std::size_t i = c.messages.size(); i-- > 0;)
    if (c.messages[i].role == role::user && has_directive(c.messages[i])) return i;
  return std::nullopt;
}

std::optional<std::string> latest_answer(const conversation& c) {
  struct question {
    std::string call_id;
    option_labels options;
    bool answered = false;
  };
  std::vector<question> asked;
  std::optional<std::string> latest;
  for (const auto& m : c.messages) {
    if (m.role == role::assistant) {
      for (const auto& call : m.calls)
        if (is_question_tool(call.name)) asked.push_back(question{call.id, asked_options(call)});
    } else if (m.role == role::tool_result) {
      question* q = nullptr;
      for (auto& a : asked)
        if (a.call_id == m.call_id || (m.call_id.empty() && !a.answered)) q = &a;
      if (q == nullptr || m.is_error) continue;
      if (auto answer = answer_from_result(m.text, q->options)) {
        latest = std::move(answer);
        q->answered = true;
      }
    } else if (typed_user_message(m) && !has_directive(m)) {
      bool pending = false;
      for (auto& a : asked) {
        pending = pending || !a.answered;
        a.answered = true;
      }
      if (auto answer = non_empty(strip_answered(m.text)); pending && answer) latest = std::move(answer);
    }
  }
  return latest;
}

// The phrase of the last line of `text` containing "Remember the phrase:".
std::optional<std::string> last_phrase_in(std::string_view text) {
  static constexpr std::string_view marker = "remember the phrase:";
  std::optional<std::string> found;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const auto line = text.substr(0, nl);
    for (std::size_t k = 0; k + marker.size() <= line.size(); ++k)
      if (starts_with_nocase(line.substr(k), marker)) {
        if (auto phrase = trim(line.substr(k + marker.size())); !phrase.empty()) found = std::string(phrase);
        break;
      }
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return found;
}

// The instruction's text above its "Recall the phrase." line: a conversation
// a runner rendered into the instruction itself (Tether's transcript for a
// new agent session) comes before it.
std::string_view above_recall(std::string_view text) {
  std::size_t line_start = 0;
  std::size_t above = 0;
  while (line_start < text.size()) {
    const auto nl = text.find('\n', line_start);
    const auto line = trim(text.substr(line_start, nl == std::string_view::npos ? std::string_view::npos : nl - line_start));
    if (starts_with_nocase(line, "recall the phrase")) above = line_start;
    if (nl == std::string_view::npos) break;
    line_start = nl + 1;
  }
  return text.substr(0, above);
}

std::optional<std::string> recall_phrase(const conversation& c, std::size_t instruction) {
  if (instruction < c.messages.size())
    if (auto found = last_phrase_in(above_recall(c.messages[instruction].text))) return found;
  for (std::size_t i = std::min(instruction, c.messages.size()); i-- > 0;) {
    const auto& m = c.messages[i];
    if (m.role == role::tool_result) continue;
    if (auto found = last_phrase_in(m.text)) return found;
  }
  return std::nullopt;
}

bool is_title_request(const conversation& c) {
  if (!c.tools.empty()) return false;
  static constexpr std::string_view phrases[] = {"title generator", "generate a title", "a title for", "short title"};
  for (const auto& m : c.messages) {
    if (m.role != role::system) continue;
    for (const auto phrase : phrases)
      for (std::size_t i = 0; i + phrase.size() <= m.text.size(); ++i)
        if (starts_with_nocase(std::string_view(m.text).substr(i), phrase)) return true;
  }
  return false;
}

// The last message is a tool result saying a human must act first (Tether's
// request_plan_approval through `tether mcp`: {"status":"waiting_for_approval"}):
// the decision comes as a later message, so the turn ends here.
bool waits_for_approval(const conversation& c) {
  // Found as text: agent programs wrap a tool's result in their own framing
  // (codex: "Wall time: …\nOutput:" before it; MCP content blocks, escaped JSON).
  return !c.messages.empty() && c.messages.back().role == role::tool_result &&
         c.messages.back().text.find("waiting_for_approval") != std::string::npos;
}

decision decide(const conversation& c) {
  decision d;
  if (is_title_request(c)) {
    d.output.text = std::string(title_answer);
    return d;
  }
  const auto instruction = latest_instruction(c);
  if (!instruction) {
    d.output.text = "Done.";
    return d;
  }
  const auto& text = c.messages[*instruction].text;
  d.instruction_hash = stable_hash(text);
  const auto directives = parse_directives(text);
  for (const auto& dir : directives) {
    if (dir.kind == directive_kind::fail) {
      d.fail = dir.fail;
      d.fail_once = dir.once;
    } else if (dir.kind == directive_kind::stream_slowly) {
      d.delta_interval = dir.interval;
    }
  }
  if (waits_for_approval(c)) {
    d.output.text = "WAITING_FOR_APPROVAL";  // text is no progress: the next request goes on
    return d;
  }
  const auto done = progress(c, *instruction);
  std::size_t skipped = 0;
  std::optional<std::string> final_text;
  bool remembers = false;
  bool others = false;
  for (const auto& dir : directives) {
    if (is_action(dir.kind)) {
      others = true;
      if (skipped < done) {
        ++skipped;
        continue;
      }
      auto outcome = perform(c, dir);
      if (auto* call = std::get_if<tool_call>(&outcome))
        d.output.call = std::move(*call);
      else
        d.output.text = std::get<std::string>(std::move(outcome));
      return d;
    }
    switch (dir.kind) {
      case directive_kind::reply_exactly:
        final_text = dir.text;
        others = true;
        break;
      case directive_kind::recall:
        final_text = recall_phrase(c, *instruction).value_or("NO_PHRASE");
        others = true;
        break;
      case directive_kind::reply_answer: {
        auto answer = latest_answer(c);
        if (!answer) {
          d.output.text = "WAITING_FOR_ANSWER";
          return d;
        }
        final_text = std::move(answer);
        others = true;
        break;
      }
      case directive_kind::remember:
        remembers = true;
        break;
      case directive_kind::invalid:
        d.output.text = "mock: " + dir.text;
        return d;
      default:
        break;
    }
  }
  if (final_text)
    d.output.text = std::move(*final_text);
  else
    d.output.text = remembers && !others ? "Noted." : "Done.";
  return d;
}

}  // namespace tether::mock
