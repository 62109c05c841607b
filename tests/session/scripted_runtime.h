// A scripted Runtime for session tests: each turn plays a list of actions.
//
//   text X        step.started, text.ended{X}, step.ended
//   tool NAME     step.started, tool.called, tool.succeeded, step.ended
//   answer X      step.started, then host.boundary_after(text.ended{X},
//                 step.ended): written with the steers that arrived, or held;
//                 the steers promoted are kept in `boundaries`
//   inflight NAME step.started, tool.called, then hang until stopped
//   ask Q         tool.called(ask_user) + interaction.requested, return waiting
//   boundary      host.boundary(); the promoted inputs are kept in `boundaries`
//   gate          count an arrival in `arrivals`, wait until open_gate() (or stop)
//   fail E        return failed(E)
//   hang          wait until stopped, return interrupted
//   wake          host.wake()
//   woken         host.on_wake(listener), count an arrival, wait until the
//                 listener ran (a wake of the session while the turn runs);
//                 each call of it is counted in `wakes_heard`
//   agent NAME    step.started, tool.called (kind agent), then hang until
//                 stopped: an agent's call that never reports its end
//   bind X        runtime.bound{scripted, X, no generation (the host's),
//                 last seen = the transcript's last seq, state {"turn": n}}
//   bind_big      runtime.bound with a state one byte over the limit
//   keep          keep the host after the turn (kept_host())
//   soon X        host.record_soon(synthetic{X, "soon"}): not waited for
//
// Turns without a script reply "done". Everything a turn saw is recorded,
// and so is every error a host call returned (host_errors()) and every
// lifecycle call (start, stop, forget).
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "session/runtime.h"

namespace tether::testing {

struct action {
  enum class kind {
    text, tool, inflight, ask, boundary, answer, gate, fail, hang, wake, woken, agent, bind, bind_big, keep, soon
  };
  kind what;
  std::string arg;
};
inline action text(std::string s) { return {action::kind::text, std::move(s)}; }
inline action tool(std::string s) { return {action::kind::tool, std::move(s)}; }
inline action inflight(std::string s) { return {action::kind::inflight, std::move(s)}; }
inline action ask(std::string s) { return {action::kind::ask, std::move(s)}; }
inline action boundary() { return {action::kind::boundary, {}}; }
inline action answer(std::string s) { return {action::kind::answer, std::move(s)}; }
inline action gate() { return {action::kind::gate, {}}; }
inline action fail(std::string s) { return {action::kind::fail, std::move(s)}; }
inline action hang() { return {action::kind::hang, {}}; }
inline action wake() { return {action::kind::wake, {}}; }
inline action woken() { return {action::kind::woken, {}}; }
inline action agent(std::string s) { return {action::kind::agent, std::move(s)}; }
inline action bind(std::string s) { return {action::kind::bind, std::move(s)}; }
inline action bind_big() { return {action::kind::bind_big, {}}; }
inline action keep() { return {action::kind::keep, {}}; }
inline action soon(std::string s) { return {action::kind::soon, std::move(s)}; }

class scripted_runtime final : public session::runtime {
 public:
  // Scripts are consumed one per turn, in order, across all sessions.
  void script(std::vector<action> turn);
  [[nodiscard]] std::string name(std::string_view profile) const override;
  session::task<result<void>> start() override;
  session::task<void> stop() override;
  session::task<void> forget(session_id s) override;
  session::task<session::turn_result> run_turn(session::turn_context ctx,
                                               std::shared_ptr<session::turn_host> host) override;

  // start() fails with this error from now on.
  void fail_start(std::string why);
  [[nodiscard]] int starts() const { return starts_.load(); }
  [[nodiscard]] int stops() const { return stops_.load(); }
  // Turns still running when stop() was called (the service stops the runtime after its drains).
  [[nodiscard]] int running_at_stop() const { return running_at_stop_.load(); }
  [[nodiscard]] std::vector<session_id> forgotten() const;
  [[nodiscard]] std::vector<error> host_errors() const;
  [[nodiscard]] std::shared_ptr<session::turn_host> kept_host() const;

  void open_gate() { gate_open_.fetch_add(1); }
  [[nodiscard]] int arrivals() const { return arrivals_.load(); }
  [[nodiscard]] int wakes_heard() const { return wakes_heard_->load(); }
  [[nodiscard]] int turns() const { return turns_.load(); }
  [[nodiscard]] std::vector<session::turn_context> contexts() const;
  [[nodiscard]] std::vector<std::vector<store::message_row>> boundaries() const;

 private:
  mutable std::mutex mu_;
  std::deque<std::vector<action>> scripts_;
  std::vector<session::turn_context> contexts_;
  std::vector<std::vector<store::message_row>> boundaries_;
  std::atomic<int> arrivals_{0};
  std::atomic<int> gate_open_{0};
  // Shared with the listeners, which may outlive a turn if the host kept them.
  std::shared_ptr<std::atomic<int>> wakes_heard_ = std::make_shared<std::atomic<int>>(0);
  std::atomic<int> gates_passed_{0};
  void note(const error& e);

  std::atomic<int> turns_{0};
  std::atomic<int> running_{0};
  std::atomic<int> starts_{0};
  std::atomic<int> stops_{0};
  std::atomic<int> running_at_stop_{-1};
  std::optional<std::string> start_failure_;
  std::vector<session_id> forgotten_;
  std::vector<error> host_errors_;
  std::shared_ptr<session::turn_host> kept_;
};

}  // namespace tether::testing
