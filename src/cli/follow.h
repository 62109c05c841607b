// session_follower: a session's event stream (SSE), with the bookkeeping
// `send` and `chat` need to know when "their" turn is over.
//
//   session_follower f(client, "ses_x");
//   f.open(last_seq);                 // before admitting, so no delta is missed
//   f.watch_input(input_json);        // the admitted input
//   while (!f.turn_over()) f.poll(200ms, on_event);
//
// A turn is over when the execution the watched input was promoted into
// finishes (turn_outcome() says how), or when the input is cancelled.
// Inputs are promoted by input.promoted events; when an execution finishes
// before the watched input's promotion was seen, the follower asks
// GET …/inputs once, so a steer absorbed by a running execution is not
// waited on forever.
//
// A broken stream is reopened from the last durable seq seen (Last-Event-ID
// semantics), at most three times in a row.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <boost/json/value.hpp>

#include "cli/client.h"
#include "cli/common.h"
#include "model/events.h"
#include "util/result.h"

namespace tether::cli {

// The JSON object of one SSE event, and its decoded form (null when this
// binary does not know the type).
using event_handler = std::function<void(const boost::json::value&, const model::event*)>;

enum class turn_end { running, succeeded, failed, interrupted, waiting, cancelled };

class session_follower {
 public:
  session_follower(client& c, std::string session);

  // Opens the stream of events with seq > after.
  result<void> open(std::int64_t after);
  // Reads for at most `wait` and hands every event to `handler`.
  result<void> poll(std::chrono::milliseconds wait, const event_handler& handler);
  // The stream's socket (for poll() with stdin), or -1.
  [[nodiscard]] int fd() const;

  // Starts watching an admitted input (the API's input object).
  void watch_input(const boost::json::value& input);
  // Starts watching a running execution (`tether attach`).
  void watch_execution(std::string execution);
  // Starts watching the next execution to start (`tether answer`: the turn
  // the answer continues).
  void watch_next_execution();
  [[nodiscard]] bool turn_over() const { return end_ != turn_end::running; }
  [[nodiscard]] turn_end outcome() const { return end_; }
  [[nodiscard]] bool watching() const { return !input_.empty(); }

  [[nodiscard]] std::int64_t last_seq() const { return last_seq_; }
  [[nodiscard]] const std::string& session() const { return session_; }

 private:
  void track(const model::event& e);

  client& client_;
  std::string session_;
  std::unique_ptr<event_stream> stream_;
  std::int64_t last_seq_ = 0;
  std::string input_;
  std::string execution_;
  bool next_execution_ = false;  // watch_next_execution()
  turn_end end_ = turn_end::running;
};

// The exit code for a finished turn (commands.h).
int exit_code_for(turn_end end);

// Prints the watched turn until it is over. Ctrl-C asks the server to
// interrupt the session and keeps printing until the run finishes; a second
// Ctrl-C leaves at once. Events up to `replayed_until` happened before the
// stream was opened (attach): a running tool's time counts from their own
// time; any later one counts from its arrival here. Returns the exit code
// (client_commands.cpp).
int follow_turn(client& c, session_follower& f, const std::string& session, output_format format,
                std::int64_t replayed_until = 0);

struct send_options {
  bool queue = false;
  bool no_resume = false;
  bool detach = false;
  output_format format = output_format::text;
};
// `tether send`'s work: posts {text, delivery, resume} to `target` (the
// session's inputs, or a task's messages) and, unless detached (or the
// input only waits in an idle session), prints the turn it starts;
// returns the exit code (commands.h).
int send_and_follow(client& c, const std::string& session, const std::string& target, const std::string& text,
                    const send_options& o);

}  // namespace tether::cli
