#include "env/kinds.h"

#include <vector>

#include "config/table.h"
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

const std::vector<config::env_kind_keys>& all() {
  static const std::vector<config::env_kind_keys> kinds = {
      {.name = "local", .keys = {}, .read = nullptr},
      {.name = "ssh",
       .keys = {"host", "port", "user", "identity_file", "known_hosts", "remote_root", "remote_path", "control_dir",
                "connect_timeout_ms", "control_persist_ms"},
       .read = read_ssh},
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
  return error(env_errc::invalid, "environment " + s.name + " (kind \"" + s.kind + "\") has no leases");
}

}  // namespace tether::env
