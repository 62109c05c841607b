#include "config/config.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "util/errors.h"

namespace tether::config {

namespace {

// The provider name of the built-in scripted model.
constexpr std::string_view scripted_provider = "scripted";

tether::error bad(std::string message) {
  return make_error(util_errc::invalid_argument, "config: " + std::move(message));
}

profile default_profile() {
  profile p;
  p.name = "default";
  return p;
}

std::string listed(const std::set<std::string_view>& names) {
  std::string list;
  for (const auto n : names) list += (list.empty() ? "" : ", ") + std::string(n);
  return list;
}

// `what` names the table's kind in the message ("" for none).
result<void> only_keys(const toml::table& t, std::string_view where, const std::set<std::string_view>& known,
                       std::string_view what = {}) {
  for (const auto& [key, value] : t) {
    (void)value;
    if (!known.contains(key.str()))
      return bad(fmt::format("{}: unknown key \"{}\"{} (known: {})", where, key.str(), what, listed(known)));
  }
  return ok();
}

result<std::string> text(const toml::table& t, std::string_view where, std::string_view key, std::string fallback) {
  const auto* node = t.get(key);
  if (node == nullptr) return fallback;
  auto v = node->value<std::string>();
  if (!v) return bad(fmt::format("{}.{} must be a string", where, key));
  return *v;
}

result<std::int64_t> integer(const toml::table& t, std::string_view where, std::string_view key, std::int64_t fallback,
                             std::int64_t min) {
  const auto* node = t.get(key);
  if (node == nullptr) return fallback;
  if (!node->is_integer()) return bad(fmt::format("{}.{} must be an integer", where, key));
  const auto v = node->value<std::int64_t>().value_or(0);
  if (v < min) return bad(fmt::format("{}.{} must be at least {}", where, key, min));
  return v;
}

bool is_variable_name(std::string_view n) {
  if (n.empty() || (n[0] >= '0' && n[0] <= '9')) return false;
  for (const char c : n)
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

// sandbox, network and env: what the bash tool can reach.
result<void> read_tool_settings(profile& p, const toml::table& t, const std::string& where) {
  auto sandbox = text(t, where, "sandbox", std::string(runtime::native::to_string(p.sandbox)));
  if (!sandbox) return sandbox.error();
  const auto mode = runtime::native::parse_sandbox_mode(*sandbox);
  if (!mode || *mode == runtime::native::sandbox_mode::contain)
    return bad(
        fmt::format("{}.sandbox: \"{}\" is not a sandbox mode (workspace-write, read-only, off)", where, *sandbox));
  p.sandbox = *mode;
  if (const auto* node = t.get("network")) {
    if (!node->is_boolean()) return bad(fmt::format("{}.network must be true or false", where));
    p.network = node->value<bool>().value_or(false);
  }
  if (const auto* node = t.get("env")) {
    const auto* list = node->as_array();
    if (list == nullptr) return bad(fmt::format("{}.env must be an array of variable names", where));
    for (const auto& item : *list) {
      const auto name = item.value<std::string>();
      if (!name || !is_variable_name(*name))
        return bad(fmt::format("{}.env: every entry must be a variable name (letters, digits, _)", where));
      p.env.push_back(*name);
    }
  }
  return ok();
}

// The keys of a native profile (Tether's own agent loop over a provider).
result<void> read_native(profile& p, const toml::table& t, const std::string& where) {
  auto provider = text(t, where, "provider", "openai-chat");
  if (!provider) return provider.error();
  auto api = parse_provider(*provider);
  if (!api) return bad(fmt::format("{}.provider: {}", where, api.error().message));
  if (*api) p.provider = **api;
  auto base_url = text(t, where, "base_url", "");
  if (!base_url) return base_url.error();
  p.base_url = *base_url;
  if (!p.base_url.empty() && !p.base_url.starts_with("http://") && !p.base_url.starts_with("https://"))
    return bad(fmt::format("{}.base_url must start with http:// or https://", where));
  auto model = text(t, where, "model", p.model);
  if (!model) return model.error();
  p.model = *model;
  auto key_env = text(t, where, "api_key_env", "");
  if (!key_env) return key_env.error();
  p.api_key_env = *key_env;
  auto ca_file = text(t, where, "ca_file", "");
  if (!ca_file) return ca_file.error();
  p.ca_file = *ca_file;
  if (!p.ca_file.empty() && !std::filesystem::path(p.ca_file).is_absolute())
    return bad(fmt::format("{}.ca_file: \"{}\" is not an absolute path", where, p.ca_file));
  auto steps = integer(t, where, "max_steps", p.max_steps, 1);
  if (!steps) return steps.error();
  p.max_steps = static_cast<int>(std::min<std::int64_t>(*steps, 100'000));
  auto window = integer(t, where, "context_window", p.context_window, 1'000);
  if (!window) return window.error();
  p.context_window = *window;
  auto instructions = text(t, where, "instructions", "");
  if (!instructions) return instructions.error();
  p.instructions = *instructions;
  return read_tool_settings(p, t, where);
}

result<std::vector<std::string>> string_list(const toml::table& t, std::string_view where, std::string_view key) {
  std::vector<std::string> out;
  const auto* node = t.get(key);
  if (node == nullptr) return out;
  const auto* list = node->as_array();
  if (list == nullptr) return bad(fmt::format("{}.{} must be an array of strings", where, key));
  for (const auto& item : *list) {
    const auto v = item.value<std::string>();
    if (!v) return bad(fmt::format("{}.{} must be an array of strings", where, key));
    out.push_back(*v);
  }
  return out;
}

// The keys of the agent-program kinds; `wire` only where the program lets
// one choose (checked by the kind's key set).
result<void> read_agent(profile& p, const toml::table& t, const std::string& where) {
  auto& a = p.agent;
  for (auto [key, field] : {std::pair{"base_url", &p.base_url},
                            {"api_key_env", &p.api_key_env},
                            {"command", &a.command},
                            {"wire", &a.wire}}) {
    auto v = text(t, where, key, *field);
    if (!v) return v.error();
    *field = *v;
  }
  // The agent's provider follows from the program (and its wire); only the
  // scripted model can be named.
  auto provider = text(t, where, "provider", std::string(scripted_provider));
  if (!provider) return provider.error();
  if (*provider != scripted_provider)
    return bad(
        fmt::format("{}.provider: \"{}\": an agent profile takes only \"scripted\" (its provider follows from "
                    "the program; base_url points it elsewhere)",
                    where, *provider));
  if (!p.base_url.empty() && !p.base_url.starts_with("http://") && !p.base_url.starts_with("https://"))
    return bad(fmt::format("{}.base_url must start with http:// or https://", where));
  if (!p.api_key_env.empty() && !is_variable_name(p.api_key_env))
    return bad(fmt::format("{}.api_key_env must be a variable name", where));
  if (!a.wire.empty() && a.wire != "chat" && a.wire != "responses" && a.wire != "messages")
    return bad(fmt::format("{}.wire: \"{}\" is not a wire format (chat, responses, messages)", where, a.wire));
  auto model = text(t, where, "model", p.model);
  if (!model) return model.error();
  p.model = *model;
  auto perms = text(t, where, "permissions", std::string(to_string(a.permissions)));
  if (!perms) return perms.error();
  if (*perms == "approve-all") {
    a.permissions = agent_permissions::approve_all;
  } else if (*perms == "approve-reads") {
    a.permissions = agent_permissions::approve_reads;
  } else if (*perms == "deny-all") {
    a.permissions = agent_permissions::deny_all;
  } else {
    return bad(fmt::format("{}.permissions: \"{}\" is not one of approve-all, approve-reads, deny-all", where, *perms));
  }
  auto network = text(t, where, "network", std::string(to_string(a.network)));
  if (!network) return network.error();
  if (*network == "relay-only") {
    a.network = agent_network::relay_only;
  } else if (*network == "full") {
    a.network = agent_network::full;
  } else {
    return bad(fmt::format("{}.network: \"{}\" is not one of relay-only, full", where, *network));
  }
  auto ca_file = text(t, where, "ca_file", "");
  if (!ca_file) return ca_file.error();
  p.ca_file = *ca_file;
  if (!p.ca_file.empty() && !std::filesystem::path(p.ca_file).is_absolute())
    return bad(fmt::format("{}.ca_file: \"{}\" is not an absolute path", where, p.ca_file));
  auto args = string_list(t, where, "args");
  if (!args) return args.error();
  a.args = std::move(*args);
  auto names = string_list(t, where, "env");
  if (!names) return names.error();
  for (const auto& n : *names)
    if (!is_variable_name(n))
      return bad(fmt::format("{}.env: every entry must be a variable name (letters, digits, _)", where));
  p.env = std::move(*names);
  if (const auto* node = t.get("set_env")) {
    const auto* table = node->as_table();
    if (table == nullptr) return bad(fmt::format("{}.set_env must be a table of NAME = \"value\"", where));
    for (const auto& [key, value] : *table) {
      const auto v = value.value<std::string>();
      if (!v || !is_variable_name(key.str()))
        return bad(fmt::format("{}.set_env must be a table of NAME = \"value\"", where));
      a.set_env.emplace(std::string(key.str()), *v);
    }
  }
  auto idle = integer(t, where, "idle_timeout_ms", a.idle_timeout_ms, 100);
  if (!idle) return idle.error();
  a.idle_timeout_ms = *idle;
  // Only the warm kinds take these (only_keys refuses them elsewhere).
  auto keep = integer(t, where, "keep_alive_ms", a.keep_alive_ms, 100);
  if (!keep) return keep.error();
  a.keep_alive_ms = *keep;
  auto most = integer(t, where, "max_processes", a.max_processes, 1);
  if (!most) return most.error();
  a.max_processes = *most;
  return ok();
}

// The generic ACP kind runs whatever agent `command` names.
result<void> read_acp(profile& p, const toml::table& t, const std::string& where) {
  TETHER_TRY(read_agent(p, t, where));
  if (p.agent.command.empty())
    return bad(fmt::format("{}.command: runtime \"acp\" needs the ACP agent's command", where));
  return ok();
}

// One row per runtime kind a profile may name: the keys its profiles take
// besides `runtime`, and how they are read. A kind brings its own key set,
// so a key of another kind (or a typo) is refused by name. The first row is
// the default.
struct runtime_kind {
  std::string_view name;
  std::set<std::string_view> keys;
  result<void> (*read)(profile& p, const toml::table& t, const std::string& where);
};

const std::set<std::string_view> agent_keys{"command", "model",    "base_url",        "api_key_env", "permissions",
                                            "args",    "env",      "set_env",         "idle_timeout_ms",
                                            "provider", "network", "ca_file"};

std::set<std::string_view> with(std::set<std::string_view> keys, std::string_view key) {
  keys.insert(key);
  return keys;
}

const std::set<std::string_view> warm_keys = with(with(agent_keys, "keep_alive_ms"), "max_processes");

const std::vector<runtime_kind>& runtime_kind_table() {
  static const std::vector<runtime_kind> kinds{
      {"native",
       {"provider", "base_url", "model", "api_key_env", "ca_file", "max_steps", "context_window", "sandbox", "network",
        "env", "instructions"},
       read_native},
      {"codex-exec", agent_keys, read_agent},
      {"claude-print", agent_keys, read_agent},
      {"opencode-run", with(agent_keys, "wire"), read_agent},
      {"codex", warm_keys, read_agent},
      {"claude", warm_keys, read_agent},
      {"opencode", with(warm_keys, "wire"), read_agent},
      {"acp", warm_keys, read_acp},
      {"acp-codex", warm_keys, read_agent},
      {"acp-claude", warm_keys, read_agent},
      {"acp-opencode", with(warm_keys, "wire"), read_agent},
  };
  return kinds;
}

result<profile> read_profile(std::string name, const toml::table& t) {
  const std::string where = "profiles." + name;
  profile p;
  p.name = std::move(name);
  auto runtime = text(t, where, "runtime", p.runtime);
  if (!runtime) return runtime.error();
  const auto& kinds = runtime_kind_table();
  const auto kind = std::find_if(kinds.begin(), kinds.end(), [&](const runtime_kind& k) { return k.name == *runtime; });
  if (kind == kinds.end()) {
    std::set<std::string_view> known;
    for (const auto& k : kinds) known.insert(k.name);
    return bad(fmt::format("{}.runtime: \"{}\" is not a runtime (known: {})", where, *runtime, listed(known)));
  }
  p.runtime = *runtime;
  auto keys = kind->keys;
  keys.insert("runtime");
  TETHER_TRY(only_keys(t, where, keys, fmt::format(" for runtime \"{}\"", kind->name)));
  TETHER_TRY(kind->read(p, t, where));
  // The scripted model answers only when chosen, or when nothing about the
  // model is configured; a named provider or model is the real one.
  const auto* provider = t.get("provider");
  if (provider != nullptr && provider->value<std::string>() == scripted_provider) {
    if (!p.base_url.empty()) return bad(fmt::format("{}.base_url: provider \"scripted\" takes none", where));
    p.scripted_model = true;
  } else if (provider != nullptr || t.contains("base_url") || t.contains("model")) {
    auto real = use_provider(p);
    if (!real) return bad(fmt::format("{}.model: {}", where, real.error().message));
  }
  return p;
}

// An array of absolute paths; absent: nullopt (the command's defaults).
result<std::optional<std::vector<std::filesystem::path>>> workspace_roots(const toml::table& doc) {
  const auto* node = doc.get("workspace_roots");
  if (node == nullptr) return std::optional<std::vector<std::filesystem::path>>{};
  const auto* list = node->as_array();
  if (list == nullptr) return bad("workspace_roots must be an array of absolute paths");
  std::vector<std::filesystem::path> out;
  for (const auto& item : *list) {
    const auto v = item.value<std::string>();
    if (!v) return bad("workspace_roots must be an array of absolute paths");
    const std::filesystem::path p(*v);
    if (!p.is_absolute()) return bad(fmt::format("workspace_roots: \"{}\" is not an absolute path", *v));
    out.push_back(p);
  }
  return std::optional<std::vector<std::filesystem::path>>{std::move(out)};
}

}  // namespace

result<std::optional<runtime::native::wire_api>> parse_provider(std::string_view name) {
  if (name == scripted_provider) return std::optional<runtime::native::wire_api>();
  if (const auto api = runtime::native::parse_wire_api(name)) return std::optional(*api);
  return make_error(util_errc::invalid_argument,
                    fmt::format("\"{}\" is not a provider (openai-chat, openai-responses, anthropic, scripted)", name));
}

std::string official_base_url(const profile& p) {
  constexpr std::string_view openai = "https://api.openai.com/v1";
  constexpr std::string_view anthropic = "https://api.anthropic.com";
  const std::string_view kind = p.runtime;
  if (kind == "native")
    return std::string(p.provider == runtime::native::wire_api::anthropic ? "https://api.anthropic.com/v1" : openai);
  if (kind == "claude-print" || kind == "claude" || kind == "acp-claude") return std::string(anthropic);
  if (kind.find("opencode") != std::string_view::npos)
    return p.agent.wire == "messages" ? std::string(anthropic) + "/v1" : std::string(openai);
  if (kind == "acp") return {};  // any agent: its own
  return std::string(openai);    // the codex kinds
}

std::string model_label(const profile& p) {
  if (p.scripted()) return "scripted";
  std::string label = p.model.empty() || p.model == "scripted" ? std::string("the agent's default model") : p.model;
  if (!p.base_url.empty()) label += " at " + p.base_url;
  return label;
}

std::string default_data_dir() {
  const auto set = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v != nullptr && *v == '/' ? std::string(v) : std::string();  // relative values are ignored (the spec)
  };
  if (auto xdg = set("XDG_DATA_HOME"); !xdg.empty()) return xdg + "/tether";
  if (auto home = set("HOME"); !home.empty()) return home + "/.local/share/tether";
  return "tether-data";
}

result<void> use_provider(profile& p) {
  p.scripted_model = false;
  if (!p.base_url.empty()) return ok();
  p.base_url = official_base_url(p);
  if (p.runtime == "acp") return ok();
  if (p.model.empty() || p.model == "scripted")
    return make_error(util_errc::invalid_argument,
                      fmt::format("name the model that {} serves (e.g. \"{}\")", p.base_url,
                                  p.base_url.find("anthropic") != std::string::npos ? "claude-sonnet-4-5" : "gpt-5"));
  if (p.api_key_env.empty())
    p.api_key_env = p.base_url.find("anthropic") != std::string::npos ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
  return ok();
}

std::string_view to_string(agent_network n) { return n == agent_network::full ? "full" : "relay-only"; }

std::string_view to_string(agent_permissions p) {
  switch (p) {
    case agent_permissions::approve_all:
      return "approve-all";
    case agent_permissions::approve_reads:
      return "approve-reads";
    case agent_permissions::deny_all:
      return "deny-all";
  }
  return "approve-all";
}

std::vector<std::string_view> runtime_kinds() {
  std::vector<std::string_view> out;
  for (const auto& k : runtime_kind_table()) out.push_back(k.name);
  return out;
}

result<profile> settings::find(std::string_view name) const {
  if (auto it = profiles.find(name); it != profiles.end()) return it->second;
  std::string known;
  for (const auto& [n, p] : profiles) known += (known.empty() ? "" : ", ") + n;
  return bad(fmt::format("no profile \"{}\" (profiles: {})", name, known));
}

result<settings> parse(std::string_view toml_text) {
  toml::table doc;
  try {
    doc = toml::parse(toml_text);
  } catch (const toml::parse_error& e) {
    return bad(fmt::format("line {}, column {}: {}", e.source().begin.line, e.source().begin.column, e.description()));
  }
  TETHER_TRY(only_keys(doc, "the file", {"data_dir", "store", "leases", "profiles", "prices", "workspace_roots"}));
  settings s;
  auto data_dir = text(doc, "the file", "data_dir", "");
  if (!data_dir) return data_dir.error();
  s.data_dir = *data_dir;
  auto store = text(doc, "the file", "store", "");
  if (!store) return store.error();
  s.store = *store;
  if (const auto* node = doc.get("leases")) {
    const auto* t = node->as_table();
    if (t == nullptr) return bad("[leases] must be a table");
    TETHER_TRY(only_keys(*t, "leases", {"ttl_ms", "renew_ms", "scan_ms"}));
    auto ttl = integer(*t, "leases", "ttl_ms", s.leases.ttl_ms, 500);
    if (!ttl) return ttl.error();
    auto renew = integer(*t, "leases", "renew_ms", *ttl / 3, 100);
    if (!renew) return renew.error();
    if (*renew >= *ttl) return bad("leases.renew_ms must be less than leases.ttl_ms");
    auto scan = integer(*t, "leases", "scan_ms", 0, 0);
    if (!scan) return scan.error();
    s.leases = {*ttl, *renew, *scan};
  }
  auto roots = workspace_roots(doc);
  if (!roots) return roots.error();
  s.workspace_roots = std::move(*roots);
  if (const auto* node = doc.get("profiles")) {
    const auto* profiles = node->as_table();
    if (profiles == nullptr) return bad("[profiles] must be a table of profiles");
    for (const auto& [key, value] : *profiles) {
      const auto* t = value.as_table();
      if (t == nullptr) return bad(fmt::format("profiles.{} must be a table", key.str()));
      auto p = read_profile(std::string(key.str()), *t);
      if (!p) return p.error();
      s.profiles[p->name] = std::move(*p);
    }
  }
  if (!s.profiles.contains("default")) s.profiles["default"] = default_profile();
  auto prices = runtime::native::load_prices(toml_text);
  if (!prices) return prices.error();
  s.prices = std::move(*prices);
  return s;
}

result<settings> load(const std::optional<std::filesystem::path>& file) {
  std::filesystem::path path;
  if (file) {
    path = *file;
  } else if (const char* env = std::getenv("TETHER_CONFIG"); env != nullptr && *env != '\0') {
    path = env;
  } else {
    return parse("");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return bad("cannot read " + path.string());
  const std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto s = parse(content);
  if (!s) return make_error(util_errc::invalid_argument, path.string() + ": " + s.error().message);
  return s;
}

}  // namespace tether::config
