// claude -p --output-format stream-json: one process per turn, `--resume ID`
// to continue.
//
// Configured through its environment (ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY,
// CLAUDE_CONFIG_DIR in the session's home, non-essential traffic off) and
// flags (model, the MCP server of Tether's tools, the tools it may use
// without asking: in -p mode a tool that would ask is denied).
// Output: system/init {session_id}, stream_event {the Messages stream's
// events: text deltas}, assistant {message.content: text and tool_use
// blocks}, user {tool_result blocks}, result {usage, total_cost_usd,
// is_error}.
#include <set>

#include <boost/json/serialize.hpp>

#include "runtime/agent/dialect.h"
#include "runtime/agent/json_lines.h"

namespace tether::runtime::agent {

namespace json = boost::json;

namespace {

constexpr std::string_view read_tools = "Read Glob Grep LS";
constexpr std::string_view write_tools = "Bash Edit MultiEdit Write NotebookEdit";
constexpr std::string_view other_tools = "WebFetch WebSearch TodoWrite Task";
constexpr std::string_view tether_tools = "mcp__tether__ask_user";

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
      turn_usage u;
      if (const auto* usage = object_at(*obj, "usage")) {
        const auto read = integer(*usage, "cache_read_input_tokens");
        u.usage.input_tokens = integer(*usage, "input_tokens") + read + integer(*usage, "cache_creation_input_tokens");
        u.usage.cached_input_tokens = read;
        u.usage.output_tokens = integer(*usage, "output_tokens");
      }
      if (const auto* cost = obj->if_contains("total_cost_usd"); cost != nullptr && cost->is_number())
        u.agent_cost_usd = cost->to_number<double>();
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
        if (dialect::is_tether_question(name)) {
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

class claude_print final : public dialect {
 public:
  [[nodiscard]] std::string_view kind() const override { return "claude-print"; }
  [[nodiscard]] std::string_view program() const override { return "claude"; }
  [[nodiscard]] std::string_view key_variable() const override { return "ANTHROPIC_API_KEY"; }
  [[nodiscard]] std::string scripted_base_url(std::string_view root) const override { return std::string(root); }

  result<launch> prepare(const launch_input& in) const override {
    launch l;
    l.env["CLAUDE_CONFIG_DIR"] = (in.home / ".claude").string();
    l.env["ANTHROPIC_BASE_URL"] = in.endpoint.base_url;
    l.env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1";
    l.env["DISABLE_AUTOUPDATER"] = "1";
    l.env["DISABLE_TELEMETRY"] = "1";
    l.argv = {in.program.string(),          "-p",      "--output-format", "stream-json", "--verbose",
              "--include-partial-messages", "--model", in.endpoint.model};
    if (in.resume) {
      l.argv.emplace_back("--resume");
      l.argv.push_back(*in.resume);
    }
    if (in.mcp) {
      json::object env;
      for (const auto& [k, v] : in.mcp->env) env[k] = v;
      json::object server{{"type", "stdio"},
                          {"command", in.mcp->program.string()},
                          {"args", json::array{"mcp"}},
                          {"env", std::move(env)}};
      const json::object config{{"mcpServers", json::object{{"tether", std::move(server)}}}};
      const auto path = in.home / "mcp.json";
      TETHER_TRY(write_private_file(path, json::serialize(config)));
      l.argv.insert(l.argv.end(), {"--mcp-config", path.string(), "--strict-mcp-config"});
    }
    using config::agent_permissions;
    switch (in.settings->permissions) {
      case agent_permissions::approve_all:
        l.argv.insert(l.argv.end(), {"--permission-mode", "acceptEdits", "--allowedTools",
                                     joined({read_tools, write_tools, other_tools, tether_tools})});
        break;
      case agent_permissions::approve_reads:
        l.argv.insert(l.argv.end(), {"--allowedTools", joined({read_tools, tether_tools}), "--disallowedTools",
                                     joined({write_tools, other_tools})});
        break;
      case agent_permissions::deny_all:
        l.argv.insert(l.argv.end(), {"--allowedTools", std::string(tether_tools), "--disallowedTools",
                                     joined({read_tools, write_tools, other_tools})});
        break;
    }
    for (const auto& a : in.settings->args) l.argv.push_back(a);
    return l;
  }

  [[nodiscard]] std::unique_ptr<line_mapper> mapper() const override { return std::make_unique<claude_mapper>(); }
};

}  // namespace

std::unique_ptr<dialect> make_claude_print() { return std::make_unique<claude_print>(); }

}  // namespace tether::runtime::agent
