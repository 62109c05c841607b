#include "env/kinds.h"

#include <cstdlib>
#include <tuple>
#include <vector>

#include "config/table.h"
#include "env/daytona/daytona.h"
#include "env/ssh/ssh.h"

namespace tether::env {

namespace {

result<void> read_ssh(config::environment_settings& e, const config::table_reader& t) {
  ssh::ssh_options o;
  o.name = e.name;
  auto text = [&](std::string_view key, std::string& into, bool required) -> result<void> {
    auto v = t.text(key, into);
    if (!v) return v.error();
    if (required && v->empty()) return t.bad(key, " is required for kind \"ssh\"");
    into = *v;
    return {};
  };
  auto path = [&](std::string_view key, std::filesystem::path& into, bool required) -> result<void> {
    auto v = t.absolute_path(key);
    if (!v) return v.error();
    if (required && v->empty()) return t.bad(key, " is required for kind \"ssh\" (an absolute path)");
    if (!v->empty()) into = *v;
    return {};
  };
  if (auto r = text("host", o.host, true); !r) return r;
  if (auto r = text("user", o.user, true); !r) return r;
  if (auto r = path("identity_file", o.identity_file, true); !r) return r;
  if (auto r = path("known_hosts", o.known_hosts, true); !r) return r;
  if (auto r = text("remote_root", o.remote_root, true); !r) return r;
  if (o.remote_root.front() != '/') return t.bad("remote_root", " must be an absolute path on the host");
  if (auto r = text("remote_path", o.remote_path, false); !r) return r;
  if (auto r = path("control_dir", o.control_dir, false); !r) return r;
  auto port = t.integer("port", 22, 1);
  if (!port) return port.error();
  if (*port > 65535) return t.bad("port", " must be 1-65535");
  o.port = static_cast<int>(*port);
  auto connect = t.integer("connect_timeout_ms", 10'000, 1000);
  if (!connect) return connect.error();
  o.connect_timeout = std::chrono::seconds((*connect + 999) / 1000);
  auto persist = t.integer("control_persist_ms", 300'000, 1000);
  if (!persist) return persist.error();
  o.control_persist = std::chrono::seconds((*persist + 999) / 1000);
  e.settings = std::move(o);
  return {};
}

result<void> read_daytona(config::environment_settings& e, const config::table_reader& t) {
  daytona::daytona_options o;
  o.name = e.name;
  auto url = t.url("api_url");
  if (!url) return url.error();
  if (!url->empty()) o.api_url = *url;
  for (auto [key, into] : {std::pair<std::string_view, std::string*>{"api_key_env", &o.api_key_env},
                           {"target", &o.target}, {"snapshot", &o.snapshot}, {"image", &o.image},
                           {"reach_host", &o.reach_host}}) {
    auto v = t.text(key, *into);
    if (!v) return v.error();
    *into = *v;
  }
  if (!config::is_variable_name(o.api_key_env)) return t.bad("api_key_env", " must be a variable name");
  if (!o.snapshot.empty() && !o.image.empty()) return t.bad("image", " and snapshot exclude each other");
  if (o.reach_host.find_first_of(":/ ") != std::string::npos) return t.bad("reach_host", " must be a name or an address");
  auto ca = t.absolute_path("ca_file");
  if (!ca) return ca.error();
  o.ca_file = *ca;
  for (auto [key, into, fallback, min] :
       {std::tuple<std::string_view, std::int64_t*, std::int64_t, std::int64_t>{"cpu", &o.cpu, 0, 0},
        {"memory_gib", &o.memory, 0, 0}, {"disk_gib", &o.disk, 0, 0},
        {"auto_stop_minutes", &o.auto_stop, 15, 0}, {"auto_archive_minutes", &o.auto_archive, 60, 0},
        {"auto_delete_minutes", &o.auto_delete, 7 * 24 * 60, -1}}) {
    auto v = t.integer(key, fallback, min);
    if (!v) return v.error();
    *into = *v;
  }
  auto start = t.integer("start_timeout_ms", 120'000, 1000);
  if (!start) return start.error();
  o.start_timeout = std::chrono::milliseconds(*start);
  e.settings = std::move(o);
  return {};
}

const std::vector<config::env_kind_keys>& all() {
  static const std::vector<config::env_kind_keys> kinds = {
      {.name = "local", .keys = {}, .read = nullptr},
      {.name = "ssh",
       .keys = {"host", "port", "user", "identity_file", "known_hosts", "remote_root", "remote_path", "control_dir",
                "connect_timeout_ms", "control_persist_ms"},
       .read = read_ssh},
      {.name = "daytona",
       .keys = {"api_url", "api_key_env", "target", "reach_host", "snapshot", "image", "ca_file", "cpu", "memory_gib", "disk_gib",
                "auto_stop_minutes", "auto_archive_minutes", "auto_delete_minutes", "start_timeout_ms"},
       .read = read_daytona},
  };
  return kinds;
}

}  // namespace

std::span<const config::env_kind_keys> config_kinds() { return all(); }

result<std::unique_ptr<environment>> make_environment(const config::environment_settings& s) {
  if (s.kind == "ssh") {
    const auto* o = s.kind_settings<ssh::ssh_options>();
    if (o == nullptr) return error(env_errc::invalid, "environment " + s.name + ": its ssh settings were not read");
    return ssh::make_environment(*o);
  }
  if (s.kind == "daytona") {
    const auto* found = s.kind_settings<daytona::daytona_options>();
    if (found == nullptr) return error(env_errc::invalid, "environment " + s.name + ": its daytona settings were not read");
    auto o = *found;
    const char* key = std::getenv(o.api_key_env.c_str());
    o.api_key = key != nullptr ? key : "";
    if (o.api_key.empty()) {
      return error(env_errc::invalid, "environment " + s.name + ": " + o.api_key_env + " is not set (the Daytona API key)");
    }
    std::error_code ec;
    o.relay_program = std::filesystem::read_symlink("/proc/self/exe", ec);  // this tether
    return daytona::make_environment(std::move(o));
  }
  return error(env_errc::invalid, "environment " + s.name + " (kind \"" + s.kind + "\") has no leases");
}

}  // namespace tether::env
