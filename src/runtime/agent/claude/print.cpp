// claude -p --output-format stream-json: one process per turn, `--resume ID`
// to continue.
//
// Configured through its environment and flags (claude_cli.h): the model,
// the MCP server of Tether's tools, the tools it may use without asking (in
// -p mode a tool that would ask is denied). Output: claude_cli.h.
#include "runtime/agent/claude/cli.h"
#include "runtime/agent/dialect.h"

namespace tether::runtime::agent {

namespace {

class claude_print final : public dialect {
 public:
  [[nodiscard]] std::string_view program() const override { return "claude"; }
  [[nodiscard]] std::string_view key_variable() const override { return "ANTHROPIC_API_KEY"; }
  [[nodiscard]] std::string scripted_base_url(std::string_view root) const override { return std::string(root); }

  result<launch> prepare(const launch_input& in) const override {
    auto l = claude_launch(in, {"--output-format", "stream-json"});
    if (!l) return l.error();
    if (in.resume) l->argv.insert(l->argv.end(), {"--resume", *in.resume});
    for (auto& f : claude_permission_flags(in.settings->permissions)) l->argv.push_back(std::move(f));
    for (const auto& a : in.settings->args) l->argv.push_back(a);
    return l;
  }
  [[nodiscard]] std::unique_ptr<line_mapper> mapper() const override { return make_claude_mapper(); }
};

}  // namespace

std::unique_ptr<dialect> make_claude_print() { return std::make_unique<claude_print>(); }

}  // namespace tether::runtime::agent
