// The agent-program kinds' profile settings (config::profile::settings of
// a codex, claude, opencode or acp profile) and how the configuration reads
// them, besides the common base_url, model, api_key_env, ca_file and env
// (names passed through to the agent, like native's tools):
//
//   [profiles.codex]
//   runtime     = "codex-exec"
//   command     = "/opt/codex/bin/codex"   # absent: the installed binary (tether doctor shows which)
//   model       = "gpt-5.5"
//   base_url    = "https://api.openai.com/v1"   # absent: the official URL of what the agent speaks
//   api_key_env = "OPENAI_API_KEY"
//   provider    = "scripted"             # the built-in scripted model instead of a real one
//   wire        = "chat"                 # opencode kinds only: "chat" | "responses" | "messages"
//   permissions = "approve-all"          # | "approve-reads" | "deny-all"
//   args        = ["--some-flag"]        # appended to the agent's command line
//   env         = ["GOPATH"]             # passed through from Tether's environment
//   set_env     = { FOO = "bar" }        # set in the agent's environment
//   idle_timeout_ms = 600000             # no output for this long: the turn fails
//   network     = "relay-only"           # | "full": what the agent reaches in its contain sandbox
//   ca_file     = "/etc/my-ca.pem"       # certificates the model relay trusts for base_url
//
// The agent's model requests go through Tether's model relay
// (runtime/agent/relay/model_relay.h): the agent holds a token of its run,
// never the key. network = "relay-only" gives its contain sandbox no network
// but the relay; "full" the host's network (for agents whose own tools need
// it).
//
// The warm kinds (a process per session kept across turns) also take:
//   keep_alive_ms = 600000               # an idle process is closed after this long
//   max_processes = 8                    # per node; the least recently used idle one makes room
//   start_timeout_ms = 120000            # a new process has this long to be ready (its protocol's
//                                        # session open), then idle_timeout_ms counts
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"

namespace tether::runtime::agent {

// What an agent program may do unasked (`permissions`).
enum class agent_permissions { approve_all, approve_reads, deny_all };
std::string_view to_string(agent_permissions p);

// What a contained agent program reaches of the network (`network`).
enum class agent_network { relay_only, full };
std::string_view to_string(agent_network n);

struct agent_settings {
  std::string command;
  std::string wire;  // the opencode kinds: chat | responses | messages ("" = chat)
  agent_permissions permissions = agent_permissions::approve_all;
  std::vector<std::string> args;
  std::map<std::string, std::string, std::less<>> set_env;
  std::int64_t idle_timeout_ms = 600'000;
  std::int64_t keep_alive_ms = 600'000;  // the warm kinds'
  std::int64_t max_processes = 8;        // the warm kinds'
  std::int64_t start_timeout_ms = 120'000;  // the warm kinds'
  agent_network network = agent_network::relay_only;
};

// Where an agent kind's model is when base_url does not say.
enum class model_home { openai, anthropic, by_wire, own };

// What the configuration needs of one agent kind.
struct agent_kind_traits {
  bool warm = false;              // takes keep_alive_ms and max_processes
  bool wire = false;              // takes `wire` (opencode)
  model_home home = model_home::openai;
  bool command_required = false;  // the generic acp kind: any agent, named by `command`
};

// The configuration's view of the agent kind called `name`.
config::kind_keys agent_keys(std::string name, agent_kind_traits traits);

}  // namespace tether::runtime::agent
