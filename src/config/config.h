// Tether's configuration: one TOML file, every key optional. With no file at
// all the defaults work: one profile, `default`, running the native runtime
// against the built-in scripted model.
//
//   data_dir = "/var/lib/tether"      # where the store, spills and workspaces live
//   workspace_roots = ["/srv/repos"]  # where a session's workspace may be (absolute paths)
//
//   [profiles.default]
//   runtime     = "native"            # the runtime kind (runtime/kinds.h); the keys below are native's
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
// A profile's keys depend on its `runtime`: each kind brings its own key set
// and reader (kind_keys below; the runtime layer's descriptors, listed in
// runtime/kinds.cpp, supply them to parse() and load()), and a key of
// another kind is an error that names it and the kind. An unknown `runtime`
// is an error listing the kinds. The configuration itself knows no kind.
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
// Environments ([environments.NAME], read by the environment kinds the
// env layer lists, env/kinds.h) say where a profile's turns run:
//
//   [environments.build-box]
//   kind = "ssh"                      # an environment kind; "local" is built in (this machine)
//   keep_warm_ms = 300000             # a lease stays warm this long after a turn
//   host = "10.0.0.7"                 # … and the kind's own keys
//   [environments.build-box.price]    # list price, for the runs' estimated runtime cost
//   cpu_hour = 0.0504                 # USD per vCPU-hour
//   memory_gib_hour = 0.0162          # USD per GiB-hour of memory
//   disk_gib_hour = 0.000108          # USD per GiB-hour of disk
//   source = "provider price page"    # where the prices come from
//   date = "2026-12-01"               # and when they were read
//
//   [profiles.remote]
//   environment = "build-box"         # absent: "local"
//
// Environment: TETHER_CONFIG names the file when no path is given.
#pragma once

#include <any>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/table.h"
#include "util/result.h"

namespace tether::config {

struct kind_keys;
struct env_kind_keys;

// A profile: its name and runtime kind, the keys every kind reads the same
// way, then the settings of its kind (`settings`, whatever type the kind's
// reader put there: runtime/native/settings.h, runtime/agent/settings.h).
struct profile {
  std::string name;
  std::string runtime = "native";  // a kind's name
  std::string provider;            // as the file names it: "" (none), "scripted", or a provider of the kind
  std::string base_url;            // the model's API; empty when scripted_model (or an agent's own)
  bool scripted_model = true;      // the built-in scripted model answers
  std::string model = "scripted";
  std::string api_key_env;
  std::string ca_file;              // absolute path of PEM certificates trusted for https; empty: the system's only
  std::vector<std::string> env;     // names of variables tools may see (never a profile's api_key_env)
  std::string environment = "local";  // where its turns run: an [environments.NAME], or "local"
  std::any settings;                // the kind's own settings
  const kind_keys* kind = nullptr;  // the kind that read it (nullptr for a profile built in code)

  [[nodiscard]] bool scripted() const { return scripted_model; }

  // The kind's settings as type T, to change: settings of another type (or
  // none) are replaced by a default T first.
  template <class T>
  T& kind_settings() {
    if (std::any_cast<T>(&settings) == nullptr) settings = T{};
    return *std::any_cast<T>(&settings);
  }
  // The kind's settings as type T; a default T when the profile's kind keeps
  // another type (or none).
  template <class T>
  [[nodiscard]] const T& kind_settings() const {
    static const T fallback{};
    const T* mine = std::any_cast<T>(&settings);
    return mine != nullptr ? *mine : fallback;
  }
};

// What the configuration knows of a runtime kind: its name, the keys its
// profiles take besides `runtime`, how it reads them and where its model is
// by default. The common keys a kind lists (provider, base_url, model,
// api_key_env, ca_file, env) are read into the profile before `read` runs;
// `read` checks what is its own (the provider names it takes, say) and
// fills profile::settings.
struct kind_keys {
  std::string name;
  std::vector<std::string> keys;
  std::function<result<void>(profile&, const table_reader&)> read;
  // The official base URL of the provider the profile talks to; "" when the
  // agent brings its own (then no model needs naming).
  std::function<std::string(const profile&)> official_base_url;
};

// An environment's list price (its [environments.NAME.price] table), USD.
struct env_price {
  double cpu_hour = 0;         // per vCPU-hour
  double memory_gib_hour = 0;  // per GiB-hour of memory
  double disk_gib_hour = 0;    // per GiB-hour of disk
  std::string source;          // where the prices were read
  std::string date;            // when (YYYY-MM-DD)
  bool operator==(const env_price&) const = default;
};

// One [environments.NAME] table: the keys every kind reads alike, then the
// settings of its kind (`settings`, whatever type its reader put there).
struct environment_settings {
  std::string name;
  std::string kind = "local";
  std::int64_t keep_warm_ms = 300'000;  // a lease stays warm this long after a turn
  std::optional<env_price> price;
  std::any settings;                    // the kind's own
  const env_kind_keys* kind_keys = nullptr;

  template <class T>
  [[nodiscard]] const T* kind_settings() const { return std::any_cast<T>(&settings); }
};

// What the configuration knows of an environment kind: its name, the keys
// its tables take besides kind, keep_warm_ms and price, and its reader.
struct env_kind_keys {
  std::string name;
  std::vector<std::string> keys;
  std::function<result<void>(environment_settings&, const table_reader&)> read;
};

// How long a node's claim on a session lasts without renewal, how often it
// renews it, and how often it looks for sessions of dead nodes (0: the
// node's default, 15 s on SQLite, 1 s on a shared store).
struct lease_settings {
  std::int64_t ttl_ms = 30'000;
  std::int64_t renew_ms = 10'000;
  std::int64_t scan_ms = 0;
};

// One model's price from the file's [prices."model"] table, USD per
// million tokens (cached_input defaults to input); the runtimes lay these
// over their shipped table (runtime/common/pricing.h).
struct price {
  double input = 0;
  double output = 0;
  double cached_input = 0;
  bool operator==(const price&) const = default;
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
  std::map<std::string, price, std::less<>> prices;  // the file's, by model name or "prefix*"
  // The file's environments, and "local" (this machine) when the kinds
  // given to parse() include it.
  std::map<std::string, environment_settings, std::less<>> environments;

  // The profile called `name`; util_errc::invalid_argument naming the known
  // ones when there is none.
  [[nodiscard]] result<profile> find(std::string_view name) const;
};

// The official base URL of `p`'s model (its kind's official_base_url; ""
// for a profile without a kind).
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

// The [prices] table of `toml_text`: each model's input and output, and
// cached_input (else input). util_errc::invalid_argument naming the model
// and key on any error.
result<std::map<std::string, price, std::less<>>> parse_prices(std::string_view toml_text);

// The defaults merged with `toml_text`, profiles read by `kinds` (the
// first is the default kind, that of the `default` profile a file without
// one gets), environments by `env_kinds` (none given: a file naming one is
// an error). util_errc::invalid_argument with the line, or the key, on any
// error. `kinds` and `env_kinds` must outlive the settings (profile::kind
// and environment_settings::kind_keys point into them).
result<settings> parse(std::string_view toml_text, std::span<const kind_keys> kinds,
                       std::span<const env_kind_keys> env_kinds = {});

// Reads `file`, else the file TETHER_CONFIG names, else returns the defaults.
result<settings> load(const std::optional<std::filesystem::path>& file, std::span<const kind_keys> kinds,
                      std::span<const env_kind_keys> env_kinds = {});

}  // namespace tether::config
