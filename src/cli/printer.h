// How the CLI shows a session to a person: a turn as it happens
// (live_printer, shared by `tether run`, `send` and `chat`), and the
// transcript and session lists read from the API (`show`, `sessions`).
//
// Live output, one block per event:
//   user:            the admitted input, indented
//   assistant:       the answer; text.delta streams it, text.ended completes
//                    whatever deltas were missed
//   tool call NAME {input} / tool result: / tool failed:
//   question (ID): … with numbered options (question.h)
//   notice: …        synthetic notices (e.g. a restart)
//   run OUTCOME — duration, tokens and cost   (execution.finished; the
//                    duration when its execution.started was seen)
//
// With a status line (a terminal), tick() shows how long the running tool
// has run, "    running shell… 12s", on one line it rewrites in place
// (from a second on; the longest running of several) and clears before
// anything else is printed. A tool's start is when its tool.called arrived
// (`received_ms`, this machine's clock, so a server whose clock differs
// does not skew it), or the event's own time for one replayed from the
// past (no `received_ms`). Not thread-safe: on() and tick() from one
// thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "model/events.h"
#include "util/result.h"

namespace tether::cli {

// Where printed text goes; the default writes to stdout and flushes.
using output_sink = std::function<void(std::string_view)>;
output_sink stdout_sink();

// A question asked and not yet resolved.
struct open_question {
  std::string interaction;
  boost::json::value payload;
};

class live_printer {
 public:
  explicit live_printer(output_sink out = stdout_sink(), bool status_line = false);

  void on(const model::event& e, std::optional<std::int64_t> received_ms = std::nullopt);
  // Called often while waiting (every 200 ms or so), with the wall clock in
  // ms: redraws the status line when its second changed.
  void tick(std::int64_t now_ms);

  // Inputs typed in this terminal are not echoed back as "user:".
  void hide_input(const std::string& input_id) { hidden_inputs_.insert(input_id); }

  // An execution.finished was printed.
  [[nodiscard]] bool finished() const { return finished_; }
  [[nodiscard]] const std::optional<open_question>& question() const { return question_; }
  // A question asked before the stream began (joining a waiting session).
  void show_question(open_question q);

 private:
  void end_stream(std::string& out);
  void clear_status(std::string& out);
  void forget_tool(const std::string& call);

  output_sink out_;
  bool status_line_ = false;
  struct running_tool {
    std::string call;
    std::string name;
    std::int64_t since_ms = 0;  // when its tool.called arrived, or that event's time
  };
  std::vector<running_tool> tools_;  // called, no result yet; the status shows the first
  std::int64_t shown_seconds_ = -1;  // the status line's, -1: none shown
  std::string streamed_;
  std::set<std::string, std::less<>> hidden_inputs_;
  std::optional<open_question> question_;
  std::optional<std::int64_t> started_at_;  // of the execution printed, when its start was seen
  bool finished_ = false;
};

// "    " before every line.
std::string indent(std::string_view text);

// "run succeeded — 4.2s, N input tokens (M cached), K output tokens, cost $X
// (status)"; the duration only when known.
std::string format_finish(std::string_view outcome, std::string_view error, const model::usage& u,
                          std::optional<std::int64_t> duration_ms = std::nullopt);

// An API event object ({id, session_id, seq, type, version, time, data}) back
// to a model::event. model_errc::undecodable (or util_errc::malformed_json)
// when it is not one, e.g. a type this binary does not know.
result<model::event> event_from_json(const boost::json::value& v);

// One line for `tether events`: "SEQ TYPE summary".
std::string format_event_line(const boost::json::value& v);

// The wall clock, ms since the Unix epoch (the time events carry).
std::int64_t wall_clock_ms();

// "4.2s", "35s", "3m05s", "2h10m", "3d04h".
std::string format_duration(std::int64_t ms);
// How long ago, coarsely: "40s", "3m", "2h", "5d".
std::string format_age(std::int64_t ms);
// A usage object's cost: "$0.0123" ("+" when partly unpriced), "unpriced", "-".
std::string format_cost(const boost::json::value& usage);

// The `sessions` table from {sessions:[session]}: id, age (since its last
// event, at now_ms), status, pending inputs, profile/runtime, cost,
// workspace and title.
std::string format_session_table(const boost::json::value& sessions, std::int64_t now_ms);
// The `runs` table from {executions:[execution]}: outcome, duration,
// tokens, cost, runtime and model; a failed run's error under it.
std::string format_runs_table(const boost::json::value& executions);
// The header of `show`: id, title, status, workspace, profile, generation.
std::string format_session(const boost::json::value& session);
// The transcript from {messages:[message]}: user and assistant text, tool
// calls with their status and result, synthetic notices, resets.
std::string format_transcript(const boost::json::value& messages);

}  // namespace tether::cli
