// The ACP agents Tether knows (make_acp, warm_dialect.h): how each is
// launched; all speak the protocol of acp.h.
//
//   agent         program           launch
//   codex         codex-acp         the native codex-acp binary, codex's
//                                   config.toml (codex_common.h) in CODEX_HOME
//   claude        claude-agent-acp  the installed claude as
//                                   CLAUDE_CODE_EXECUTABLE (else its bundled
//                                   one), IS_SANDBOX=1 (it asks for the
//                                   skip-permissions mode, refused as root
//                                   otherwise), ANTHROPIC_BASE_URL and model,
//                                   non-essential traffic off
//   opencode      opencode          `opencode acp`, opencode's configuration
//                                   file (opencode.h, as opencode run)
//   any           acp               the profile's command, as it is, with
//                                   TETHER_MODEL_BASE_URL, TETHER_MODEL and
//                                   TETHER_MODEL_KEY when it has a model
// The profile's `args` follow in each case.
#include "runtime/agent/acp/acp.h"
#include "runtime/agent/codex/common.h"
#include "runtime/agent/errors.h"
#include "runtime/agent/opencode/opencode.h"
#include "runtime/agent/programs.h"

namespace tether::runtime::agent {

namespace {

using which = acp_agent;

class acp_dialect final : public warm_dialect {
 public:
  explicit acp_dialect(which a) : agent_(a) {}

  [[nodiscard]] std::string_view program() const override {
    switch (agent_) {
      case which::codex:
        return "codex-acp";
      case which::claude:
        return "claude-agent-acp";
      case which::opencode:
        return "opencode";
      case which::any:
        break;
    }
    return "acp";
  }
  [[nodiscard]] std::string_view key_variable() const override {
    return agent_ == which::claude ? "ANTHROPIC_API_KEY" : "TETHER_MODEL_KEY";
  }
  [[nodiscard]] std::string scripted_base_url(std::string_view root) const override {
    return agent_ == which::claude ? std::string(root) : std::string(root) + "/v1";
  }
  [[nodiscard]] bool can_steer() const override { return false; }
  // claude-agent-acp answers the prompt after a session/cancel with the
  // cancelled query's leftover result (end_turn at once, no model request)
  // and drops the real answer: the next turn runs in a new process.
  [[nodiscard]] bool replace_after_cancel() const override { return agent_ == which::claude; }

  result<launch> prepare(const launch_input& in) const override {
    launch l;
    l.argv = {in.program.string()};
    switch (agent_) {
      case which::codex: {
        auto codex_home = write_codex_home(in, "never");
        if (!codex_home) return codex_home.error();
        l.env["CODEX_HOME"] = codex_home->string();
        break;
      }
      case which::claude:
        l.env["CLAUDE_CONFIG_DIR"] = (in.home / ".claude").string();
        l.env["ANTHROPIC_BASE_URL"] = in.endpoint.base_url;
        l.env["ANTHROPIC_MODEL"] = in.endpoint.model;
        l.env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1";
        l.env["DISABLE_AUTOUPDATER"] = "1";
        l.env["DISABLE_TELEMETRY"] = "1";
        l.env["IS_SANDBOX"] = "1";
        if (auto claude = find("claude")) l.env["CLAUDE_CODE_EXECUTABLE"] = claude->path.string();
        break;
      case which::opencode: {
        l.argv.emplace_back("acp");
        auto env = opencode::write_config(in);
        if (!env) return env.error();
        l.env.merge(*env);
        break;
      }
      case which::any:
        // Any ACP agent: where its model is (the model relay), what to ask
        // for; the key (a token of the run) is in TETHER_MODEL_KEY.
        if (!in.endpoint.base_url.empty()) l.env["TETHER_MODEL_BASE_URL"] = in.endpoint.base_url;
        if (!in.endpoint.model.empty()) l.env["TETHER_MODEL"] = in.endpoint.model;
        break;
    }
    for (const auto& a : in.settings->args) l.argv.push_back(a);
    return l;
  }

  [[nodiscard]] std::unique_ptr<agent_connection> connect(boost::asio::any_io_executor strand, process::child& proc,
                                                          connect_options o) const override {
    return connect_acp(std::move(strand), proc, std::move(o));
  }

 private:
  which agent_;
};

}  // namespace

std::unique_ptr<warm_dialect> make_acp(acp_agent agent) { return std::make_unique<acp_dialect>(agent); }

}  // namespace tether::runtime::agent
