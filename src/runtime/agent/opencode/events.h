// opencode_events — what the events of `opencode serve`'s GET /event stream
// mean for the turns of one opencode session (internal to the opencode
// serve dialect; no I/O, so it is tested event by event).
//
//   serve_events m("ses_…");
//   m.begin_turn();                            // just before POST /session/{id}/prompt_async
//   for each SSE event: m.feed(json, out);     // agent_events of this turn into `out`
//   m.abandon_turn();                          // the prompt was refused: no turn runs
//
// The stream carries the whole server's events (every session, plugins,
// heartbeats); an event of another session is ignored. An event's JSON is
// {id, type, properties}; the ones that count:
//
//   message.updated {info {id, role, error?}}     which messages are the assistant's,
//                                                 and which belong to this turn
//   message.part.delta {messageID, partID, field, delta}
//                                                 text_piece (text parts only, not reasoning)
//   message.part.updated {part}                   text part with time.end: agent_message;
//                                                 tool part: tool_start / tool_end;
//                                                 step-finish part: turn_usage
//   session.status {status {type: busy|idle|retry}}
//   session.error {error {name, data {message}}}  the turn's failure (MessageAbortedError
//                                                 after an abort)
//   session.idle                                  the turn is over: turn_failed (after an
//                                                 error) or turn_done
//
// Turn states (begin_turn → starting → busy → idle):
//   idle      no turn: everything but permission requests is ignored
//   starting  the prompt was sent; a session.idle here is a late one of the
//             previous turn (an abort ends a turn with two) and is ignored,
//             unless an error was reported since: a prompt refused before
//             the loop ran
//   busy      session.status busy seen: session.idle ends the turn
// Assistant messages first seen while a turn runs are this turn's; parts of older
// messages (an aborted message's last update arrives after its idle) are
// left out, so they never leak into the next turn.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include <boost/json/object.hpp>

#include "runtime/agent/dialect.h"
#include "runtime/agent/opencode/opencode.h"

namespace tether::runtime::agent::opencode {

class serve_events {
 public:
  explicit serve_events(std::string session) : session_(std::move(session)) {}

  [[nodiscard]] const std::string& session() const { return session_; }
  void begin_turn();
  void abandon_turn();
  // Whether a turn was begun and has not ended.
  [[nodiscard]] bool turn_running() const { return state_ != state::idle; }
  // One event of the stream; what it means for the running turn goes to `out`.
  void feed(const boost::json::object& event, std::vector<agent_event>& out);

 private:
  enum class state { idle, starting, busy };
  void part_updated(const boost::json::object& part, std::vector<agent_event>& out);
  [[nodiscard]] bool this_turns(const std::string& message) const { return turn_messages_.contains(message); }

  std::string session_;
  state state_ = state::idle;
  std::optional<std::string> error_;     // the running turn's failure
  std::set<std::string> known_;          // every message id seen
  std::set<std::string> turn_messages_;  // the running turn's assistant messages
  std::set<std::string> text_parts_;     // text parts of this turn (deltas of others are reasoning)
  std::set<std::string> done_parts_;     // text and step-finish parts already mapped
  tool_calls_seen tools_;
};

}  // namespace tether::runtime::agent::opencode
