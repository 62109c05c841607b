// One turn of the native runtime (private to runtime/native): the step loop
// native_runtime.h describes, with its state. A turn lives on the session's
// strand for the duration of run_turn().
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "runtime/native/native_runtime.h"
#include "store/work_types.h"

namespace tether::runtime::native {

// What the runtime shares with every turn.
struct runtime_parts {
  const native_options& options;
  provider& model;
  const tool_set& tools;
  boost::asio::any_io_executor blocking;
};

class turn {
 public:
  turn(runtime_parts parts, session::turn_context ctx, std::shared_ptr<session::turn_host> host);
  boost::asio::awaitable<session::turn_result> run();

 private:
  // The outcome of one model request with its retries.
  struct step_outcome {
    enum class kind { done, cut, failed, cancelled, lost } what = kind::failed;
    completion done;
    std::string partial_text;  // cut: what was streamed before the cut
    std::string error;         // cut, failed
  };

  using local_calls = std::vector<std::pair<call_id, tool_use>>;

  // One model request with its retries; `req` is rebuilt after a compaction.
  boost::asio::awaitable<step_outcome> stream_step(model_request req, bool final_step);
  boost::asio::awaitable<result<void>> compact(bool forced);
  boost::asio::awaitable<result<void>> record(std::vector<model::payload> events);
  // The events of a successful response (to record); the local calls to run go to `local`.
  std::vector<model::payload> output_events(const completion& c, bool final_step, local_calls& local);
  // Runs the calls concurrently until all settled; true when one asked a question.
  boost::asio::awaitable<result<bool>> run_calls(local_calls calls);
  boost::asio::awaitable<void> run_call(call_id id, tool_use call, std::shared_ptr<struct call_batch> batch);
  boost::asio::awaitable<bool> sleep(std::chrono::milliseconds d);

  [[nodiscard]] model_request request(bool final_step) const;
  // The local tools the session may use, then its task's work tools.
  [[nodiscard]] std::vector<tool_spec> offered_specs() const;
  [[nodiscard]] bool stopped() const;
  void add_rows(const std::vector<model::event>& events);
  session::turn_result finish(session::turn_status s, std::string error = {});

  runtime_parts parts_;
  session::turn_context ctx_;
  std::shared_ptr<session::turn_host> host_;
  std::vector<store::message_row> rows_;  // the transcript as the model sees it, kept current
  std::set<std::string> hosted_;          // hosted call ids recorded in this turn
  std::map<std::string, std::pair<std::string, std::optional<reasoning_state>>> reasoning_;  // by source id
  model::usage usage_;
  bool lease_lost_ = false;
  bool compacted_for_overflow_ = false;
  std::mt19937_64 rng_;
  std::filesystem::path workspace_;
  std::optional<store::task_row> task_;  // the task whose session this is, read at the turn's start
  bool read_only_ = false;               // only the local tools that change nothing
  std::vector<tool_spec> work_specs_;    // the work tools offered
};

}  // namespace tether::runtime::native
