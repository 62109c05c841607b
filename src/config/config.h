// Tether's configuration: one TOML file, every key optional. With no file at
// all the defaults work: one profile, `default`, running the native runtime
// against the built-in scripted model.
//
//   data_dir = "/var/lib/tether"      # where the store, spills and workspaces live
//   workspace_roots = ["/srv/repos"]  # where a session's workspace may be (absolute paths)
//
//   [profiles.default]
//   runtime     = "native"            # the runtime kind (runtime_kinds()); the keys below are native's
//   provider    = "openai-chat"       # "openai-responses" | "anthropic" | "scripted"
//   base_url    = "https://api.openai.com/v1"   # absent: the provider's official URL
//   model       = "gpt-4o-mini"
//   api_key_env = "OPENAI_API_KEY"    # the variable holding the key (never the key itself)
//   ca_file     = "/etc/tether/model-ca.pem"  # certificates trusted for https besides the system's
//   max_steps   = 50                  # model requests per turn at most
//   context_window = 128000           # tokens; compaction keeps requests under it
//   sandbox     = "workspace-write"   # the bash tool's sandbox: "workspace-write" | "read-only" | "off"
//   network     = false               # whether bash may use the network (inside the sandbox)
//   env         = ["GOPATH"]          # variables passed to tools beyond PATH, LANG, LC_*, TERM, TZ, USER, LOGNAME
//
//   [prices."gpt-4o-mini"]            # USD per million tokens, over the shipped table
//   input = 0.15
//   output = 0.6
//   cached_input = 0.075
//
// A profile's keys depend on its `runtime`: each kind has its own key set
// (config.cpp's table of kinds), and a key of another kind is an error that
// names it and the kind. An unknown `runtime` is an error listing the kinds.
// Unknown keys and wrongly typed values are errors that name the key, since a
// typo in a profile would otherwise silently run the wrong model.
//
// Which model answers: the built-in scripted model only when a profile says
// provider = "scripted", or says nothing about its model (no provider,
// base_url or model: the default profile with no file at all). Otherwise a
// real one: base_url, by default the official URL of the provider (native)
// or of what the agent program speaks (official_base_url()), where `model`
// must be named and api_key_env defaults to OPENAI_API_KEY or
// ANTHROPIC_API_KEY.
// Environment: TETHER_CONFIG names the file when no path is given.
#pragma once

#include <filesystem>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/native/providers/pricing.h"
#include "runtime/native/providers/provider.h"
#include "runtime/native/tools/sandbox.h"
#include "util/result.h"

namespace tether::config {

// What an agent program may do unasked (the agent kinds' `permissions`).
enum class agent_permissions { approve_all, approve_reads, deny_all };
std::string_view to_string(agent_permissions p);

// What a contained agent program reaches of the network (`network`).
enum class agent_network { relay_only, full };
std::string_view to_string(agent_network n);

// The settings of the agent-program kinds beside base_url, model, api_key_env and env (names passed
// through to the agent, like native's tools):
//
//   [profiles.codex]
//   runtime     = "codex-exec"
//   command     = "/opt/codex/bin/codex"   # absent: the installed binary (tether doctor shows which)
//   model       = "gpt-5.5"
//   base_url    = "https://api.openai.com/v1"   # absent: the official URL of what the agent speaks
//   api_key_env = "OPENAI_API_KEY"
//   provider    = "scripted"             # the built-in scripted model instead of a real one
//   wire        = "chat"                 # opencode-run only: "chat" | "responses" | "messages"
//   permissions = "approve-all"          # | "approve-reads" | "deny-all"
//   args        = ["--some-flag"]        # appended to the agent's command line
//   env         = ["GOPATH"]             # passed through from Tether's environment
//   set_env     = { FOO = "bar" }        # set in the agent's environment
//   idle_timeout_ms = 600000             # no output for this long: the turn fails
//   network     = "relay-only"           # | "full": what the agent reaches in its contain sandbox
//   ca_file     = "/etc/my-ca.pem"       # certificates the model relay trusts for base_url
//
// The agent's model requests go through Tether's model relay
// (runtime/agent/relay/model_relay.h): the agent holds a token of its run, never
// the key. network = "relay-only" gives its contain sandbox no network but
// the relay; "full" the host's network (for agents whose own tools need it).
//
// The kinds: one process per turn (codex-exec, claude-print, opencode-run),
// or a warm process per session kept across turns (codex, claude, opencode,
// acp-codex, acp-claude, acp-opencode, and acp: any ACP agent, `command`
// required). The warm kinds also take:
//   keep_alive_ms = 600000               # an idle process is closed after this long
//   max_processes = 8                    # per node; the least recently used idle one makes room
struct agent_settings {
  std::string command;
  std::string wire;  // opencode-run: chat | responses | messages ("" = chat)
  agent_permissions permissions = agent_permissions::approve_all;
  std::vector<std::string> args;
  std::map<std::string, std::string, std::less<>> set_env;
  std::int64_t idle_timeout_ms = 600'000;
  std::int64_t keep_alive_ms = 600'000;  // the warm kinds'
  std::int64_t max_processes = 8;        // the warm kinds'
  agent_network network = agent_network::relay_only;
};

// A profile: its name and runtime kind, then the settings of that kind (the
// native runtime's: provider through env; an agent program's: `agent` with
// base_url, model, api_key_env and env).
struct profile {
  std::string name;
  std::string runtime = "native";  // one of runtime_kinds()
  runtime::native::wire_api provider = runtime::native::wire_api::openai_chat;
  std::string base_url;       // the model's API; empty when scripted_model (or the generic acp agent's own)
  bool scripted_model = true;  // the built-in scripted model answers
  std::string model = "scripted";
  std::string api_key_env;
  std::string ca_file;  // absolute path of PEM certificates trusted for https; empty: the system's only
  int max_steps = 50;
  std::int64_t context_window = 128'000;
  std::string instructions;  // native: added to the system prompt (a change resets a task's session)
  runtime::native::sandbox_mode sandbox = runtime::native::sandbox_mode::workspace_write;
  bool network = false;
  std::vector<std::string> env;  // names of variables tools may see (never a profile's api_key_env)
  agent_settings agent;          // the agent kinds'

  [[nodiscard]] bool scripted() const { return scripted_model; }
};

// How long a node's claim on a session lasts without renewal, how often it
// renews it, and how often it looks for sessions of dead nodes (0: the
// node's default, 15 s on SQLite, 1 s on a shared store).
struct lease_settings {
  std::int64_t ttl_ms = 30'000;
  std::int64_t renew_ms = 10'000;
  std::int64_t scan_ms = 0;
};

struct settings {
  std::string data_dir;  // empty: default_data_dir()
  // The event store: empty for SQLite in the data directory, or a
  // PostgreSQL URL (postgres://…) shared by several nodes.
  std::string store;
  lease_settings leases;
  // Directories a session's workspace must lie under; absent: the server's
  // defaults (the data directory's workspaces/ and the directory it was
  // started in). An empty array allows only the default workspace.
  std::optional<std::vector<std::filesystem::path>> workspace_roots;
  std::map<std::string, profile, std::less<>> profiles;
  runtime::native::price_table prices = runtime::native::price_table::defaults();

  // The profile called `name`; util_errc::invalid_argument naming the known
  // ones when there is none.
  [[nodiscard]] result<profile> find(std::string_view name) const;
};

// A provider as a profile or `tether run --provider` names it: nullopt for
// "scripted" (the built-in model), else openai-chat, openai-responses or
// anthropic; any other name is util_errc::invalid_argument listing them.
result<std::optional<runtime::native::wire_api>> parse_provider(std::string_view name);

// The official base URL of the provider `p` talks to: OpenAI's or
// Anthropic's, by its native provider or by what its agent program speaks
// (opencode: by its wire); empty for the generic acp agent.
std::string official_base_url(const profile& p);

// Points `p` at a real model: no longer scripted; an empty base_url becomes
// official_base_url(p), where `model` must then be named (else
// util_errc::invalid_argument saying so) and an empty api_key_env becomes
// the provider's usual variable.
result<void> use_provider(profile& p);

// Which model answers `p`'s turns, as runs record it: "scripted", else the
// model's name (or "the agent's default model") and " at " its base URL
// when it has one.
std::string model_label(const profile& p);

// Where the data lives when neither --data nor the file's data_dir says:
// $XDG_DATA_HOME/tether, else $HOME/.local/share/tether (the user's data
// directory), else ./tether-data when neither variable is set.
std::string default_data_dir();

// The runtime kinds a profile may name, the default ("native") first.
std::vector<std::string_view> runtime_kinds();

// The defaults merged with `toml_text`. util_errc::invalid_argument with the
// line, or the key, on any error.
result<settings> parse(std::string_view toml_text);

// Reads `file`, else the file TETHER_CONFIG names, else returns the defaults.
result<settings> load(const std::optional<std::filesystem::path>& file);

}  // namespace tether::config
