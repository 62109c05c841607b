// The events of opencode serve for one session's turns (opencode_events.h).
#include "runtime/agent/opencode/events.h"

#include "runtime/agent/json_lines.h"
#include "runtime/agent/opencode/opencode.h"

namespace tether::runtime::agent::opencode {

namespace json = boost::json;

void serve_events::begin_turn() {
  state_ = state::starting;
  error_.reset();
  turn_messages_.clear();
  text_parts_.clear();
  done_parts_.clear();
  tools_ = {};
}

void serve_events::abandon_turn() { state_ = state::idle; }

void serve_events::feed(const json::object& event, std::vector<agent_event>& out) {
  const auto* props = object_at(event, "properties");
  if (props == nullptr || str(*props, "sessionID") != session_) return;
  const auto type = str(event, "type");
  if (type == "message.updated") {  // even without a turn: a message seen then is never this turn's
    const auto* info = object_at(*props, "info");
    if (info == nullptr) return;
    const auto id = str(*info, "id");
    if (!known_.insert(id).second) return;
    if (state_ != state::idle && str(*info, "role") == "assistant") turn_messages_.insert(id);
    return;
  }
  if (state_ == state::idle) return;
  if (type == "message.part.delta") {
    if (!this_turns(str(*props, "messageID")) || !text_parts_.contains(str(*props, "partID"))) return;
    if (str(*props, "field") != "text") return;
    if (auto delta = str(*props, "delta"); !delta.empty()) out.emplace_back(text_piece{std::move(delta)});
  } else if (type == "message.part.updated") {
    if (const auto* part = object_at(*props, "part"); part != nullptr && this_turns(str(*part, "messageID")))
      part_updated(*part, out);
  } else if (type == "session.status") {
    const auto* status = object_at(*props, "status");
    if (status != nullptr && str(*status, "type") == "busy") state_ = state::busy;
  } else if (type == "session.error") {
    const auto* e = object_at(*props, "error");
    error_ = e != nullptr ? error_text(*e) : std::string("opencode reported an error");
  } else if (type == "session.idle") {
    if (state_ == state::starting && !error_) return;  // the previous turn's
    state_ = state::idle;
    if (error_)
      out.emplace_back(turn_failed{*error_});
    else
      out.emplace_back(turn_done{});
  }
}

void serve_events::part_updated(const json::object& part, std::vector<agent_event>& out) {
  const auto type = str(part, "type");
  const auto id = str(part, "id");
  if (type == "text") {
    text_parts_.insert(id);
    const auto* time = object_at(part, "time");
    if (time == nullptr || !time->contains("end") || done_parts_.contains(id)) return;
    if (const auto* s = part.if_contains("synthetic"); s != nullptr && s->is_bool() && s->as_bool()) return;
    done_parts_.insert(id);
    if (auto text = str(part, "text"); !text.empty()) out.emplace_back(agent_message{std::move(text)});
  } else if (type == "tool") {
    tool_events(part, tools_, out);
  } else if (type == "step-finish") {
    if (!done_parts_.insert(id).second) return;
    out.emplace_back(step_usage(part));
  }
}

}  // namespace tether::runtime::agent::opencode
