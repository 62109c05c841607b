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
// made-up one is refused, as is a tool the run does not offer. Lines are at
// most max_line_bytes; a longer one, or one that is not a JSON object with
// a string token and a known op (call: a string tool and an object of
// arguments), gets {"ok":false}
// with the reason and the connection is closed. Connections are bounded
// (max_connections; over it a new one is closed at once).
//
//   tool_bridge bridge(io.get_executor(), data / "run" / "tools.sock");
//   TETHER_TRY(bridge.start());
//   auto run = bridge.open(turn_executor, {ask_user_spec()}, handler);   // run_ticket
//   ... env TETHER_RUN_TOKEN=run.token() ...
//   // the ticket's destruction closes the run: later calls are refused
//   co_await bridge.stop();
//
// Threads: start()/stop() on the owner's side; open() from any thread; a
// handler runs on the run's executor, one call at a time per run (a second
// call of the same run waits for the first). A run closed while its handler
// runs lets the handler finish; its reply is still sent.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>

#include "util/result.h"

namespace tether::runtime::agent {

// A tool as MCP lists it (tools/list): name, description, JSON schema of its input.
struct tool_spec {
  std::string name;
  std::string description;
  boost::json::value input_schema;
};

struct tool_reply {
  std::string content;  // text for the agent
  bool is_error = false;
};

using tool_handler = std::function<boost::asio::awaitable<tool_reply>(std::string tool, boost::json::value arguments)>;

// The open run of one turn; closing it (destruction, close()) refuses later calls.
class run_ticket {
 public:
  run_ticket() = default;
  run_ticket(run_ticket&&) noexcept = default;
  run_ticket& operator=(run_ticket&&) noexcept = default;
  ~run_ticket();
  [[nodiscard]] const std::string& token() const { return token_; }
  void close();

 private:
  friend class tool_bridge;
  struct shared;
  std::shared_ptr<shared> shared_;
  std::string token_;
};

class tool_bridge {
 public:
  static constexpr std::size_t max_line_bytes = 1U << 20U;
  static constexpr std::size_t max_connections = 256;

  tool_bridge(boost::asio::any_io_executor executor, std::filesystem::path socket_path);
  ~tool_bridge();
  tool_bridge(const tool_bridge&) = delete;
  tool_bridge& operator=(const tool_bridge&) = delete;

  // Binds the socket (a stale socket file is replaced; a path over the
  // sun_path limit is an error naming it).
  result<void> start();
  boost::asio::awaitable<void> stop();
  [[nodiscard]] const std::filesystem::path& socket_path() const;

  run_ticket open(boost::asio::any_io_executor run_executor, std::vector<tool_spec> tools, tool_handler handler);
  // The tools of an open run (what `tether mcp` lists), or nullopt for an unknown token.
  [[nodiscard]] std::optional<std::vector<tool_spec>> tools_of(const std::string& token) const;

  struct impl;

 private:
  std::shared_ptr<impl> impl_;
};

}  // namespace tether::runtime::agent
