// tool_bridge — how an agent program's MCP server (`tether mcp`, a child of
// the agent) reaches the turn that is running it, without a store of its own.
//
// The node serves one Unix socket (DATA/run/tools.sock, mode 0600, in a
// 0700 directory). An adapter opens a *run* for each turn it starts: the
// bridge returns a fresh random token (32 bytes, hex) that the adapter puts
// in the agent's MCP server environment (TETHER_TOOLS_SOCKET,
// TETHER_RUN_TOKEN). `tether mcp` sends one request per line and reads one
// reply per line:
//
//   → {"token":"…","op":"list"}
//   ← {"ok":true,"tools":[{"name","description","inputSchema"}]}
//   → {"token":"…","op":"call","tool":"ask_user","arguments":{…}}
//   ← {"ok":true,"content":"…","is_error":false}
//   ← {"ok":false,"error":"unknown run token"}      (refused: nothing ran)
//
// A request names a tool of the run's tool list; the run's handler runs it on
// the executor the run was opened with (the turn's) and its reply goes back
// on the same connection. A token of a closed run, of another node, or a
// made-up one is refused ("unknown run token"), as is a tool the run does
// not offer; the connection stays open for the next request. Lines are at
// most max_line_bytes (a trailing '\r' is dropped, empty lines are skipped);
// a longer one, or one that is not a JSON object with a string token and a
// known op (call: a string tool and an object of arguments), gets
// {"ok":false} with the reason and the connection is closed. Requests on
// one connection are answered in order, one at a time.
//
// Connections are counted after they authenticate, so that one agent
// cannot starve the others (`tether mcp` opens a connection per request and
// sends at once):
//   - a new connection must send a request with a run's token within
//     auth_timeout; until then it is unauthenticated, and at most
//     max_unauthenticated are kept: one more evicts the oldest (closed);
//   - a run holds at most max_connections_per_run connections; one more is
//     refused ("too many connections for this run"), and the run counts it
//     (run_ticket::refused(): a turn whose agent was turned away must not
//     report success);
//   - a connection waiting for its next request is closed after
//     idle_timeout (never while its call runs: a question waits for a
//     person);
//   - max_connections bounds them all (over it a new one is sent
//     {"ok":false,"error":"too many connections to the tool bridge"}).
//
//   tool_bridge bridge(io.get_executor(), data / "run" / "tools.sock");
//   TETHER_TRY(bridge.start());
//   auto run = bridge.open(turn_executor, {ask_user_spec()}, handler);   // run_ticket
//   ... env TETHER_RUN_TOKEN=run.token() ...
//   // the ticket's destruction closes the run: later calls are refused
//   co_await bridge.stop();
//
// Threads: start()/stop() on the owner's side; open(), tools_of() and a
// ticket's close() from any thread; connections run on strands of the
// bridge's executor. A handler runs on the run's executor, one call at a time
// per run (a second call of the same run waits for the first, in arrival
// order). A run closed while its handler runs lets the handler finish; its
// reply is still sent. A call still waiting when its run closes is refused
// ("the run is closed"). A handler that throws answers its call with
// is_error and the exception's text (and is logged); it must not, though.
//
// Lifetimes: the bridge keeps a run's handler (and what it captured) until
// the ticket is gone and its last call has finished, which may be after the
// ticket's destruction; whatever the handler uses must outlive that too
// (own it through the capture, or keep the turn alive until its calls end).
//
// stop() closes the listener and every connection, waits until every
// connection coroutine and the accept loop have ended (a gate, no polling),
// then removes the socket file (only if it is still the one it bound). It
// does not wait for a handler still running: its connection ends unanswered
// and its reply, when the handler returns, is dropped. A stopped bridge
// cannot be started again; the destructor of a started bridge that was not
// stopped closes the listener and the connections but cannot wait.
//
// Errors of start(): agent_errc::socket_path_too_long (naming the path),
// not_a_socket (something else sits at the path; it is left alone),
// address_in_use (a live process accepts on the path), listen_failed,
// already_started. See listen_socket.h for how the file is made.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>

#include "runtime/agent/types.h"
#include "util/result.h"

namespace tether::runtime::agent {

class tcp_door;

using tool_handler = std::function<boost::asio::awaitable<tool_reply>(std::string tool, boost::json::value arguments)>;

// The open run of one turn; closing it (destruction, close()) refuses later calls.
class run_ticket {
 public:
  run_ticket() = default;
  run_ticket(run_ticket&&) noexcept = default;
  run_ticket& operator=(run_ticket&& o) noexcept;  // closes the run this ticket held
  ~run_ticket();
  [[nodiscard]] const std::string& token() const { return token_; }
  // Connections of this run the bridge turned away so far (any thread; 0
  // once closed).
  [[nodiscard]] std::size_t refused() const;
  void close();

 private:
  friend class tool_bridge;
  struct shared;
  std::shared_ptr<shared> shared_;
  std::string token_;
};

// The reason a turn fails when the bridge turned `refused` of its agent's
// connections away: its tools may not have run.
std::string unreachable_tools(std::size_t refused);

class tool_bridge {
 public:
  static constexpr std::size_t max_line_bytes = 1U << 20U;
  static constexpr std::size_t max_connections = 4096;
  static constexpr std::size_t max_unauthenticated = 64;
  static constexpr std::size_t max_connections_per_run = 16;
  static constexpr std::chrono::milliseconds auth_timeout{5'000};
  static constexpr std::chrono::milliseconds idle_timeout{60'000};

  tool_bridge(boost::asio::any_io_executor executor, std::filesystem::path socket_path);
  ~tool_bridge();
  tool_bridge(const tool_bridge&) = delete;
  tool_bridge& operator=(const tool_bridge&) = delete;

  // Binds the socket (a stale socket file is replaced; a path over the
  // sun_path limit is an error naming it). On the calling thread.
  result<void> start();
  boost::asio::awaitable<void> stop();
  [[nodiscard]] const std::filesystem::path& socket_path() const;
  // A port on 127.0.0.1 that leads to the socket (tcp_door.h), opened on the
  // first call: for an environment that reaches this machine over TCP only.
  // stop() closes it. Any thread.
  result<std::uint16_t> tcp_port();

  // A new run with a fresh token; before start() too (nothing reaches it until then).
  run_ticket open(boost::asio::any_io_executor run_executor, std::vector<tool_spec> tools, tool_handler handler);
  // The tools of an open run (what `tether mcp` lists), or nullopt for an unknown token.
  [[nodiscard]] std::optional<std::vector<tool_spec>> tools_of(const std::string& token) const;

  struct impl;

 private:
  std::shared_ptr<impl> impl_;
  std::mutex door_mu_;
  std::unique_ptr<tcp_door> door_;
};

}  // namespace tether::runtime::agent
