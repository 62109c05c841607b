#include "env/ssh/command.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "env/errors.h"
#include "util/random.h"

namespace tether::env::ssh {

std::string new_command_id() {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch()).count();
  char stamp[32];
  std::snprintf(stamp, sizeof stamp, "c%013lld-", static_cast<long long>(ms));
  return stamp + random_hex(3);
}

std::string quote(std::string_view s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  q += '\'';
  return q;
}

namespace {

bool is_id(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
    if (!ok) return false;
  }
  return true;
}

bool is_name(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

// argv[0] in the journal: one line, no NUL.
std::string one_line(std::string_view s) {
  std::string out;
  for (char c : s) out += (c == '\n' || c == '\r' || c == '\0') ? '?' : c;
  return out;
}

}  // namespace

result<std::string> remote_command(const remote_spec& spec) {
  if (spec.argv.empty() || spec.argv[0].empty()) return error(env_errc::invalid, "a remote command needs argv[0]");
  if (spec.argv[0].find('=') != std::string::npos) {
    return error(env_errc::invalid, "a remote program's name may not contain '=': " + spec.argv[0]);
  }
  if (!is_id(spec.id)) return error(env_errc::invalid, "a command id is [A-Za-z0-9-]+: " + spec.id);
  for (const auto& v : spec.env) {
    const auto eq = v.find('=');
    if (eq == std::string::npos || !is_name(std::string_view(v).substr(0, eq))) {
      return error(env_errc::invalid, "not an environment variable (NAME=value): " + v.substr(0, 64));
    }
  }
  const std::string j = quote(spec.journal + "/" + spec.id);
  // The shell outlives a signal to its group (a no-op trap, reset to the
  // default in the command by exec), so it records the command's status.
  const std::string& name = spec.label.empty() ? spec.argv[0] : spec.label;
  std::string line = "trap : TERM INT HUP; J=" + j + "; printf '%s %s\\n' \"$$\" " + quote(one_line(name)) +
                     " > \"$J.pid\" || exit 125; ";
  line += "cd -- " + quote(spec.cwd.empty() ? "." : spec.cwd) +
          " || { echo 126 > \"$J.exit\"; exit 126; }; ";
  line += "env -i --";
  for (const auto& v : spec.env) line += ' ' + quote(v);
  line += " TETHER_COMMAND_ID=" + spec.id;  // an id is [A-Za-z0-9-]: a word as it is
  for (const auto& a : spec.argv) line += ' ' + quote(a);
  line += "; rc=$?; printf '%s\\n' \"$rc\" > \"$J.exit\"; exit \"$rc\"";
  return line;
}

result<std::string> signal_command(std::string_view journal, const std::string& id, int sig) {
  std::string name;
  switch (sig) {
    case SIGTERM: name = "TERM"; break;
    case SIGKILL: name = "KILL"; break;
    case SIGINT: name = "INT"; break;
    case SIGHUP: name = "HUP"; break;
    case SIGQUIT: name = "QUIT"; break;
    case SIGUSR1: name = "USR1"; break;
    case SIGUSR2: name = "USR2"; break;
    default: return error(env_errc::invalid, "signal " + std::to_string(sig) + " cannot be sent to a remote command");
  }
  if (!is_id(id)) return error(env_errc::invalid, "not a command id: " + id);
  const std::string pid_file = quote(std::string(journal) + "/" + id + ".pid");
  // Its descendants are listed first (a child of any of their threads, in
  // any process group or session: an agent's tool may start its own), and
  // every process that carries its TETHER_COMMAND_ID (one left to init when
  // its parent died); then its group and every one of them get the signal.
  return "[ -e " + pid_file + " ] || { echo tether:unknown; exit 0; }; read -r pid prog < " + pid_file +
         "; all=; d=$pid; while [ -n \"$d\" ]; do n=; for p in $d; do n=\"$n $(cat /proc/$p/task/*/children "
         "2>/dev/null)\"; done; d=$(echo $n); all=\"$all $d\"; done; all=\"$all $(grep -lzx "
         "TETHER_COMMAND_ID=" + id + " /proc/[0-9]*/environ 2>/dev/null | sed 's#^/proc/##; s#/environ$##')\"; kill -s " +
         name +
         " -- -\"$pid\" 2>/dev/null; kill -s " + name + " \"$pid\" $all 2>/dev/null; echo tether:sent";
}

std::string free_kib(const std::string& path) {
  return "$(set -- $(df -Pk " + path + " 2>/dev/null | tail -n 1); echo \"$4\")";
}

std::vector<std::string> marked_lines(std::string_view output) {
  std::vector<std::string> lines;
  std::size_t at = 0;
  while (at < output.size()) {
    auto end = output.find('\n', at);
    if (end == std::string_view::npos) end = output.size();
    auto line = output.substr(at, end - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.rfind("tether:", 0) == 0) lines.emplace_back(line.substr(7));
    at = end + 1;
  }
  return lines;
}

result<journaled> journal_spawn(const process::spawn_options& o, std::string_view journal,
                                const std::string& default_cwd, const std::string& default_path) {
  std::vector<std::string> env = o.env;
  bool has_path = false;
  for (const auto& v : env) has_path = has_path || v.rfind("PATH=", 0) == 0;
  if (!has_path) env.push_back("PATH=" + default_path);
  journaled j{new_command_id(), {}};
  auto line = remote_command({.journal = std::string(journal), .id = j.id,
                              .cwd = o.cwd.empty() ? default_cwd : o.cwd.string(), .env = env, .argv = o.argv,
                              .label = o.label});
  if (!line) return line.error();
  j.line = std::move(*line);
  return j;
}

result<process::spawned> relays::spawn(const process::spawn_options& o, std::vector<std::string> argv,
                                       std::vector<std::string> env, const std::string& id) {
  process::spawn_options local = o;
  local.argv = std::move(argv);
  local.env = std::move(env);
  local.cwd.clear();
  local.sandbox.reset();
  auto s = process::system_spawner().spawn(local);
  if (!s) return s;
  std::lock_guard lock(mu_);
  ids_[s->pid] = id;
  return s;
}

std::optional<std::string> relays::id_of(pid_t relay) const {
  std::lock_guard lock(mu_);
  auto it = ids_.find(relay);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

std::vector<command_record> parse_journal(std::string_view listing) {
  std::vector<command_record> records;
  std::istringstream in{std::string(listing)};
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    command_record r;
    std::string state, code;
    if (!(words >> r.id >> state >> code)) continue;
    std::getline(words >> std::ws, r.program);
    if (state == "exited") {
      r.status = command_record::state::exited;
      r.exit_code = std::atoi(code.c_str());
    } else if (state == "running") {
      r.status = command_record::state::running;
    }
    records.push_back(std::move(r));
  }
  return records;
}

std::string journal_listing(std::string_view journal) {
  return "cd -- " + quote(journal) +
         " 2>/dev/null || exit 0; for p in *.pid; do [ -e \"$p\" ] || continue; id=${p%.pid}; "
         "read -r pid prog < \"$p\"; "
         "if [ -e \"$id.exit\" ]; then printf '%s exited %s %s\\n' \"$id\" \"$(cat \"$id.exit\")\" \"$prog\"; "
         "elif kill -0 \"$pid\" 2>/dev/null; then printf '%s running - %s\\n' \"$id\" \"$prog\"; "
         "else printf '%s indeterminate - %s\\n' \"$id\" \"$prog\"; fi; done";
}

std::string stamp_script(const std::string& workspace) {
  return "cd " + quote(workspace) +
         " || exit 3; l=$(find . -mindepth 1 -printf '%P\\t%y\\t%i\\t%m\\t%s\\t%T@\\t%l\\n') || exit 4; "
         "printf '%s\\n' \"$l\" | LC_ALL=C sort | sha256sum | { read -r h _; echo \"tether:stamp $h\"; }";
}

result<std::string> parse_stamp(std::string_view output) {
  for (const auto& line : marked_lines(output))
    if (line.rfind("stamp ", 0) == 0 && line.size() == 6 + 64) return line.substr(6);
  return error(env_errc::failed, "the workspace's stamp was not printed");
}

}  // namespace tether::env::ssh
