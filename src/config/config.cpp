#include "config/config.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "config/toml_table.h"
#include "util/errors.h"

namespace tether::config {

namespace {

// The provider name of the built-in scripted model.
constexpr std::string_view scripted_provider = "scripted";

tether::error bad(std::string message) {
  return make_error(util_errc::invalid_argument, "config: " + std::move(message));
}

profile default_profile(std::span<const kind_keys> kinds) {
  profile p;
  p.name = "default";
  if (!kinds.empty()) {
    p.runtime = kinds.front().name;
    p.kind = &kinds.front();
  }
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

// Reads the common keys the kind takes into the profile; then the kind reads its own.
result<void> read_common(profile& p, const table_reader& t, const std::set<std::string_view>& keys) {
  const auto takes = [&](std::string_view key) { return keys.contains(key); };
  if (takes("provider")) {
    auto provider = t.text("provider", "");
    if (!provider) return provider.error();
    p.provider = *provider;
  }
  if (takes("base_url")) {
    auto url = t.url("base_url");
    if (!url) return url.error();
    p.base_url = *url;
  }
  if (takes("model")) {
    auto model = t.text("model", p.model);
    if (!model) return model.error();
    p.model = *model;
  }
  if (takes("api_key_env")) {
    auto key_env = t.text("api_key_env", "");
    if (!key_env) return key_env.error();
    if (!key_env->empty() && !is_variable_name(*key_env)) return t.bad("api_key_env", " must be a variable name");
    p.api_key_env = *key_env;
  }
  if (takes("ca_file")) {
    auto ca_file = t.absolute_path("ca_file");
    if (!ca_file) return ca_file.error();
    p.ca_file = *ca_file;
  }
  if (takes("env")) {
    auto names = t.variable_names("env");
    if (!names) return names.error();
    p.env = std::move(*names);
  }
  return ok();
}

result<profile> read_profile(std::string name, const toml::table& table, std::span<const kind_keys> kinds) {
  const std::string where = "profiles." + name;
  const detail::toml_table raw{table};  // outlives the reader, which refers to it
  const table_reader t(raw, where);
  profile p;
  p.name = std::move(name);
  auto runtime = text(table, where, "runtime", kinds.empty() ? p.runtime : kinds.front().name);
  if (!runtime) return runtime.error();
  const auto kind = std::find_if(kinds.begin(), kinds.end(), [&](const kind_keys& k) { return k.name == *runtime; });
  if (kind == kinds.end()) {
    std::set<std::string_view> known;
    for (const auto& k : kinds) known.insert(k.name);
    return bad(fmt::format("{}.runtime: \"{}\" is not a runtime (known: {})", where, *runtime, listed(known)));
  }
  p.runtime = *runtime;
  p.kind = &*kind;
  std::set<std::string_view> keys(kind->keys.begin(), kind->keys.end());
  keys.insert("runtime");
  keys.insert("environment");
  TETHER_TRY(only_keys(table, where, keys, fmt::format(" for runtime \"{}\"", kind->name)));
  TETHER_TRY(read_common(p, t, keys));
  auto environment = t.text("environment", p.environment);
  if (!environment) return environment.error();
  p.environment = *environment;
  if (kind->read) {
    TETHER_TRY(kind->read(p, t));
  }
  // The scripted model answers only when chosen, or when nothing about the
  // model is configured; a named provider or model is the real one.
  if (p.provider == scripted_provider) {
    if (!p.base_url.empty()) return bad(fmt::format("{}.base_url: provider \"scripted\" takes none", where));
    p.scripted_model = true;
  } else if (!p.provider.empty() || table.contains("base_url") || table.contains("model")) {
    auto real = use_provider(p);
    if (!real) return bad(fmt::format("{}.model: {}", where, real.error().message));
  }
  return p;
}

result<double> read_price(const toml::table& entry, std::string_view model, std::string_view key) {
  const auto* node = entry.get(key);
  if (node == nullptr) return bad(fmt::format("prices: \"{}\" has no {}", model, key));
  std::optional<double> v = node->value<double>();  // integers convert too
  // TOML has inf and nan: a price must be a finite number (an infinite one
  // would make every cost infinite, which no event can store).
  if (!v || !(*v >= 0) || !std::isfinite(*v))
    return bad(fmt::format("prices: \"{}\".{} must be a non-negative finite number", model, key));
  return *v;
}

result<std::map<std::string, price, std::less<>>> read_prices(const toml::table& doc) {
  std::map<std::string, price, std::less<>> out;
  const auto* prices_node = doc.get("prices");
  if (prices_node == nullptr) return out;
  const auto* prices = prices_node->as_table();
  if (prices == nullptr) return bad("prices: [prices] must be a table of models");
  for (const auto& [key, node] : *prices) {
    const std::string model(key.str());
    const auto* entry = node.as_table();
    if (entry == nullptr || model.empty())
      return bad(fmt::format("prices: \"{}\" must be a table: [prices.\"{}\"] input = …, output = …", model, model));
    for (const auto& [field, value] : *entry) {
      (void)value;
      if (field.str() != "input" && field.str() != "output" && field.str() != "cached_input")
        return bad(
            fmt::format("prices: \"{}\" has an unknown key \"{}\" (input, output, cached_input)", model, field.str()));
    }
    auto input = read_price(*entry, model, "input");
    if (!input) return input.error();
    auto output = read_price(*entry, model, "output");
    if (!output) return output.error();
    double cached = *input;
    if (entry->contains("cached_input")) {
      auto c = read_price(*entry, model, "cached_input");
      if (!c) return c.error();
      cached = *c;
    }
    out[model] = price{*input, *output, cached};
  }
  return out;
}

// A non-negative finite number of an environment's price table.
result<double> env_price_value(const toml::table& t, std::string_view where, std::string_view key) {
  const auto* node = t.get(key);
  if (node == nullptr) return 0.0;
  std::optional<double> v = node->value<double>();
  if (!v || !(*v >= 0) || !std::isfinite(*v)) return bad(fmt::format("{}.{} must be a non-negative finite number", where, key));
  return *v;
}

result<env_price> read_env_price(const toml::table& t, std::string_view where) {
  TETHER_TRY(only_keys(t, where, {"cpu_hour", "memory_gib_hour", "disk_gib_hour", "source", "date"}));
  env_price price;
  auto cpu = env_price_value(t, where, "cpu_hour");
  if (!cpu) return cpu.error();
  auto memory = env_price_value(t, where, "memory_gib_hour");
  if (!memory) return memory.error();
  auto disk = env_price_value(t, where, "disk_gib_hour");
  if (!disk) return disk.error();
  auto source = text(t, where, "source", "");
  if (!source) return source.error();
  auto date = text(t, where, "date", "");
  if (!date) return date.error();
  return env_price{*cpu, *memory, *disk, *source, *date};
}

constexpr std::string_view local_environment = "local";

result<environment_settings> read_environment(std::string name, const toml::table& table,
                                              std::span<const env_kind_keys> kinds) {
  const std::string where = "environments." + name;
  if (name == local_environment) return bad(where + ": \"local\" is built in (this machine) and takes no table");
  const detail::toml_table raw{table};
  const table_reader t(raw, where);
  environment_settings e;
  e.name = std::move(name);
  std::set<std::string_view> known;
  for (const auto& k : kinds) known.insert(k.name);
  auto kind_name = text(table, where, "kind", "");
  if (!kind_name) return kind_name.error();
  const auto kind = std::find_if(kinds.begin(), kinds.end(), [&](const env_kind_keys& k) { return k.name == *kind_name; });
  if (kind == kinds.end() || kind->name == local_environment) {
    return bad(fmt::format("{}.kind: \"{}\" is not an environment kind (known: {})", where, *kind_name, listed(known)));
  }
  e.kind = kind->name;
  e.kind_keys = &*kind;
  std::set<std::string_view> keys(kind->keys.begin(), kind->keys.end());
  for (std::string_view k : {"kind", "keep_warm_ms", "price"}) keys.insert(k);
  TETHER_TRY(only_keys(table, where, keys, fmt::format(" for kind \"{}\"", kind->name)));
  auto keep = integer(table, where, "keep_warm_ms", e.keep_warm_ms, 0);
  if (!keep) return keep.error();
  e.keep_warm_ms = *keep;
  if (const auto* node = table.get("price")) {
    const auto* price = node->as_table();
    if (price == nullptr) return bad(where + ".price must be a table");
    auto p = read_env_price(*price, where + ".price");
    if (!p) return p.error();
    e.price = std::move(*p);
  }
  if (kind->read) {
    TETHER_TRY(kind->read(e, t));
  }
  return e;
}

result<void> read_environments(const toml::table& doc, std::span<const env_kind_keys> kinds, settings& s) {
  for (const auto& k : kinds) {
    if (k.name == local_environment) {
      environment_settings local;
      local.name = std::string(local_environment);
      local.kind = std::string(local_environment);
      local.kind_keys = &k;
      s.environments[local.name] = std::move(local);
    }
  }
  const auto* node = doc.get("environments");
  if (node == nullptr) return ok();
  const auto* environments = node->as_table();
  if (environments == nullptr) return bad("[environments] must be a table of environments");
  for (const auto& [key, value] : *environments) {
    const auto* t = value.as_table();
    if (t == nullptr) return bad(fmt::format("environments.{} must be a table", key.str()));
    auto e = read_environment(std::string(key.str()), *t, kinds);
    if (!e) return e.error();
    s.environments[e->name] = std::move(*e);
  }
  return ok();
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

std::string official_base_url(const profile& p) {
  return p.kind != nullptr && p.kind->official_base_url ? p.kind->official_base_url(p) : std::string();
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
  if (p.base_url.empty()) return ok();  // the agent's own model
  if (p.model.empty() || p.model == "scripted")
    return make_error(util_errc::invalid_argument,
                      fmt::format("name the model that {} serves (e.g. \"{}\")", p.base_url,
                                  p.base_url.find("anthropic") != std::string::npos ? "claude-sonnet-4-5" : "gpt-5"));
  if (p.api_key_env.empty())
    p.api_key_env = p.base_url.find("anthropic") != std::string::npos ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
  return ok();
}

result<profile> settings::find(std::string_view name) const {
  if (auto it = profiles.find(name); it != profiles.end()) return it->second;
  std::string known;
  for (const auto& [n, p] : profiles) known += (known.empty() ? "" : ", ") + n;
  return bad(fmt::format("no profile \"{}\" (profiles: {})", name, known));
}

result<std::map<std::string, price, std::less<>>> parse_prices(std::string_view toml_text) {
  toml::table doc;
  try {
    doc = toml::parse(toml_text);
  } catch (const toml::parse_error& e) {
    return bad(fmt::format("line {}, column {}: {}", e.source().begin.line, e.source().begin.column, e.description()));
  }
  return read_prices(doc);
}

result<settings> parse(std::string_view toml_text, std::span<const kind_keys> kinds,
                       std::span<const env_kind_keys> env_kinds) {
  toml::table doc;
  try {
    doc = toml::parse(toml_text);
  } catch (const toml::parse_error& e) {
    return bad(fmt::format("line {}, column {}: {}", e.source().begin.line, e.source().begin.column, e.description()));
  }
  TETHER_TRY(only_keys(doc, "the file",
                       {"data_dir", "store", "leases", "profiles", "prices", "workspace_roots", "environments"}));
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
      auto p = read_profile(std::string(key.str()), *t, kinds);
      if (!p) return p.error();
      s.profiles[p->name] = std::move(*p);
    }
  }
  if (!s.profiles.contains("default")) s.profiles["default"] = default_profile(kinds);
  TETHER_TRY(read_environments(doc, env_kinds, s));
  for (const auto& [name, p] : s.profiles) {
    if (p.environment == local_environment || s.environments.contains(p.environment)) continue;
    std::string known;
    for (const auto& [n, e] : s.environments) known += (known.empty() ? "" : ", ") + n;
    return bad(fmt::format("profiles.{}.environment: no environment \"{}\" (environments: {})", name, p.environment,
                           known.empty() ? std::string("local") : known));
  }
  auto prices = read_prices(doc);
  if (!prices) return prices.error();
  s.prices = std::move(*prices);
  return s;
}

result<settings> load(const std::optional<std::filesystem::path>& file, std::span<const kind_keys> kinds,
                      std::span<const env_kind_keys> env_kinds) {
  std::filesystem::path path;
  if (file) {
    path = *file;
  } else if (const char* env = std::getenv("TETHER_CONFIG"); env != nullptr && *env != '\0') {
    path = env;
  } else {
    return parse("", kinds, env_kinds);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return bad("cannot read " + path.string());
  const std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto s = parse(content, kinds, env_kinds);
  if (!s) return make_error(util_errc::invalid_argument, path.string() + ": " + s.error().message);
  return s;
}

}  // namespace tether::config
