// codex exec --json: one process per turn, `resume THREAD` to continue.
//
// Its configuration (CODEX_HOME/config.toml, codex_common.h) names a custom
// provider for the profile's endpoint, the MCP server of Tether's tools, and
// switches off analytics; it runs unattended (approval_policy "never").
// Output: JSONL events thread.started, turn.started, item.started /
// item.completed (agent_message, command_execution, file_change,
// mcp_tool_call, reasoning, error, …), turn.completed {usage} or turn.failed.
#include <set>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "model/reported.h"
#include "runtime/agent/codex/common.h"
#include "runtime/agent/dialect.h"
#include "runtime/agent/json_lines.h"

namespace tether::runtime::agent {

namespace json = boost::json;

namespace {

class codex_mapper final : public line_mapper {
 public:
  result<std::vector<agent_event>> feed(std::string_view line) override {
    auto obj = parse_object(line);
    if (!obj) return obj.error();
    std::vector<agent_event> out;
    const auto type = str(*obj, "type");
    if (type == "thread.started") {
      out.emplace_back(agent_session{str(*obj, "thread_id")});
    } else if (type == "item.started" || type == "item.completed") {
      item(*obj, type == "item.completed", out);
    } else if (type == "turn.completed") {
      turn_usage u;
      if (const auto* usage = object_at(*obj, "usage")) {
        u.usage.input_tokens = model::token_count(*usage, "input_tokens");
        u.usage.cached_input_tokens = model::token_count(*usage, "cached_input_tokens");
        u.usage.output_tokens = model::token_count(*usage, "output_tokens") + model::token_count(*usage, "reasoning_output_tokens");
      }
      out.emplace_back(std::move(u));
      out.emplace_back(turn_done{});
    } else if (type == "turn.failed") {
      std::string message;
      if (const auto* e = object_at(*obj, "error")) message = str(*e, "message");
      if (message.empty()) message = last_error_.empty() ? "codex reported the turn failed" : last_error_;
      out.emplace_back(turn_failed{std::move(message)});
    } else if (type == "error") {
      last_error_ = str(*obj, "message");
    }
    return out;
  }

 private:
  void item(const json::object& ev, bool completed, std::vector<agent_event>& out) {
    const auto* it = object_at(ev, "item");
    if (it == nullptr) return;
    const auto kind = str(*it, "type");
    const auto id = str(*it, "id");
    if (kind == "agent_message") {
      if (completed) out.emplace_back(agent_message{str(*it, "text")});
    } else if (kind == "command_execution") {
      if (!completed || !started_.contains(id)) {
        started_.insert(id);
        out.emplace_back(tool_start{id, "exec_command", json::object{{"command", str(*it, "command")}}});
      }
      if (completed) {
        const auto code = integer(*it, "exit_code");
        const bool ok = str(*it, "status") == "completed" && code == 0;
        std::string output = str(*it, "aggregated_output");
        if (!ok) output = "exit code " + std::to_string(code) + (output.empty() ? "" : ": " + output);
        out.emplace_back(tool_end{id, ok, std::move(output)});
      }
    } else if (kind == "file_change") {
      if (!completed || !started_.contains(id)) {
        started_.insert(id);
        const auto* changes = it->if_contains("changes");
        out.emplace_back(tool_start{id, "apply_patch", json::object{{"changes", changes ? *changes : json::value()}}});
      }
      if (completed) out.emplace_back(tool_end{id, str(*it, "status") == "completed", str(*it, "status")});
    } else if (kind == "mcp_tool_call") {
      const auto tool = str(*it, "server") + "." + str(*it, "tool");
      if (dialect::is_tether_tool(tool)) return;  // recorded through the bridge
      if (!completed || !started_.contains(id)) {
        started_.insert(id);
        const auto* args = it->if_contains("arguments");
        out.emplace_back(tool_start{id, tool, args ? *args : json::value(json::object{})});
      }
      if (completed) {
        const auto* result = it->if_contains("result");
        const auto* error = it->if_contains("error");
        const bool ok = str(*it, "status") == "completed" && (error == nullptr || error->is_null());
        out.emplace_back(tool_end{id, ok,
                                  ok ? (result ? json::serialize(*result) : std::string())
                                     : (error ? json::serialize(*error) : str(*it, "status"))});
      }
    } else if (kind == "error") {
      last_error_ = str(*it, "message");
    }
  }

  std::set<std::string> started_;
  std::string last_error_;
};

class codex_exec final : public dialect {
 public:
  [[nodiscard]] std::string_view program() const override { return "codex"; }
  [[nodiscard]] std::string_view key_variable() const override { return "TETHER_MODEL_KEY"; }
  [[nodiscard]] std::string scripted_base_url(std::string_view root) const override {
    return std::string(root) + "/v1";
  }

  result<launch> prepare(const launch_input& in) const override {
    auto codex_home = write_codex_home(in, "never");
    if (!codex_home) return codex_home.error();
    launch l;
    l.env["CODEX_HOME"] = codex_home->string();
    l.argv = {in.program.string(), "exec", "--json", "--skip-git-repo-check", "--disable", "plugins"};
    for (const auto& a : in.settings->args) l.argv.push_back(a);
    if (in.resume) {
      l.argv.emplace_back("resume");
      l.argv.push_back(*in.resume);
    }
    l.argv.emplace_back("-");  // the prompt comes on stdin: no length limit, never parsed as an option
    return l;
  }

  [[nodiscard]] std::unique_ptr<line_mapper> mapper() const override { return std::make_unique<codex_mapper>(); }
};

}  // namespace

std::unique_ptr<dialect> make_codex_exec() { return std::make_unique<codex_exec>(); }

}  // namespace tether::runtime::agent
