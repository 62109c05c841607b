// opencode run --format json: one process per turn, `--session ID` to
// continue.
//
// Configured by a file (OPENCODE_CONFIG in the session's home) holding
// opencode_common.h's configuration. Output: one JSON line per part (step_start, text,
// tool_use, step_finish {tokens, cost}, error), each with its sessionID.
#include <set>

#include <boost/json/serialize.hpp>

#include "runtime/agent/dialect.h"
#include "runtime/agent/json_lines.h"
#include "runtime/agent/opencode_common.h"

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
      tool(*part, out);
    } else if (type == "step_finish" && part != nullptr) {
      turn_usage u;
      if (const auto* tokens = object_at(*part, "tokens")) {
        std::int64_t read = 0;
        std::int64_t write = 0;
        if (const auto* cache = object_at(*tokens, "cache")) {
          read = integer(*cache, "read");
          write = integer(*cache, "write");
        }
        u.usage.input_tokens = integer(*tokens, "input") + read + write;
        u.usage.cached_input_tokens = read;
        u.usage.output_tokens = integer(*tokens, "output") + integer(*tokens, "reasoning");
      }
      if (const auto* cost = part->if_contains("cost"); cost != nullptr && cost->is_number())
        u.agent_cost_usd = cost->to_number<double>();
      out.emplace_back(std::move(u));
      // A step that ends for any reason but more tool calls ends the turn.
      if (str(*part, "reason") != "tool-calls") out.emplace_back(turn_done{});
    } else if (type == "error") {
      std::string message;
      if (const auto* e = object_at(*obj, "error")) {
        if (const auto* data = object_at(*e, "data")) message = str(*data, "message");
        if (message.empty()) message = str(*e, "name");
      }
      out.emplace_back(turn_failed{message.empty() ? std::string("opencode reported an error") : message});
    }
    return out;
  }

 private:
  void tool(const json::object& part, std::vector<agent_event>& out) {
    const auto id = str(part, "callID");
    const auto name = str(part, "tool");
    if (dialect::is_tether_question(name)) return;
    const auto* state = object_at(part, "state");
    if (state == nullptr) return;
    const auto status = str(*state, "status");
    if (!started_.contains(id)) {
      started_.insert(id);
      const auto* input = state->if_contains("input");
      out.emplace_back(tool_start{id, name, input ? *input : json::value(json::object{})});
    }
    if (status == "completed") out.emplace_back(tool_end{id, true, str(*state, "output")});
    if (status == "error") out.emplace_back(tool_end{id, false, str(*state, "error")});
  }

  std::string session_;
  std::set<std::string> started_;
};

class opencode_run final : public dialect {
 public:
  [[nodiscard]] std::string_view kind() const override { return "opencode-run"; }
  [[nodiscard]] std::string_view program() const override { return "opencode"; }
  [[nodiscard]] std::string_view key_variable() const override { return "TETHER_MODEL_KEY"; }
  [[nodiscard]] std::string scripted_base_url(std::string_view root) const override {
    return std::string(root) + "/v1";
  }

  result<launch> prepare(const launch_input& in) const override {
    const auto config = opencode_config(in);
    const auto path = in.home / "opencode.json";
    TETHER_TRY(write_private_file(path, json::serialize(config)));
    launch l;
    l.env["OPENCODE_CONFIG"] = path.string();
    l.env["OPENCODE_DISABLE_MODELS_FETCH"] = "1";
    l.env["OPENCODE_DISABLE_AUTOUPDATE"] = "1";
    l.env["OPENCODE_DISABLE_SHARE"] = "1";
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
