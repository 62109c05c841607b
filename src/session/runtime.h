// The Runtime seam: what executes one turn of a session.
//
// The runner (session/runner.cpp) calls run_turn() on the session's strand
// with the transcript of the current context generation; the inputs promoted
// for this turn are already at its end. The runtime reports through the
// turn_host:
//
//   boundary()  — call right before every model request after the first:
//                 promotes the steers admitted up to this moment (all of them,
//                 in admission order) and returns them as user messages to
//                 append to the request. Queued inputs are never promoted here.
//   boundary_after(events) — at the end of a step whose answer is final:
//                 records `events` (the answer) and promotes the steers
//                 admitted up to now, in one commit; the runtime goes on with
//                 them. When no steer is pending the events are held and
//                 written with the execution's next write (its end, or the
//                 next queued input's promotion), so a turn that ends with an
//                 answer costs no commit of its own. `recorded` is empty then.
//   record()    — appends durable events (step.*, text.ended, tool.*,
//                 interaction.requested, runtime.bound, …) fenced on the
//                 session's lease. A fence failure means the lease was lost:
//                 return turn_status::interrupted promptly.
//   record_soon() — like record() but without waiting for the commit: the
//                 events are queued before anything recorded later, and a
//                 failure (a lost lease) fails the next record(). For events
//                 whose loss in a crash is harmless (step.started), so the
//                 model request need not wait for a disk flush.
//   publish()   — ephemeral events (text.delta, …) for live subscribers.
//   wake()      — rings the session's doorbell: one more drain after this one.
//   stop_token()— requested on interrupt, lease loss or shutdown. Register a
//                 std::stop_callback that cancels the model stream and kills
//                 tool processes (post to your own executor: the callback runs
//                 on the interrupting thread), then return interrupted.
//
// A question for a human: record tool.called and interaction.requested (with
// the call id) and return turn_status::waiting. The answer settles the call
// and wakes the session; the next turn sees the tool result in its transcript.
#pragma once

#include <memory>
#include <stop_token>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "model/events.h"
#include "store/types.h"
#include "util/result.h"

namespace tether::session {

template <class T>
using task = boost::asio::awaitable<T>;

struct turn_context {
  session_id session;
  execution_id execution;
  std::vector<store::message_row> transcript;  // since the last reset, in order
  std::string workspace;
  std::string profile;
  std::string runtime;              // the runtime bound to the session, if any
  std::string external_session_id;  // its session id, dropped on reset
  bool continuation = false;        // no new input: continue after a restart or an answer
};

struct boundary_result {
  std::vector<model::event> recorded;        // the events given, as written (empty when held)
  std::vector<store::message_row> promoted;  // the steers promoted, as user messages
};

class turn_host {
 public:
  virtual ~turn_host() = default;
  virtual task<result<std::vector<store::message_row>>> boundary() = 0;
  virtual task<result<boundary_result>> boundary_after(std::vector<model::payload> events) = 0;
  virtual task<result<std::vector<model::event>>> record(std::vector<model::payload> events) = 0;
  virtual void record_soon(std::vector<model::payload> events) = 0;
  virtual void publish(model::payload ephemeral) = 0;
  virtual void wake() = 0;
  [[nodiscard]] virtual std::stop_token stop_token() const = 0;
};

enum class turn_status { completed, waiting, failed, interrupted };

struct turn_result {
  turn_status status = turn_status::completed;
  std::string error;   // for failed
  model::usage usage;  // added to the execution's usage
};

class runtime {
 public:
  virtual ~runtime() = default;
  // `host` stays valid for the whole turn.
  virtual task<turn_result> run_turn(turn_context ctx, std::shared_ptr<turn_host> host) = 0;
};

}  // namespace tether::session
