// warm_registry — the warm agent processes of one profile (warm_runtime.h
// says when each is created, reused and closed). Internal to the warm runtime.
//
//   auto p = reg->take(session, generation);     // the warm one (now busy), or null
//   if (!p) p = co_await reg->open(session, generation, stop);  // then start it (null: stopped)
//   ... the turn ...
//   reg->release(p);                             // idle again: the keep-alive runs
//   reg->retire(p);                              // or: it broke; closed
//
// Threads: take/open/release/retire/forget from any thread (one mutex);
// a process's own members on its strand. close() runs on the strand, once.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include "runtime/agent/agent_env.h"
#include "runtime/agent/agent_runtime.h"
#include "runtime/agent/relay/model_relay.h"
#include "runtime/agent/bridge/tool_bridge.h"
#include "runtime/agent/warm_dialect.h"
#include "util/ids.h"

namespace tether::process {
class child;
}

namespace tether::runtime::agent {

class turn_recorder;

struct warm_process {
  explicit warm_process(const boost::asio::any_io_executor& io);
  ~warm_process();

  boost::asio::any_io_executor strand;
  session_id session;
  std::int64_t generation = 0;

  // The profile's settings as this process runs with them (its task's mode
  // may make them read-only); outlives conn, which points at them.
  agent_settings settings;
  // On the strand:
  std::unique_ptr<process::child> proc;
  std::unique_ptr<agent_connection> conn;
  run_ticket ticket;           // Tether's tools for this process (`tether mcp`)
  relay_ticket relay;          // its model requests through the relay (model_relay.h)
  std::string agent_session;   // the agent's own session, once opened
  // In an environment: where it runs ("ENV:WORKSPACE"; "" here), and the
  // place of the turn it serves now (its signals reach the program there;
  // a place is closed when its turn ends, and later signals go nowhere).
  std::string place_key;
  std::shared_ptr<session::turn_place> place;
  bool resume_refused = false; // the agent did not know the session it was asked to resume
  stderr_tail err;
  bool reading_stderr = false;
  std::shared_ptr<turn_recorder> turn;  // the running turn: ask_user reaches it
  boost::asio::any_io_executor turn_executor;
  boost::asio::steady_timer keep;  // the keep-alive watch
  bool closing = false;

  // Any thread:
  std::atomic<bool> dead{false};  // it exited, or its protocol broke
  pid_t pid = 0;
  std::int64_t started_ms = 0;

  // Under the registry's mutex:
  bool busy = false;
  bool retired = false;     // close when its turn releases it
  bool close_queued = false;
  std::uint64_t last_used = 0;
  std::chrono::steady_clock::time_point idle_since = std::chrono::steady_clock::now();

  // {"pid":…,"started_ms":…}: runtime.bound's state.
  [[nodiscard]] std::string identity() const;
};
using process_ptr = std::shared_ptr<warm_process>;

class warm_registry : public std::enable_shared_from_this<warm_registry> {
 public:
  warm_registry(const agent_options& o, std::size_t max_processes, std::chrono::milliseconds keep_alive);

  process_ptr take(const session_id& s, std::int64_t generation);
  // A new (busy) process entry for `s`, once one fits: processes still
  // closing count, so at most max_processes are alive at once (it closes the
  // least recently used idle one when they are all open). The check and the
  // entry are one step under the lock: two turns on two threads never both
  // take the last place. Null when `stop` was requested first.
  boost::asio::awaitable<process_ptr> open(session_id s, std::int64_t generation, std::stop_token stop);
  void release(const process_ptr& p);
  void retire(const process_ptr& p);
  void forget(const session_id& s);
  // Closes every process and waits until all are gone; later adds are closed at once.
  boost::asio::awaitable<void> stop();
  // Starts reading the process's stderr; a process whose stderr ends while
  // idle has died: it is retired.
  void watch_stderr(const process_ptr& p);

  [[nodiscard]] std::size_t size();

 private:
  process_ptr add_locked(const session_id& s, std::int64_t generation);
  void close_locked(const process_ptr& p);
  boost::asio::awaitable<void> close(process_ptr p);
  boost::asio::awaitable<void> keep_alive(process_ptr p);

  agent_options o_;  // a copy: close() may outlive the runtime's turn
  std::size_t max_;
  std::chrono::milliseconds keep_alive_;
  std::mutex mu_;
  std::map<session_id, process_ptr> procs_;
  std::size_t closing_ = 0;
  std::uint64_t clock_ = 0;
  bool stopped_ = false;
};

}  // namespace tether::runtime::agent
