#include "runtime/agent/agent_env.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "process/child.h"
#include "runtime/agent/agent_runtime.h"
#include "runtime/agent/bridge/tool_bridge.h"
#include "process/records.h"
#include "runtime/agent/errors.h"
#include "runtime/common/sandbox.h"
#include "session/runtime.h"
#include "util/beneath.h"

extern char** environ;

namespace tether::runtime::agent {

namespace fs = std::filesystem;

namespace {

// Stands in for a key when the model needs none (the scripted model):
// every agent refuses to start without one.
constexpr std::string_view placeholder_key = "tether-no-key";

// `rel` beneath the data directory, made where missing and 0700. The agent
// can write in its home: a link it put there is refused, never followed
// (util/beneath.h), so no other directory gets the mode.
result<void> make_private_dir(int data_dir, const fs::path& rel) {
  auto dir = beneath::open_dir(data_dir, rel.string(), beneath::missing_dirs::make, 0700);
  if (!dir) return make_error(agent_errc::io, "cannot create " + rel.string() + ": " + dir.error().message);
  if (::fchmod(dir->get(), 0700) != 0)
    return make_error(agent_errc::io, "cannot set the mode of " + rel.string() + ": " + std::strerror(errno));
  return ok();
}

}  // namespace

result<agent_dirs> prepare_dirs(const fs::path& data_dir, const session_id& s, const std::string& workspace) {
  agent_dirs d;
  const fs::path home = fs::path("agents") / s.str() / "home";
  d.home = data_dir / home;
  std::error_code ec;
  fs::create_directories(data_dir, ec);
  auto root = beneath::open_root(data_dir);
  if (!root) return make_error(agent_errc::io, root.error().message);
  for (const auto& sub : {fs::path(), fs::path(".config"), fs::path(".local/share"), fs::path(".local/state"),
                          fs::path(".cache"), fs::path("tmp")})
    TETHER_TRY(make_private_dir(root->get(), home / sub));
  d.workspace = workspace.empty() ? data_dir / "workspaces" / s.str() : fs::path(workspace);
  fs::create_directories(d.workspace, ec);
  if (ec)
    return make_error(agent_errc::io, "cannot create the workspace " + d.workspace.string() + ": " + ec.message());
  d.workspace = fs::weakly_canonical(d.workspace, ec);
  return d;
}

std::vector<std::string> agent_environment(const agent_options& o, const agent_dirs& dirs,
                                           const std::map<std::string, std::string>& extra,
                                           const std::string& model_key) {
  // The tools' allow-list (runtime/common/sandbox.h): the basics, the
  // pass-through names, HOME; never a withheld name or TETHER_TOKEN.
  runtime::sandbox_policy policy;
  policy.env = o.pass_env;
  policy.withheld = o.withheld;
  std::map<std::string, std::string> env;
  for (const auto& kv : runtime::tool_environment(policy, dirs.home, environ)) {
    const auto eq = kv.find('=');
    env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  env["XDG_CONFIG_HOME"] = (dirs.home / ".config").string();
  env["XDG_DATA_HOME"] = (dirs.home / ".local/share").string();
  env["XDG_STATE_HOME"] = (dirs.home / ".local/state").string();
  env["XDG_CACHE_HOME"] = (dirs.home / ".cache").string();
  env["TMPDIR"] = (dirs.home / "tmp").string();
  for (const auto& [k, v] : o.settings.set_env) env[k] = v;
  for (const auto& [k, v] : extra) env[k] = v;
  if (!o.endpoint.key_variable.empty())
    env[o.endpoint.key_variable] = model_key.empty() ? std::string(placeholder_key) : model_key;
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

relay_ticket open_relay(const agent_options& o, launch_input& in) {
  if (o.relay == nullptr || o.endpoint.base_url.empty()) return {};
  auto t = o.relay->open(relay_upstream{o.endpoint.base_url, o.api_key, o.upstream});
  in.endpoint.base_url = o.relay->local_url(o.endpoint.base_url);
  return t;
}

result<std::unique_ptr<process::child>> spawn_agent(const boost::asio::any_io_executor& ex, const agent_options& o,
                                                    const agent_dirs& dirs, launch l, const relay_ticket& relay) {
  auto argv = std::move(l.argv);
  // Without the relay the agent holds the key itself.
  const bool relayed = relay.open() && o.relay != nullptr;
  const bool relay_only = relayed && o.relay_only && o.bwrap && !l.serves_loopback;
  if (relay_only) {
    std::vector<std::string> wrapped = {o.tether_program.string(), "relay-forward", "--port",
                                        std::to_string(o.relay->port()), "--socket",
                                        o.relay->socket_path().string(), "--"};
    for (auto& a : argv) wrapped.push_back(std::move(a));
    argv = std::move(wrapped);
  }
  process::spawn_options so;
  so.argv = std::move(argv);
  so.env = agent_environment(o, dirs, l.env, relayed ? relay.token() : o.api_key);
  so.cwd = dirs.workspace;
  so.stdin_mode = process::input::pipe;
  so.grace = o.grace;
  so.gate = process::start_gate::gated;
  if (o.bwrap) {
    std::error_code ec;
    process::sandbox box;
    box.mode = process::sandbox_mode::contain;
    box.bwrap = *o.bwrap;
    box.root = dirs.workspace;
    box.network = !relay_only;
    box.hidden = fs::weakly_canonical(o.data_dir, ec);
    box.exposed = {fs::weakly_canonical(dirs.home, ec), dirs.workspace};
    if (o.bridge != nullptr) box.exposed.push_back(o.bridge->socket_path());
    if (relayed) box.exposed.push_back(o.relay->socket_path());
    box.masked = o.masked;
    box.visible = o.visible;
    so.sandbox = std::move(box);
  }
  auto spawned = process::spawn_recorded(so, o.data_dir / "run" / "procs");
  if (!spawned)
    return tether::error(spawned.error().code, "cannot start " + o.program.string() + ": " + spawned.error().message);
  return std::make_unique<process::child>(ex, std::move(spawned).value());
}

void forget_agent(const agent_options& o, pid_t pid) { process::forget_process(o.data_dir / "run" / "procs", pid); }

result<std::unique_ptr<process::child>> spawn_placed_agent(const boost::asio::any_io_executor& ex,
                                                           const agent_options& o, session::turn_place& place,
                                                           const agent_dirs& dirs, launch l, const relay_ticket& relay,
                                                           const std::string& prompt_file) {
  const bool relayed = relay.open() && o.relay != nullptr;
  process::spawn_options so;
  // With a prompt file, stdin is that file, removed once open (a turn's
  // prompt is not left behind there); without one (a warm agent), the pipe.
  const std::string run = prompt_file.empty() ? "exec \"$@\"" : "exec < \"$p\" && rm -f \"$p\" && exec \"$@\"";
  so.argv = {"sh", "-c",
             "h=$1 p=$2; shift 2; (umask 077 && mkdir -p \"$h/tmp\" \"$h/.config\" \"$h/.local/share\" "
             "\"$h/.local/state\" \"$h/.cache\") && " + run,
             "sh", dirs.home.string(), prompt_file.empty() ? std::string("-") : prompt_file};
  for (auto& a : l.argv) so.argv.push_back(std::move(a));
  auto env = agent_environment(o, dirs, l.env, relayed ? relay.token() : o.api_key);
  // PATH, USER and LOGNAME are this machine's: the environment has its own.
  std::erase_if(env, [](const std::string& kv) {
    return kv.rfind("PATH=", 0) == 0 || kv.rfind("USER=", 0) == 0 || kv.rfind("LOGNAME=", 0) == 0;
  });
  so.env = std::move(env);
  so.cwd = dirs.workspace;
  so.stdin_mode = prompt_file.empty() ? process::input::pipe : process::input::null;
  so.grace = o.grace;  // ungated: nothing is recorded here before it runs
  so.label = o.program.filename().string();  // the journal names the agent, not its `sh` wrapper
  auto c = process::child::start(ex, so, place.spawner());
  if (!c)
    return tether::error(c.error().code, "cannot start " + o.program.string() + " in " + place.environment() + ": " +
                                             c.error().message);
  return c;
}

std::string with_authority(const std::string& url, const std::string& authority) {
  const auto scheme = url.find("://");
  if (scheme == std::string::npos) return url;
  const auto start = scheme + 3;
  const auto end = url.find('/', start);
  return url.substr(0, start) + authority + (end == std::string::npos ? std::string() : url.substr(end));
}

namespace {
constexpr std::size_t stderr_tail_lines = 20;
constexpr std::size_t stderr_line_bytes = 500;
}  // namespace

// NOLINTNEXTLINE(cppcoreguidelines-avoid-reference-coroutine-parameters): see the header
boost::asio::awaitable<void> stderr_tail::read(process::child& proc) {
  for (;;) {
    auto line = co_await proc.read_line(process::stream::err, {stderr_line_bytes, process::overlong_line::split});
    if (!line || !*line) break;
    if ((**line).empty()) continue;
    lines_.push_back(std::move(**line));
    if (lines_.size() > stderr_tail_lines) lines_.pop_front();
  }
  done_ = true;
  ended_.cancel();
}

// NOLINTNEXTLINE(cppcoreguidelines-avoid-reference-coroutine-parameters): see the header
boost::asio::awaitable<void> stderr_tail::drain(process::child& proc, std::chrono::milliseconds patience) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
  bool closed = false;
  while (!done_) {
    if (!closed && std::chrono::steady_clock::now() >= deadline) {
      proc.close_output(process::stream::err);
      closed = true;
    }
    ended_.expires_at(closed ? std::chrono::steady_clock::time_point::max() : deadline);
    co_await ended_.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
  }
}

std::string stderr_tail::tail() const {
  std::string out;
  for (const auto& l : lines_) out += (out.empty() ? "" : "\n") + l;
  return out;
}

}  // namespace tether::runtime::agent
