#include "runtime/agent/prompt.h"

#include <set>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace tether::runtime::agent {

namespace json = boost::json;
using store::message_role;
using store::message_row;

namespace {

constexpr std::string_view history_header =
    "The conversation so far, as Tether recorded it (you are taking it over; earlier turns may have been run by "
    "another agent):\n";  // a blank line follows
constexpr std::string_view missed_header =
    "Messages of an earlier turn that was stopped or failed before you took it up. They are context, not "
    "requests: act on them only if you are asked again.";
constexpr std::size_t max_rendered_tool_bytes = 2'000;

// "answered: Blue" for a question's answer ({"answers":[{labels, other_text}]}), else the text as it is.
std::string answer_text(const std::string& content) {
  boost::system::error_code ec;
  const auto v = json::parse(content, ec);
  if (ec || !v.is_object()) return "answered: " + content;
  const auto* answers = v.as_object().if_contains("answers");
  if (answers == nullptr || !answers->is_array()) return "answered: " + content;
  std::string out;
  for (const auto& a : answers->as_array()) {
    if (!a.is_object()) continue;
    std::string one;
    if (const auto* labels = a.as_object().if_contains("labels"); labels != nullptr && labels->is_array())
      for (const auto& l : labels->as_array())
        if (l.is_string()) one += (one.empty() ? "" : ", ") + std::string(l.as_string());
    if (const auto* other = a.as_object().if_contains("other_text"); other != nullptr && other->is_string())
      one += (one.empty() ? "" : ", ") + std::string(other->as_string());
    out += (out.empty() ? "" : "; ") + one;
  }
  return "answered: " + out;
}

std::string clipped(std::string s) {
  if (s.size() > max_rendered_tool_bytes) {
    s.resize(max_rendered_tool_bytes);
    s += " …";
  }
  return s;
}

// Call ids of the calls a human answers (ask_user and request_plan_approval,
// whichever runtime made them): their results are the human's words.
std::set<std::string> question_calls(const std::vector<message_row>& rows) {
  std::set<std::string> out;
  for (const auto& r : rows)
    if (r.role == message_role::tool_call &&
        (r.tool.find("ask_user") != std::string::npos || r.tool.find("request_plan_approval") != std::string::npos))
      out.insert(r.id);
  return out;
}

// What a row tells an agent that has not seen it; "" for what it need not hear.
std::string new_to_agent(const message_row& r, const std::set<std::string>& questions) {
  switch (r.role) {
    case message_role::user:
    case message_role::notice:
      return r.text;
    case message_role::tool_result:
      return questions.contains(r.id) ? answer_text(r.text) : std::string();
    default:
      return {};
  }
}

std::string rendered(const message_row& r, const std::set<std::string>& questions) {
  switch (r.role) {
    case message_role::user:
      return "user: " + r.text;
    case message_role::assistant:
      return "assistant: " + r.text;
    case message_role::notice:
      return "tether: " + r.text;
    case message_role::summary:
      return "summary of earlier conversation: " + r.text;
    case message_role::tool_call:
      return "assistant called " + r.tool + ": " + clipped(json::serialize(r.input));
    case message_role::tool_result:
      if (questions.contains(r.id)) return "user " + answer_text(r.text);
      return std::string(r.is_error ? "tool failed: " : "tool result: ") + clipped(r.text);
  }
  return {};
}

void append(std::string& out, const std::string& part) {
  if (part.empty()) return;
  if (!out.empty()) out += "\n\n";
  out += part;
}

// HEADER, BODY, a rule, then the new part.
std::string under(std::string_view header, std::string_view body, std::string_view fresh) {
  std::string out(header);
  out.append("\n").append(body).append("\n\n---\n\n").append(fresh);
  return out;
}

}  // namespace

bool can_resume(const session::turn_context& ctx, std::string_view kind) {
  return ctx.binding && ctx.binding->runtime == kind && !ctx.binding->external_session_id.empty();
}

event_seq last_seq(const session::turn_context& ctx) {
  return ctx.transcript.empty() ? event_seq{} : ctx.transcript.back().seq;
}

std::string render_prompt(const session::turn_context& ctx, std::string_view kind) {
  const auto& rows = ctx.transcript;
  const auto questions = question_calls(rows);
  std::string fresh;
  if (can_resume(ctx, kind)) {
    // An input before this turn's first one is an earlier turn's that ended
    // (stopped by the user, failed) before the agent took it up: one line,
    // its text as a JSON string, so no line of it reads as a request.
    std::string missed;
    for (const auto& r : rows) {
      if (r.seq <= ctx.binding->last_seen_seq) continue;
      if (r.role == message_role::user && !ctx.promoted.empty() && r.seq < ctx.promoted.front().seq)
        missed += (missed.empty() ? "user: " : "\nuser: ") + json::serialize(json::string_view(r.text));
      else
        append(fresh, new_to_agent(r, questions));
    }
    if (fresh.empty()) fresh = "Continue.";
    if (missed.empty()) return fresh;
    return under(missed_header, missed, fresh);
  }
  // Where the new part begins: this turn's first input, or after the last answer.
  std::size_t split = rows.size();
  if (!ctx.promoted.empty()) {
    const auto first = ctx.promoted.front().seq;
    split = 0;
    while (split < rows.size() && rows[split].seq < first) ++split;
  } else {
    while (split > 0 && rows[split - 1].role != message_role::assistant) --split;
  }
  std::string history;
  for (std::size_t i = 0; i < split; ++i) append(history, rendered(rows[i], questions));
  for (std::size_t i = split; i < rows.size(); ++i) append(fresh, new_to_agent(rows[i], questions));
  if (fresh.empty()) fresh = "Continue.";
  if (history.empty()) return fresh;
  return under(history_header, history, fresh);
}

}  // namespace tether::runtime::agent
