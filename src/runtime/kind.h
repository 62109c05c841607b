// runtime::kind — one runtime kind as a plug-in: its name, what the
// configuration reads for its profiles (config::kind_keys: keys, reader,
// official base URL), the agent program it drives, and the factory that
// builds a profile's runtime from what the node lends (kind_host).
//
// The kinds are listed once, in runtime/kinds.cpp, the one file that names
// them; the node asks that list for the configuration's readers
// (config_kinds()) and for each profile's factory (find_kind()).
//
//   auto settings = config::load(file, runtime::config_kinds());
//   const auto* k = runtime::find_kind(profile.runtime);
//   auto rt = k->make(profile, host);   // result<std::unique_ptr<session::runtime>>
//
// A new kind is a descriptor built where its runtime lives (a
// `*_kind(name, …)` function beside its settings) plus one line in
// kinds.cpp.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/any_io_executor.hpp>

#include "config/config.h"
#include "session/runtime.h"
#include "util/result.h"

namespace tether::work {
class agent_tools;
}

namespace tether::runtime::agent {
class tool_bridge;
class model_relay;
namespace portable {
class state_keeper;
}
}  // namespace tether::runtime::agent

namespace tether::runtime {

class price_table;  // runtime/common/pricing.h

// What a node lends the kinds' factories: its executor, data directory,
// prices and secrets, and the services it starts on first use (the scripted
// model, the tool bridge, the model relay). node.cpp implements it; it
// outlives every runtime built with it.
class kind_host {
 public:
  virtual ~kind_host() = default;

  virtual boost::asio::any_io_executor executor() = 0;
  [[nodiscard]] virtual const std::filesystem::path& data_dir() const = 0;
  [[nodiscard]] virtual const price_table& prices() const = 0;
  virtual work::agent_tools* work_tools() = 0;
  // Every profile's api_key_env: never passed to a tool or an agent.
  [[nodiscard]] virtual const std::vector<std::string>& withheld() const = 0;
  // What no sandboxed child may read (node/masks.h).
  [[nodiscard]] virtual const std::vector<std::filesystem::path>& secrets() const = 0;
  // Where sessions' workspaces may lie (config: workspace_roots, or the defaults).
  [[nodiscard]] virtual std::vector<std::filesystem::path> workspace_roots() const = 0;
  // The value of the profile's api_key_env: "" when it names none, else
  // util_errc::invalid_argument when the variable is not set.
  virtual result<std::string> model_key(const config::profile& p) = 0;
  // The built-in scripted model's base URL (".../v1"), started on first use.
  virtual result<std::string> scripted_base_url() = 0;
  // bubblewrap when it runs here (probed once); else nullopt and `why`.
  virtual std::optional<std::filesystem::path> bubblewrap(std::string& why) = 0;
  virtual result<agent::tool_bridge*> tool_bridge() = 0;
  virtual result<agent::model_relay*> model_relay() = 0;
  // Where agent programs' own session state is kept (the node's store).
  virtual agent::portable::state_keeper* agent_states() = 0;
};

using kind_factory =
    std::function<result<std::unique_ptr<session::runtime>>(const config::profile& p, kind_host& host)>;

struct kind {
  config::kind_keys config;  // name, keys and reader, official base URL
  std::string program;       // the agent program it drives (runtime/agent/programs.h); "" for native
  kind_factory make;
};

// Every kind, the default ("native") first.
const std::vector<kind>& kinds();
// The kind called `name`, or nullptr.
const kind* find_kind(std::string_view name);
// What the configuration reads with (config::parse, config::load).
std::span<const config::kind_keys> config_kinds();

}  // namespace tether::runtime
