// turn_recorder — what one agent turn records, shared by the per-turn and
// the warm runtimes (agent_runtime.h, warm_runtime.h): the mapping of the
// agent's events onto Tether's, the host's calls one at a time, Tether's
// ask_user question, and the turn's end (step.ended priced, or step.failed
// with the reason).
//
//   auto rec = std::make_shared<turn_recorder>(turn_executor, host, facts);
//   co_await rec->take(events);        // agent_events → text.delta / text.ended / tool.* / runtime.bound …
//   ... rec->done(), rec->agent_error(), rec->usage() ...
//   co_return co_await rec->complete();        // or rec->fail("exited with 3", stderr_tail)
//
// Threads: every member on the turn's executor (the warm runtime hops
// there). Keep it in a shared_ptr while a coroutine of it runs.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json/value.hpp>

#include "runtime/agent/dialect.h"
#include "runtime/agent/relay/model_relay.h"
#include "runtime/agent/bridge/tool_bridge.h"
#include "runtime/common/pricing.h"
#include "session/runtime.h"
#include "store/work_types.h"

namespace tether::work {
class agent_tools;
}

namespace tether::runtime::agent {

struct turn_facts {
  std::string kind;     // the runtime kind, recorded in runtime.bound
  std::string program;  // names the agent in failure messages ("codex")
  std::string secret;   // the model key: "[redacted]" in everything recorded
  std::string model;    // priced with `prices`
  const runtime::price_table* prices = nullptr;
  std::int64_t last_seen_seq = 0;  // what runtime.bound says the agent has seen
  std::string state;               // runtime.bound's state (the warm process's identity)
};

class turn_recorder {
 public:
  turn_recorder(const boost::asio::any_io_executor& ex, std::shared_ptr<session::turn_host> host, turn_facts facts);

  [[nodiscard]] session::turn_host& host() { return *host_; }
  [[nodiscard]] std::shared_ptr<session::turn_host> host_ptr() const { return host_; }
  [[nodiscard]] const turn_facts& facts() const { return facts_; }
  // The host's record(), one call at a time (the output loop and ask_user both record).
  boost::asio::awaitable<result<std::vector<model::event>>> record(std::vector<model::payload> events);
  // Publishes text pieces and records the rest. An error: recording failed
  // (see failed_recording()); the turn must end.
  boost::asio::awaitable<result<void>> take(std::vector<agent_event> events);
  // Records runtime.bound for the agent session `id` (once per id), without
  // waiting for the commit, with state `state`.
  void bind_soon(const std::string& id, std::string state);
  // The host's boundary(), one call at a time with record(): the steers
  // promoted now, as user messages.
  boost::asio::awaitable<result<std::vector<store::message_row>>> boundary();

  // Tether's ask_user, called by the agent through `tether mcp`.
  boost::asio::awaitable<tool_reply> ask_user(std::string tool, boost::json::value args);
  static tool_spec ask_user_spec();

  // The task whose session this turn is (none: not a task's), whose work
  // tools (work/agent_tools.h) the agent gets beside ask_user.
  void set_task(work::agent_tools* tools, std::optional<store::task_row> task);
  // What `tether mcp` lists: ask_user, then the task's work tools.
  [[nodiscard]] std::vector<tool_spec> tool_specs() const;
  // `settings` as this turn's agent runs with them: a task in ask mode may
  // only read (approve_reads, or deny_all when the profile says so) — the
  // agent's own file and shell tools are refused by its permission policy.
  // Planning before acceptance is not restricted for agent programs (codex's
  // read-only sandbox refuses its MCP calls too).
  [[nodiscard]] agent_settings settings_for(const agent_settings& settings) const;
  // A call through `tether mcp`: ask_user, or a work tool of the task,
  // recorded as an agent tool call (tool.called before it runs, then its
  // result). request_plan_approval records the confirmation like a question.
  boost::asio::awaitable<tool_reply> call(std::string tool, boost::json::value args);

  // step.failed with "PROGRAM: why" (redacted) and the stderr tail; the turn failed.
  boost::asio::awaitable<session::turn_result> fail(std::string why, std::string stderr_tail);
  // step.ended with the usage priced; completed, or waiting after a question.
  boost::asio::awaitable<session::turn_result> complete();
  // interrupted, with the usage so far.
  [[nodiscard]] session::turn_result interrupted();
  // After a failed record(): the turn's result (interrupted on a lost lease).
  [[nodiscard]] session::turn_result failed_recording();

  // The model relay's grant of this turn's agent (model_relay.h): it must
  // outlive the turn. Its usage, read from the responses themselves, is the
  // turn's whenever any response reported some (for agents that report
  // none, or fewer than they made); otherwise the agent's own report is.
  // A warm process's grant: what it read since the last turn took it.
  void meter(relay_ticket& grant) { relay_ = &grant; }

  [[nodiscard]] bool done() const { return done_; }
  void restart() { done_ = false; }  // another agent turn runs inside this Tether turn
  [[nodiscard]] const std::optional<std::string>& agent_error() const { return agent_error_; }
  [[nodiscard]] bool asked() const { return asked_; }
  // The agent session this turn's agent reported ("" when it reported none).
  [[nodiscard]] const std::string& bound() const { return bound_; }
  // The turn's usage so far (see meter()).
  [[nodiscard]] model::usage usage();
  [[nodiscard]] std::string redacted(std::string s) const;
  // run_turn is returning: ask_user refuses from now on.
  void finish() { finished_ = true; }

 private:
  std::shared_ptr<session::turn_host> host_;
  turn_facts facts_;
  bool host_busy_ = false;
  boost::asio::steady_timer host_wait_;
  std::map<std::string, call_id> calls_;  // the agent's call ids → Tether's
  std::string bound_;
  model::usage usage_;    // what the agent reported
  relay_ticket* relay_ = nullptr;
  model::usage relayed_;  // what the relay read, taken from relay_
  std::size_t relayed_responses_ = 0;
  std::optional<double> agent_cost_;
  std::optional<std::string> agent_error_;
  std::optional<tether::error> record_error_;
  bool done_ = false;
  bool asked_ = false;
  bool finished_ = false;
  work::agent_tools* work_ = nullptr;
  std::optional<store::task_row> task_;
};

}  // namespace tether::runtime::agent
