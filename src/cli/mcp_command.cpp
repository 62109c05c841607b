// `tether mcp`: the MCP server an agent program starts as its child (stdio
// transport: one JSON-RPC 2.0 message per line on stdin, replies on stdout,
// logs on stderr only). It owns no tools: every tools/list and tools/call is
// asked of the turn's tool bridge (runtime/agent/bridge/tool_bridge.h) at
// $TETHER_TOOLS_SOCKET with $TETHER_RUN_TOKEN.
//
// What the agent sees when the bridge says no: a tools/call result with
// isError and the bridge's reason (the model reads it and moves on), and for
// tools/list an empty list (the reason goes to stderr). JSON-RPC errors are
// kept for messages that are not MCP: -32700 a line that is not JSON (id
// null), -32600 a message that is not a request or a line over 4 MiB (which
// is skipped, never buffered whole), -32601 an unknown method, -32602 bad
// tools/call params. Notifications get no reply. Exit 0 at EOF of stdin.
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <boost/json.hpp>

#include "cli/commands.h"
#include "runtime/agent/bridge/client.h"

#ifndef TETHER_VERSION
#define TETHER_VERSION "unknown"
#endif

namespace tether::cli {

namespace {

namespace json = boost::json;
namespace agent = runtime::agent;

constexpr std::size_t max_message_bytes = 4U << 20U;
constexpr std::string_view latest_protocol = "2025-06-18";
constexpr std::array<std::string_view, 3> known_protocols = {"2024-11-05", "2025-03-26", "2025-06-18"};

constexpr int parse_error = -32700;
constexpr int invalid_request = -32600;
constexpr int method_not_found = -32601;
constexpr int invalid_params = -32602;

// Lines of a descriptor, each at most `limit` bytes; a longer one is
// reported once and its bytes dropped as they come, up to its newline.
class line_reader {
 public:
  enum class status { line, too_long, eof };
  line_reader(int fd, std::size_t limit) : fd_(fd), limit_(limit) {}

  status next(std::string& line) {
    for (;;) {
      if (const auto nl = buffer_.find('\n'); nl != std::string::npos) {
        if (skipping_ || nl > limit_) {
          buffer_.erase(0, nl + 1);
          const bool report = !skipping_;
          skipping_ = false;
          if (report) return status::too_long;
          continue;
        }
        line.assign(buffer_, 0, nl);
        buffer_.erase(0, nl + 1);
        return status::line;
      }
      if (buffer_.size() > limit_) {
        buffer_.clear();
        if (!skipping_) {
          skipping_ = true;
          return status::too_long;
        }
      }
      if (eof_) {
        if (buffer_.empty() || skipping_) return status::eof;
        line = std::move(buffer_);  // a last line without its newline
        buffer_.clear();
        return status::line;
      }
      fill();
    }
  }

 private:
  void fill() {
    std::array<char, std::size_t{64} * 1024U> chunk{};
    ssize_t n = 0;
    do {
      n = ::read(fd_, chunk.data(), chunk.size());
    } while (n < 0 && errno == EINTR);
    if (n <= 0) {
      eof_ = true;
      return;
    }
    buffer_.append(chunk.data(), static_cast<std::size_t>(n));
  }

  int fd_;
  std::size_t limit_;
  std::string buffer_;
  bool skipping_ = false;  // inside a line over the limit
  bool eof_ = false;
};

bool write_line(const json::value& message) {
  const std::string line = json::serialize(message) + "\n";
  for (std::size_t sent = 0; sent < line.size();) {
    const ssize_t n = ::write(STDOUT_FILENO, line.data() + sent, line.size() - sent);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

json::object error_reply(json::value id, int code, std::string_view message) {
  return {{"jsonrpc", "2.0"}, {"id", std::move(id)}, {"error", {{"code", code}, {"message", message}}}};
}

json::object result_reply(json::value id, json::value result) {
  return {{"jsonrpc", "2.0"}, {"id", std::move(id)}, {"result", std::move(result)}};
}

json::object text_result(std::string text, bool is_error) {
  return {{"content", json::array{json::object{{"type", "text"}, {"text", std::move(text)}}}}, {"isError", is_error}};
}

class mcp_server {
 public:
  explicit mcp_server(agent::bridge_client bridge) : bridge_(std::move(bridge)) {}

  // The reply to one line, or nullopt when it gets none (a notification).
  std::optional<json::object> handle(std::string_view line) {
    boost::system::error_code ec;
    auto v = json::parse(line, ec);
    if (ec) return error_reply(nullptr, parse_error, "Parse error: " + ec.message());
    if (!v.is_object()) return error_reply(nullptr, invalid_request, "Invalid Request: not a JSON-RPC object");
    auto& o = v.as_object();
    const auto* id = o.if_contains("id");
    if (id != nullptr && !id->is_string() && !id->is_int64() && !id->is_uint64() && !id->is_null()) {
      return error_reply(nullptr, invalid_request, "Invalid Request: id must be a string or a number");
    }
    const auto* method = o.if_contains("method");
    if (method == nullptr || !method->is_string()) {
      if (o.contains("result") || o.contains("error")) return std::nullopt;  // a response; we never ask
      return error_reply(id != nullptr ? *id : nullptr, invalid_request, "Invalid Request: no string method");
    }
    if (id == nullptr) return std::nullopt;  // a notification (notifications/initialized, cancelled, …)
    json::value params = o.contains("params") ? o.at("params") : json::value(json::object());
    return dispatch(*id, std::string(method->as_string()), std::move(params));
  }

 private:
  json::object dispatch(json::value id, const std::string& method, json::value params) {
    if (method == "initialize") return result_reply(std::move(id), initialize(params));
    if (method == "ping") return result_reply(std::move(id), json::object());
    if (method == "tools/list") return result_reply(std::move(id), list_tools());
    if (method == "tools/call") {
      const auto* p = params.if_object();
      const auto* name = p != nullptr ? p->if_contains("name") : nullptr;
      if (name == nullptr || !name->is_string()) {
        return error_reply(std::move(id), invalid_params, "Invalid params: tools/call needs a string name");
      }
      const auto* arguments = p->if_contains("arguments");
      if (arguments != nullptr && !arguments->is_object() && !arguments->is_null()) {
        return error_reply(std::move(id), invalid_params, "Invalid params: arguments must be an object");
      }
      json::object args = arguments != nullptr && arguments->is_object() ? arguments->as_object() : json::object();
      return result_reply(std::move(id), call_tool(std::string(name->as_string()), std::move(args)));
    }
    return error_reply(std::move(id), method_not_found, "Method not found: " + method);
  }

  static json::object initialize(const json::value& params) {
    std::string_view version = latest_protocol;
    if (const auto* p = params.if_object(); p != nullptr) {
      if (const auto* asked = p->if_contains("protocolVersion"); asked != nullptr && asked->is_string()) {
        for (const auto known : known_protocols) {
          if (asked->as_string() == known) version = known;
        }
      }
    }
    return {{"protocolVersion", version},
            {"capabilities", {{"tools", json::object()}}},
            {"serverInfo", {{"name", "tether"}, {"version", TETHER_VERSION}}}};
  }

  json::object list_tools() {
    json::array tools;
    auto listed = bridge_.list();
    if (!listed) {
      fmt::print(stderr, "tether mcp: tools/list: {}\n", listed.error().describe());
    } else if (const auto* refused = std::get_if<agent::protocol::refused>(&*listed)) {
      fmt::print(stderr, "tether mcp: tools/list refused by the tool bridge: {}\n", refused->reason);
    } else {
      for (auto& t : std::get<std::vector<agent::tool_spec>>(*listed)) {
        json::value schema =
            t.input_schema.is_object() ? std::move(t.input_schema) : json::value(json::object{{"type", "object"}});
        tools.push_back(json::object{
            {"name", std::move(t.name)}, {"description", std::move(t.description)}, {"inputSchema", schema}});
      }
    }
    return {{"tools", std::move(tools)}};
  }

  json::object call_tool(const std::string& name, json::object arguments) {
    auto reply = bridge_.call(name, std::move(arguments));
    if (!reply) return text_result("tether: the tool " + name + " could not run: " + reply.error().describe(), true);
    if (const auto* refused = std::get_if<agent::protocol::refused>(&*reply)) {
      return text_result("tether refused the call of " + name + ": " + refused->reason, true);
    }
    auto& done = std::get<agent::tool_reply>(*reply);
    return text_result(std::move(done.content), done.is_error);
  }

  agent::bridge_client bridge_;
};

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

int run_mcp() {
  const std::string socket = env_or_empty("TETHER_TOOLS_SOCKET");
  const std::string token = env_or_empty("TETHER_RUN_TOKEN");
  if (socket.empty() || token.empty()) {
    fmt::print(stderr,
               "tether mcp: {} is not set; this command is started by Tether for an agent's turn, with "
               "TETHER_TOOLS_SOCKET (the tool bridge's socket) and TETHER_RUN_TOKEN (the turn's token)\n",
               socket.empty() ? "TETHER_TOOLS_SOCKET" : "TETHER_RUN_TOKEN");
    return exit_usage;
  }
  mcp_server server(agent::bridge_client(socket, token));
  line_reader in(STDIN_FILENO, max_message_bytes);
  std::string line;
  for (;;) {
    const auto got = in.next(line);
    if (got == line_reader::status::eof) return exit_ok;
    if (got == line_reader::status::too_long) {
      fmt::print(stderr, "tether mcp: skipped a message over {} bytes\n", max_message_bytes);
      if (!write_line(error_reply(nullptr, invalid_request, "Invalid Request: message over 4 MiB"))) return exit_failed;
      continue;
    }
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (auto reply = server.handle(line); reply && !write_line(*reply)) return exit_failed;  // stdout is gone
  }
}

}  // namespace

void add_mcp_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("mcp",
                                 "MCP server (stdio) for an agent's turn: its tools come from Tether's tool "
                                 "bridge ($TETHER_TOOLS_SOCKET, $TETHER_RUN_TOKEN)");
  cmd->callback([&exit_code] { exit_code = run_mcp(); });
}

}  // namespace tether::cli
