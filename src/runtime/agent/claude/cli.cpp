// What claude -p and claude stream-json share (claude_cli.h).
#include "runtime/agent/claude/cli.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>

#include "model/reported.h"
#include "runtime/agent/json_lines.h"
#include "util/beneath.h"

namespace tether::runtime::agent {

namespace json = boost::json;

namespace {

constexpr std::string_view write_tools = "Bash Edit MultiEdit Write NotebookEdit";
constexpr std::string_view other_tools = "WebFetch WebSearch TodoWrite Task";

std::string joined(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (const auto p : parts) out += (out.empty() ? "" : " ") + std::string(p);
  return out;
}

// The text of a tool_result's content: a string, or text blocks.
std::string result_text(const json::value* content) {
  if (content == nullptr) return {};
  if (content->is_string()) return std::string(content->as_string());
  std::string out;
  if (content->is_array())
    for (const auto& b : content->as_array())
      if (b.is_object() && str(b.as_object(), "type") == "text") out += str(b.as_object(), "text");
  return out;
}

class claude_mapper final : public line_mapper {
 public:
  result<std::vector<agent_event>> feed(std::string_view line) override {
    auto obj = parse_object(line);
    if (!obj) return obj.error();
    std::vector<agent_event> out;
    const auto type = str(*obj, "type");
    if (type == "system" && str(*obj, "subtype") == "init") {
      out.emplace_back(agent_session{str(*obj, "session_id")});
    } else if (type == "assistant") {
      assistant(*obj, out);
    } else if (type == "user") {
      tool_results(*obj, out);
    } else if (type == "stream_event") {  // --include-partial-messages: the answer as it streams
      if (const auto* ev = object_at(*obj, "event"); ev != nullptr && str(*ev, "type") == "content_block_delta")
        if (const auto* delta = object_at(*ev, "delta"); delta != nullptr && str(*delta, "type") == "text_delta")
          out.emplace_back(text_piece{str(*delta, "text")});
    } else if (type == "result") {
      if (obj->contains("is_error") && obj->at("is_error").is_bool() && obj->at("is_error").as_bool()) {
        auto message = str(*obj, "result");
        if (message.empty()) message = "claude: " + str(*obj, "subtype");
        out.emplace_back(turn_failed{std::move(message)});
      }
      auto u = claude_result_usage(*obj);
      out.emplace_back(std::move(u));
      if (out.size() == 1) out.emplace_back(turn_done{});
    }
    return out;
  }

 private:
  void assistant(const json::object& ev, std::vector<agent_event>& out) {
    const auto* message = object_at(ev, "message");
    if (message == nullptr) return;
    const auto* content = message->if_contains("content");
    if (content == nullptr || !content->is_array()) return;
    std::string text;
    for (const auto& b : content->as_array()) {
      if (!b.is_object()) continue;
      const auto& block = b.as_object();
      const auto kind = str(block, "type");
      if (kind == "text") {
        text += str(block, "text");
      } else if (kind == "tool_use") {
        const auto name = str(block, "name");
        if (dialect::is_tether_tool(name)) {
          skipped_.insert(str(block, "id"));
          continue;
        }
        const auto* input = block.if_contains("input");
        out.emplace_back(tool_start{str(block, "id"), name, input ? *input : json::value(json::object{})});
      }
    }
    if (!text.empty()) out.emplace_back(agent_message{std::move(text)});
  }

  void tool_results(const json::object& ev, std::vector<agent_event>& out) {
    const auto* message = object_at(ev, "message");
    if (message == nullptr) return;
    const auto* content = message->if_contains("content");
    if (content == nullptr || !content->is_array()) return;
    for (const auto& b : content->as_array()) {
      if (!b.is_object() || str(b.as_object(), "type") != "tool_result") continue;
      const auto& block = b.as_object();
      const auto id = str(block, "tool_use_id");
      if (skipped_.contains(id)) continue;
      const auto* err = block.if_contains("is_error");
      const bool failed = err != nullptr && err->is_bool() && err->as_bool();
      out.emplace_back(tool_end{id, !failed, result_text(block.if_contains("content"))});
    }
  }

  std::set<std::string> skipped_;
};

}  // namespace

bool claude_tool_listed(std::string_view list, std::string_view tool) {
  while (!list.empty()) {
    const auto space = list.find(' ');
    if (list.substr(0, space) == tool) return true;
    if (space == std::string_view::npos) break;
    list.remove_prefix(space + 1);
  }
  return false;
}

result<launch> claude_launch(const launch_input& in, const std::vector<std::string>& mode) {
  launch l;
  l.env["CLAUDE_CONFIG_DIR"] = (in.home / ".claude").string();
  l.env["ANTHROPIC_BASE_URL"] = in.endpoint.base_url;
  l.env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1";
  l.env["DISABLE_AUTOUPDATER"] = "1";
  l.env["DISABLE_TELEMETRY"] = "1";
  l.argv = {in.program.string(), "-p"};
  l.argv.insert(l.argv.end(), mode.begin(), mode.end());
  l.argv.insert(l.argv.end(), {"--verbose", "--include-partial-messages", "--model", in.endpoint.model});
  if (in.mcp) {
    json::object env;
    for (const auto& [k, v] : in.mcp->env) env[k] = v;
    json::object server{{"type", "stdio"},
                        {"command", in.mcp->program.string()},
                        {"args", json::array{"mcp"}},
                        {"env", std::move(env)}};
    const json::object config{{"mcpServers", json::object{{"tether", std::move(server)}}}};
    const auto path = in.home / "mcp.json";
    TETHER_TRY(write_home_file(in, "mcp.json", json::serialize(config)));
    l.argv.insert(l.argv.end(), {"--mcp-config", path.string(), "--strict-mcp-config"});
  }
  return l;
}

std::vector<std::string> claude_permission_flags(agent_permissions p) {
  switch (p) {
    case agent_permissions::approve_all:
      return {"--permission-mode", "acceptEdits", "--allowedTools",
              joined({claude_read_tools, write_tools, other_tools, claude_tether_tools})};
    case agent_permissions::approve_reads:
      return {"--allowedTools", joined({claude_read_tools, claude_tether_tools}), "--disallowedTools",
              joined({write_tools, other_tools})};
    case agent_permissions::deny_all:
      return {"--allowedTools", std::string(claude_tether_tools), "--disallowedTools",
              joined({claude_read_tools, write_tools, other_tools})};
  }
  return {};
}

turn_usage claude_result_usage(const json::object& result) {
  turn_usage u;
  if (const auto* usage = object_at(result, "usage")) {
    const auto read = model::token_count(*usage, "cache_read_input_tokens");
    u.usage.input_tokens = model::token_count(*usage, "input_tokens") + read + model::token_count(*usage, "cache_creation_input_tokens");
    u.usage.cached_input_tokens = read;
    u.usage.output_tokens = model::token_count(*usage, "output_tokens");
  }
  u.agent_cost_usd = model::cost_at(result, "total_cost_usd");
  return u;
}

std::unique_ptr<line_mapper> make_claude_mapper() { return std::make_unique<claude_mapper>(); }

namespace {

constexpr std::uintmax_t session_file_tail = 1U << 20U;
constexpr auto session_file_patience = std::chrono::seconds(3);
constexpr auto session_file_poll = std::chrono::milliseconds(20);

// CONFIG/projects/*/SESSION.jsonl, or empty when claude has not written it.
std::filesystem::path session_file(const std::string& config, const std::string& session) {
  std::error_code ec;
  for (const auto& project : std::filesystem::directory_iterator(std::filesystem::path(config) / "projects", ec)) {
    auto file = project.path() / (session + ".jsonl");
    if (std::filesystem::is_regular_file(std::filesystem::symlink_status(file, ec))) return file;
  }
  return {};
}

}  // namespace

std::uintmax_t claude_session_size(const std::string& config, const std::string& session) {
  const auto file = session_file(config, session);
  std::error_code ec;
  const auto size = file.empty() ? 0 : std::filesystem::file_size(file, ec);
  return ec ? 0 : size;
}

// The file is in the agent's home, which the agent can write: it is opened
// beneath the config directory with no link followed and never blocks (a
// FIFO there is no session file), then read with pread.
bool claude_session_has(const std::string& config, const std::string& session, std::string_view needle,
                        std::uintmax_t from) {
  const auto file = session_file(config, session);
  if (file.empty()) return false;
  auto root = beneath::open_root(config);
  if (!root) return false;
  auto fd = beneath::open_regular(root->get(), file.lexically_relative(config).string());
  if (!fd) return false;
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) return false;
  const auto size = static_cast<std::uintmax_t>(st.st_size);
  if (size <= from) return false;
  if (size - from > session_file_tail) from = size - session_file_tail;  // the needle is near the end
  std::string text(size - from, '\0');
  std::size_t have = 0;
  while (have < text.size()) {
    const auto n = ::pread(fd->get(), text.data() + have, text.size() - have, static_cast<off_t>(from + have));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    have += static_cast<std::size_t>(n);
  }
  text.resize(have);
  return text.find(needle) != std::string::npos;
}

boost::asio::awaitable<void> claude_session_written(std::string config, std::string session, std::string needle,
                                                    std::uintmax_t from) {
  boost::asio::steady_timer t(co_await boost::asio::this_coro::executor);
  const auto deadline = std::chrono::steady_clock::now() + session_file_patience;
  while (!claude_session_has(config, session, needle, from) && std::chrono::steady_clock::now() < deadline) {
    t.expires_after(session_file_poll);
    co_await t.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
  }
}

}  // namespace tether::runtime::agent
