// opencode run --format json: one process per turn, `--session ID` to
// continue.
//
// Configured by a file in the session's home (opencode.h: the provider, the
// model, the permissions, Tether's MCP server). Output: one JSON line per part (step_start, text,
// tool_use, step_finish {tokens, cost}, error), each with its sessionID.
#include "runtime/agent/dialect.h"
#include "runtime/agent/json_lines.h"
#include "runtime/agent/opencode/opencode.h"

namespace tether::runtime::agent {

namespace json = boost::json;

namespace {

class opencode_mapper final : public line_mapper {
 public:
  result<std::vector<agent_event>> feed(std::string_view line) override {
    auto obj = parse_object(line);
    if (!obj) return obj.error();
    std::vector<agent_event> out;
    if (auto id = str(*obj, "sessionID"); !id.empty() && id != session_) {
      session_ = id;
      out.emplace_back(agent_session{std::move(id)});
    }
    const auto type = str(*obj, "type");
    const auto* part = object_at(*obj, "part");
    if (type == "text" && part != nullptr) {
      if (auto text = str(*part, "text"); !text.empty()) out.emplace_back(agent_message{std::move(text)});
    } else if (type == "tool_use" && part != nullptr) {
      opencode::tool_events(*part, started_, out);
    } else if (type == "step_finish" && part != nullptr) {
      out.emplace_back(opencode::step_usage(*part));
      // A step that ends for any reason but more tool calls ends the turn.
      if (str(*part, "reason") != "tool-calls") out.emplace_back(turn_done{});
    } else if (type == "error") {
      const auto* e = object_at(*obj, "error");
      out.emplace_back(turn_failed{e != nullptr ? opencode::error_text(*e) : "opencode reported an error"});
    }
    return out;
  }

 private:
  std::string session_;
  opencode::tool_calls_seen started_;
};

class opencode_run final : public dialect {
 public:
  [[nodiscard]] std::string_view program() const override { return "opencode"; }
  [[nodiscard]] std::string_view key_variable() const override { return opencode::key_variable; }
  [[nodiscard]] std::string scripted_base_url(std::string_view root) const override {
    return std::string(root) + "/v1";
  }

  result<launch> prepare(const launch_input& in) const override {
    auto env = opencode::write_config(in);
    if (!env) return env.error();
    launch l;
    l.env = std::move(*env);
    l.argv = {in.program.string(), "run", "--format", "json"};
    if (in.resume) {
      l.argv.emplace_back("--session");
      l.argv.push_back(*in.resume);
    }
    for (const auto& a : in.settings->args) l.argv.push_back(a);
    return l;
  }

  [[nodiscard]] std::unique_ptr<line_mapper> mapper() const override { return std::make_unique<opencode_mapper>(); }
};

}  // namespace

std::unique_ptr<dialect> make_opencode_run() { return std::make_unique<opencode_run>(); }

}  // namespace tether::runtime::agent
