// The native runtime: Tether's own agent loop over a model provider and the
// local tools (docs/architecture.md §5).
//
//   native_options o;
//   o.provider = {.api = wire_api::anthropic, .base_url = ..., .model = ...};
//   o.data_dir = "/var/lib/tether";
//   auto rt = make_native_runtime(std::move(o));
//   session_service svc(store, *rt, ...);
//
// One turn (run_turn) is a loop of steps; a step is one model request:
//
//   1. before every request after the first, host->boundary() promotes the
//      steers admitted so far and they join the conversation;
//   2. if the estimated request is larger than context_window - reserve, the
//      older history is compacted: summarized by the model with a fixed
//      template (objective, important details, work state, next move,
//      relevant files; media described, never embedded), recorded as
//      compaction.ended, and replaced by the summary (recent messages stay
//      verbatim);
//   3. step.started is recorded and the model is streamed: text and
//      reasoning deltas are published as ephemeral events;
//   4. on success one append records reasoning.ended, text.ended, every tool
//      call (tool.called; hosted calls with their result, or failed when the
//      provider sent none) and step.ended with the step's usage and cost;
//   5. the local calls then run concurrently, each already durable before its
//      side effects start; each records tool.succeeded or tool.failed as it
//      settles; all settle before the next step. An ask_user call records
//      interaction.requested and makes the turn end `waiting` once the others
//      settled;
//      A session that is a task's (native_options::work) also gets the work
//      tools of its task's mode, run by work/agent_tools.h; in ask mode and
//      while a plan awaits approval, only the local tools that change
//      nothing are offered (and a call of another fails, naming the mode);
//   6. the loop continues while tools ran or steers are waiting, and ends on
//      a final answer, a waiting interaction, an error, or max_steps (the last
//      step is asked for a final answer with tools disabled).
//
// Failures of a request follow retry.h: retried ones record
// step.retry_scheduled {attempt, at, error} and wait (cancellable); a context
// overflow before any output compacts once and rebuilds the step once; a
// stream cut after output records the partial text, step.failed and a
// synthetic "continue where you left off" note, then goes on with a new
// step; anything else records step.failed and ends the turn failed with the
// provider's message.
//
// Interrupt: host->stop_token() cancels the model stream, a backoff wait and
// every running tool (bash kills its process group); the turn returns
// `interrupted` and the runner settles what is left. A lost lease (a refused
// record()) also returns `interrupted`, without writing anything more.
//
// Threading: run_turn runs on the session's strand; tools do their blocking
// work on `blocking` (a pool owned by the runtime unless given).
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/any_io_executor.hpp>

#include "runtime/common/pricing.h"
#include "runtime/native/providers/provider.h"
#include "runtime/native/providers/retry.h"
#include "runtime/native/tools/tool.h"
#include "session/runtime.h"

namespace tether::work {
class agent_tools;
}

namespace tether::runtime::native {

struct compaction_options {
  std::int64_t context_window = 128'000;  // tokens the model accepts
  std::int64_t reserve = 16'000;          // kept free for the answer
  std::size_t keep_recent = 6;            // messages kept verbatim at least (whole tool exchanges)
};

struct native_options {
  provider_options provider;
  std::filesystem::path data_dir;  // spill files and image blobs live under it
  std::string system_prompt;       // empty: a built-in prompt naming the workspace
  std::string instructions;        // the profile's: added to the system prompt
  int max_steps = 50;
  retry_options retry;
  compaction_options compaction;
  tool_limits limits;
  sandbox_policy sandbox;  // what bash reaches (tools/sandbox.h); read-only also stops write and edit
  price_table prices = price_table::defaults();
  // Where tools do blocking file work; empty: a pool of 2 threads owned by
  // the runtime.
  boost::asio::any_io_executor blocking;
  // The work layer's tools (work/agent_tools.h), offered to the agent of a
  // task's session by the task's work mode, which also decides whether the
  // local tools that change files are offered; null: no session is a task's.
  // Must outlive the runtime.
  work::agent_tools* work = nullptr;
};

class native_runtime final : public session::runtime {
 public:
  explicit native_runtime(native_options o);
  ~native_runtime() override;
  native_runtime(const native_runtime&) = delete;
  native_runtime& operator=(const native_runtime&) = delete;

  // "native" for every profile. start(), stop() and forget() have nothing
  // to do: no state outlives a turn but the provider's connection pool.
  [[nodiscard]] std::string name(std::string_view profile) const override;
  session::task<result<void>> start() override;
  session::task<void> stop() override;
  session::task<void> forget(session_id s) override;
  session::task<session::turn_result> run_turn(session::turn_context ctx,
                                               std::shared_ptr<session::turn_host> host) override;

  [[nodiscard]] const native_options& options() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

std::unique_ptr<native_runtime> make_native_runtime(native_options o);

}  // namespace tether::runtime::native
